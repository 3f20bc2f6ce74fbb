import type { GatewayConfig } from '../config/env.ts';
import { resolveStoredInstance } from '../domain/imaging/stored-instance-file.ts';

/** The absolute path of a stored instance's file, in the shared DICOM storage folder. */
export function storedFilePath(config: GatewayConfig, storagePath: string): string {
  return resolveStoredInstance(config.dicomStorageDir, storagePath);
}
