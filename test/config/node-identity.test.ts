import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/env.ts';
import { identifyNode } from '../../src/server/node-identity.ts';

test('CG_DICOM_STORAGE_DIR defaults to the dicom folder of the data directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-node-'));
  assert.equal(loadConfig({ CG_DATA_DIR: dataDir }).dicomStorageDir, join(dataDir, 'dicom'));
  assert.equal(loadConfig({ CG_DATA_DIR: dataDir, CG_DICOM_STORAGE_DIR: '/srv/shared/dicom' }).dicomStorageDir, '/srv/shared/dicom');
});

test('CG_NODE_ID must be a short token that is safe as a file name', () => {
  assert.equal(loadConfig({ CG_NODE_ID: 'node-a_1' }).nodeId, 'node-a_1');
  assert.equal(loadConfig({ CG_NODE_ID: ' ' }).nodeId, undefined);
  for (const bad of ['..', '.', 'a/b', 'a.b', '-a', 'worker-1', 'x'.repeat(41), 'é', 'a b']) {
    assert.throws(() => loadConfig({ CG_NODE_ID: bad }), (error: unknown) => error instanceof ConfigError && /CG_NODE_ID must be/.test(error.message), bad);
  }
});

test('without CG_NODE_ID a node generates an id once and keeps it in its data directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-node-'));
  const first = identifyNode(loadConfig({ CG_DATA_DIR: dataDir }));
  assert.equal(first.source, 'generated');
  assert.match(first.id, /^[A-Za-z0-9][A-Za-z0-9_-]*-[0-9a-f]{8}$/);
  assert.equal(readFileSync(join(dataDir, 'node-id'), 'utf8').trim(), first.id);
  assert.deepEqual(identifyNode(loadConfig({ CG_DATA_DIR: dataDir })), { ...first, source: 'kept' });
  assert.equal(identifyNode(loadConfig({ CG_DATA_DIR: dataDir, CG_NODE_ID: 'east-1' })).id, 'east-1');
  writeFileSync(join(dataDir, 'node-id'), '../../etc\n');
  assert.throws(() => identifyNode(loadConfig({ CG_DATA_DIR: dataDir })), /does not hold a node id/);
});
