/**
 * Rendering of a stored instance, for every surface that shows images (the DICOMweb origin's
 * /rendered and /thumbnail, the admin app's viewer): bounds checked before any byte is read,
 * then the work handed to the render pool.
 */
import { resolveStoredInstance } from '../stored-instance-file.ts';
import type { RetrievableInstance } from '../query/retrievable.ts';
import { sharedRenderPool, type RenderPool } from './render-pool.ts';
import { CannotRenderError, renderLimits, type RenderedImage, type RenderOptions } from './render-options.ts';

export async function renderStoredInstance(
  storageDir: string,
  instance: Pick<RetrievableInstance, 'storagePath' | 'sizeBytes'>,
  options: RenderOptions,
  pool: RenderPool = sharedRenderPool(),
): Promise<RenderedImage> {
  if (instance.sizeBytes > renderLimits.maxSourceBytes) {
    throw new CannotRenderError('too-large', `instances over ${renderLimits.maxSourceBytes} bytes are not rendered: retrieve the instance`);
  }
  return pool.render(resolveStoredInstance(storageDir, instance.storagePath), options);
}
