import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError, isNodeId, type GatewayConfig } from '../config/env.ts';

export interface NodeIdentity {
  id: string;
  /** Where the id came from: CG_NODE_ID, the data directory's kept id, or generated just now. */
  source: 'CG_NODE_ID' | 'kept' | 'generated';
  file: string;
}

/**
 * The node's id: CG_NODE_ID when set, otherwise the one kept in CG_DATA_DIR/node-id, generated
 * on the first start (the host name's first label and random hex) and kept, so that a node keeps
 * its id, and with it its temporary folder in the shared storage, across restarts.
 */
export function identifyNode(config: GatewayConfig): NodeIdentity {
  const file = join(config.dataDir, 'node-id');
  if (config.nodeId !== undefined) return { id: config.nodeId, source: 'CG_NODE_ID', file };
  let kept: string | undefined;
  try {
    kept = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (kept !== undefined) {
    if (!isNodeId(kept)) throw new ConfigError(`${file} does not hold a node id (letters, digits, '-' or '_', at most 40): set CG_NODE_ID or remove the file to generate one`);
    return { id: kept, source: 'kept', file };
  }
  const id = generatedNodeId();
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, `${id}\n`, { flag: 'wx', mode: 0o644 });
  return { id, source: 'generated', file };
}

function generatedNodeId(): string {
  const host = (hostname().split('.')[0] ?? '').replace(/[^A-Za-z0-9_-]/g, '').replace(/^[-_]+/, '').slice(0, 24);
  const suffix = randomBytes(4).toString('hex');
  const id = host ? `${host}-${suffix}` : `node-${suffix}`;
  return isNodeId(id) ? id : `node-${suffix}`;
}
