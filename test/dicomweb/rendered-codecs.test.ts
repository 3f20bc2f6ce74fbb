// The WebAssembly codecs are loaded by a render thread only when it first meets a compressed
// frame: uncompressed and RLE frames render without them (render-frame.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codecsLoaded, renderStoredFrame } from '../../src/domain/imaging/rendering/render-frame.ts';
import type { RenderOptions } from '../../src/domain/imaging/rendering/render-options.ts';
import { fixturePath } from '../support/fixtures.ts';

const png: RenderOptions = { mediaType: 'image/png', frameNumber: 1, quality: 90 };

test('uncompressed and RLE frames render without the codecs; the first compressed frame loads them', async () => {
  for (const file of ['CT_small.dcm', 'MR_small_implicit.dcm', 'MR_small_bigendian.dcm', 'MR_small_RLE.dcm']) {
    const image = await renderStoredFrame(fixturePath(`dicom/${file}`), png);
    assert.ok(image.body.length > 0, file);
    assert.equal(codecsLoaded(), false, `${file} loaded the codecs`);
  }
  const compressed = await renderStoredFrame(fixturePath('dicom/MR_small_jpeg_ls_lossless.dcm'), png);
  assert.equal(codecsLoaded(), true);
  const uncompressed = await renderStoredFrame(fixturePath('dicom/MR_small.dcm'), png);
  assert.deepEqual([compressed.width, compressed.height], [uncompressed.width, uncompressed.height]);
});
