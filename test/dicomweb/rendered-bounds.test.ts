import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ServiceBusyError } from '../../src/domain/errors.ts';
import { renderStoredFrame } from '../../src/domain/imaging/rendering/render-frame.ts';
import { CannotRenderError, renderLimits, type RenderOptions } from '../../src/domain/imaging/rendering/render-options.ts';
import { RenderPool } from '../../src/domain/imaging/rendering/render-pool.ts';
import { renderStoredInstance } from '../../src/domain/imaging/rendering/render-stored-instance.ts';
import { fixturePath } from '../support/fixtures.ts';

const png: RenderOptions = { mediaType: 'image/png', frameNumber: 1, quality: 90 };
const ct = fixturePath('dicom/CT_small.dcm');
const pools: RenderPool[] = [];
after(async () => Promise.all(pools.map((pool) => pool.close())));

function pool(threads: number, maxQueued: number, timeoutMs: number): RenderPool {
  const created = new RenderPool({ threads, maxQueued, timeoutMs });
  pools.push(created);
  return created;
}

test('a frame over the pixel bound is refused before it is decoded, and so is a file over the size bound', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'cg-render-bounds-'));
  const huge = join(folder, 'huge.dcm');
  copyFileSync(fixturePath('dicom/MR_small.dcm'), huge);
  execFileSync('dcmodify', ['-nb', '-m', '(0028,0010)=8000', '-m', '(0028,0011)=8000', huge]);
  await assert.rejects(renderStoredFrame(huge, png), (error) => error instanceof CannotRenderError && error.reason === 'too-large' && /8000 x 8000/.test(error.message));
  await assert.rejects(
    renderStoredInstance(folder, { storagePath: 'unused', sizeBytes: renderLimits.maxSourceBytes + 1 }, png, pool(1, 1, 30_000)),
    (error) => error instanceof CannotRenderError && error.reason === 'too-large',
  );
});

test('renders past the queue bound are refused as busy; the queued ones complete', async () => {
  const small = pool(1, 1, 30_000);
  const results = await Promise.allSettled([small.render(ct, png), small.render(ct, png), small.render(ct, png)]);
  assert.deepEqual(results.map((result) => result.status), ['fulfilled', 'fulfilled', 'rejected']);
  assert.ok((results[2] as PromiseRejectedResult).reason instanceof ServiceBusyError);
});

test('a render that overruns its time is stopped with a clear refusal; a worker that is stopped takes no other render with it', async () => {
  const hasty = pool(1, 4, 1);
  await assert.rejects(hasty.render(ct, png), (error) => error instanceof CannotRenderError && /took longer/.test(error.message));
  const patient = pool(1, 4, 30_000);
  assert.equal((await patient.render(ct, png)).width, 128);
});
