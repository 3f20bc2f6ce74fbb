import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import sharp from 'sharp';
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

function pool(threads: number, maxQueued: number, timeoutMs: number, idleMs = 10_000): RenderPool {
  const created = new RenderPool({ threads, maxQueued, timeoutMs, idleMs });
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
    renderStoredInstance(folder, { storagePath: 'unused', sizeBytes: renderLimits.maxSourceBytes + 1, transferSyntaxUid: '1.2.840.10008.1.2.4.90' }, png, pool(1, 1, 30_000)),
    (error) => error instanceof CannotRenderError && error.reason === 'too-large',
  );
});

test('an uncompressed multi-frame instance is read a frame at a time, whatever the size of its file', async () => {
  // 260 frames of 512 x 512 x 16 bit (130 MiB, over the whole-file bound): the left half of each
  // frame is 0, the right half 100 + its index, so a fixed window tells the frames apart.
  const siteId = '00000000-0000-4000-8000-000000000001';
  const storagePath = `${siteId}/2.25.1/2.25.2/2.25.3.dcm`;
  const storage = mkdtempSync(join(tmpdir(), 'cg-render-frames-'));
  const file = join(storage, ...storagePath.split('/'));
  mkdirSync(dirname(file), { recursive: true });
  const frames = 260;
  const frameBytes = 512 * 512 * 2;
  const rawPixels = join(storage, 'pixels.raw');
  const handle = openSync(rawPixels, 'w');
  const frame = Buffer.alloc(frameBytes);
  for (let index = 0; index < frames; index++) {
    for (let row = 0; row < 512; row++) frame.fill(Buffer.from(Uint16Array.of(100 + index).buffer), row * 1024 + 512, row * 1024 + 1024);
    writeSync(handle, frame);
  }
  closeSync(handle);
  writeFileSync(`${file}.txt`, [
    '(0008,0016) UI [1.2.840.10008.5.1.4.1.1.7.3]', '(0008,0018) UI [2.25.3]', '(0020,000d) UI [2.25.1]', '(0020,000e) UI [2.25.2]',
    '(0028,0002) US 1', '(0028,0004) CS [MONOCHROME2]', `(0028,0008) IS [${frames}]`, '(0028,0010) US 512', '(0028,0011) US 512',
    '(0028,0100) US 16', '(0028,0101) US 16', '(0028,0102) US 15', '(0028,0103) US 0', `(7fe0,0010) OW =${rawPixels}`, '',
  ].join('\n'));
  execFileSync('dump2dcm', ['-q', '+te', `${file}.txt`, file]);
  rmSync(rawPixels);
  const sizeBytes = statSync(file).size;
  assert.ok(sizeBytes > renderLimits.maxSourceBytes);
  const framePool = pool(1, 4, 60_000);
  const render = async (frameNumber: number) => {
    const image = await renderStoredInstance(storage, { storagePath, sizeBytes, transferSyntaxUid: '1.2.840.10008.1.2.1' }, { ...png, frameNumber, window: { center: 100, width: 800, function: 'linear' } }, framePool);
    const { data, info } = await sharp(image.body).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height], [512, 512]);
    return { left: data[0]!, right: data[(512 * 100 + 400) * info.channels]! };
  };
  const first = await render(1);
  const last = await render(frames);
  assert.equal(first.left, last.left);
  assert.ok(last.right - first.right > 50, `frame ${frames} (${last.right}) is brighter than frame 1 (${first.right})`);
  await assert.rejects(render(frames + 1), (error) => error instanceof CannotRenderError && error.reason === 'no-such-frame');
  rmSync(storage, { recursive: true, force: true });
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

test('a render thread is ended once idle, and a later render starts another', async () => {
  // Idle after 1 s: long enough that a loaded machine does not end a thread between a render's
  // answer and the check that follows it.
  const brief = pool(2, 4, 30_000, 1_000);
  assert.equal(brief.threads, 0);
  await Promise.all([brief.render(ct, png), brief.render(ct, png)]);
  // One thread or two: whether the second starts depends on how soon the first is ready.
  assert.ok(brief.threads >= 1);
  const deadline = Date.now() + 10_000;
  while (brief.threads > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(brief.threads, 0, 'the idle threads were ended');
  assert.equal((await brief.render(ct, png)).width, 128);
  assert.equal(brief.threads, 1);
});

test('a process that has rendered exits by itself: idle render threads hold nothing open', () => {
  const pool = new URL('../../src/domain/imaging/rendering/render-pool.ts', import.meta.url).href;
  const script = `const { sharedRenderPool } = await import(${JSON.stringify(pool)});
const image = await sharedRenderPool().render(${JSON.stringify(ct)}, { mediaType: 'image/jpeg', frameNumber: 1, quality: 90 });
console.log(image.width);`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000, encoding: 'utf8' });
  assert.equal(output.trim(), '128');
});
