import { join } from 'node:path';
import type { GatewayConfig } from '../config/env.ts';

/** The absolute path of a stored instance's file: the index records it relative to the data directory. */
export function storedFilePath(config: GatewayConfig, storagePath: string): string {
  return join(config.dataDir, storagePath);
}
