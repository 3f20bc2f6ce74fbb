/**
 * Rendering of a stored instance, for every surface that shows images (the DICOMweb origin's
 * /rendered and /thumbnail, the admin app's viewer): the file-size bound checked from the index
 * before any byte is read, then the work handed to the render pool.
 */
import { resolveStoredInstance } from '../stored-instance-file.ts';
import type { RetrievableInstance } from '../query/retrievable.ts';
import { sharedRenderPool, type RenderPool } from './render-pool.ts';
import { CannotRenderError, renderLimits, type RenderedImage, type RenderOptions } from './render-options.ts';

const nativeLittleEndian = new Set(['1.2.840.10008.1.2', '1.2.840.10008.1.2.1']);

export async function renderStoredInstance(
  storageDir: string,
  instance: Pick<RetrievableInstance, 'storagePath' | 'sizeBytes' | 'transferSyntaxUid'>,
  options: RenderOptions,
  pool: RenderPool = sharedRenderPool(),
): Promise<RenderedImage> {
  // Uncompressed little-endian frames are read one at a time (native-frame.ts): no bound on the file.
  if (!nativeLittleEndian.has(instance.transferSyntaxUid) && instance.sizeBytes > renderLimits.maxSourceBytes) {
    throw new CannotRenderError('too-large', `compressed instances over ${renderLimits.maxSourceBytes} bytes are not rendered: retrieve the instance`);
  }
  return pool.render(resolveStoredInstance(storageDir, instance.storagePath), options);
}
