import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import { renderStoredFrame } from '../../src/domain/imaging/rendering/render-frame.ts';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { dicomFixture, storescu } from '../dicom/support/dicom-harness.ts';
import { fixturePath } from '../support/fixtures.ts';
import { fixture, siteWithKey, stow, useDicomwebOrigin, type SiteKey } from './support.ts';

const origin = useDicomwebOrigin();
const scratch = mkdtempSync(join(tmpdir(), 'cg-rendered-'));

interface Uids {
  study: string;
  series: string;
  instance: string;
}

function uidsOf(name: string): Uids {
  // The first occurrence of each tag is the top-level one (the sequences that repeat them come later).
  const first = (tag: string) => /\[([0-9.]+)\]/.exec(execFileSync('dcmdump', ['-q', '+P', tag, fixturePath(`dicom/${name}`)]).toString())![1]!;
  return { study: first('0020,000d'), series: first('0020,000e'), instance: first('0008,0018') };
}

const instancePath = (uids: Uids) => `/studies/${uids.study}/series/${uids.series}/instances/${uids.instance}`;

function get(key: string, path: string, accept = 'image/png'): Promise<Response> {
  return fetch(`${origin.url}${path}`, { headers: { 'x-api-key': key, accept } });
}

// STOW-RS refuses these two samples (their own quirks); the DICOM listener takes them as they are.
const sentOverDimse = new Set(['rtdose.dcm', 'rtplan.dcm']);

/** Each fixture in a site of its own: several share UIDs (one image in several transfer syntaxes). */
async function stored(name: string): Promise<SiteKey & { uids: Uids }> {
  const siteKey = await siteWithKey(origin);
  if (sentOverDimse.has(name)) {
    const sent = await storescu(origin.listener.port, siteKey.site.aeTitle, [dicomFixture(name)], ['-xi']);
    assert.equal(sent.code, 0, `${name}: ${sent.stderr}`);
  } else {
    assert.equal((await stow(origin, siteKey.key, [fixture(name)])).status, 200, name);
  }
  return { ...siteKey, uids: uidsOf(name) };
}

async function pixels(image: Buffer): Promise<{ width: number; height: number; data: Buffer }> {
  const { data, info } = await sharp(image).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

function meanAbsoluteDifference(a: Buffer, b: Buffer): number {
  assert.equal(a.length, b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

/** dcmtk's rendering of the same image (the reference file holds the same pixels where dcmj2pnm cannot decode the fixture's syntax). */
async function dcmtkRendering(reference: string, windowing: string[]): Promise<Buffer> {
  const output = join(scratch, `${reference}.png`);
  execFileSync('dcmj2pnm', ['--write-png', ...windowing, fixturePath(`dicom/${reference}`), output]);
  return (await pixels(readFileSync(output))).data;
}

// Every fixture with pixel data, its size, and dcmj2pnm's rendering to compare with: the same file,
// or the same image in a syntax dcmj2pnm decodes (it reads neither JPEG-LS nor JPEG 2000).
const renderable: { name: string; width: number; height: number; reference: string; windowing: string[]; tolerance: number }[] = [
  { name: 'CT_small.dcm', width: 128, height: 128, reference: 'CT_small.dcm', windowing: ['+Wm'], tolerance: 1 },
  { name: 'MR_small.dcm', width: 64, height: 64, reference: 'MR_small.dcm', windowing: ['+Wi', '1'], tolerance: 1 },
  { name: 'MR_small_implicit.dcm', width: 64, height: 64, reference: 'MR_small.dcm', windowing: ['+Wi', '1'], tolerance: 1 },
  { name: 'MR_small_bigendian.dcm', width: 64, height: 64, reference: 'MR_small.dcm', windowing: ['+Wi', '1'], tolerance: 1 },
  { name: 'MR_small_RLE.dcm', width: 64, height: 64, reference: 'MR_small.dcm', windowing: ['+Wi', '1'], tolerance: 1 },
  { name: 'MR_small_jpeg_ls_lossless.dcm', width: 64, height: 64, reference: 'MR_small.dcm', windowing: ['+Wi', '1'], tolerance: 1 },
  { name: 'MR_small_jp2klossless.dcm', width: 64, height: 64, reference: 'MR_small.dcm', windowing: ['+Wi', '1'], tolerance: 1 },
  { name: 'JPGExtended.dcm', width: 256, height: 1024, reference: 'JPGExtended.dcm', windowing: ['+Wm'], tolerance: 2 },
  // Lossy JPEG 2000 of the same scan as the 12-bit JPEG: the codecs' losses differ a little.
  { name: 'JPEG2000.dcm', width: 256, height: 1024, reference: 'JPGExtended.dcm', windowing: ['+Wm'], tolerance: 6 },
  { name: 'SC_rgb_jpeg_dcmtk.dcm', width: 100, height: 100, reference: 'SC_rgb_jpeg_dcmtk.dcm', windowing: [], tolerance: 1 },
  { name: 'SC_rgb_jpeg_gdcm.dcm', width: 100, height: 100, reference: 'SC_rgb_jpeg_gdcm.dcm', windowing: [], tolerance: 1 },
  { name: 'SC_rgb_rle_2frame.dcm', width: 100, height: 100, reference: 'SC_rgb_rle_2frame.dcm', windowing: [], tolerance: 1 },
  { name: 'image_dfl.dcm', width: 512, height: 512, reference: 'image_dfl.dcm', windowing: ['+Wm'], tolerance: 1 },
  { name: 'rtdose.dcm', width: 10, height: 10, reference: 'rtdose.dcm', windowing: ['+Wm'], tolerance: 1 },
];

test('every fixture with pixel data renders as PNG and JPEG, matching dcmtk\'s dcmj2pnm', async () => {
  for (const item of renderable) {
    const { key, uids } = await stored(item.name);
    const png = await get(key, `${instancePath(uids)}/rendered`);
    assert.equal(png.status, 200, item.name);
    assert.equal(png.headers.get('content-type'), 'image/png', item.name);
    const image = await pixels(Buffer.from(await png.arrayBuffer()));
    assert.deepEqual([image.width, image.height], [item.width, item.height], item.name);
    assert.ok(image.data.reduce((max, value) => Math.max(max, value), 0) - image.data.reduce((min, value) => Math.min(min, value), 255) > 32, `${item.name} is not blank`);
    const difference = meanAbsoluteDifference(image.data, await dcmtkRendering(item.reference, item.windowing));
    assert.ok(difference <= item.tolerance, `${item.name}: mean absolute difference ${difference.toFixed(2)} from dcmj2pnm`);

    const jpeg = await get(key, `${instancePath(uids)}/rendered`, '*/*');
    assert.equal(jpeg.status, 200, item.name);
    assert.equal(jpeg.headers.get('content-type'), 'image/jpeg', item.name);
    assert.deepEqual([...Buffer.from(await jpeg.arrayBuffer()).subarray(0, 2)], [0xff, 0xd8], item.name);
  }
});

test('window, viewport, quality, frames and thumbnails at each level', async () => {
  const ct = await stored('CT_small.dcm');
  const render = async (query: string, path = `${instancePath(ct.uids)}/rendered`) => {
    const response = await get(ct.key, `${path}${query}`);
    assert.equal(response.status, 200, query);
    return pixels(Buffer.from(await response.arrayBuffer()));
  };
  const byDataset = await render('');
  const softTissue = await render('?window=40,400');
  const sigmoid = await render('?window=40,400,sigmoid');
  assert.ok(meanAbsoluteDifference(byDataset.data, softTissue.data) > 5, 'a window changes the image');
  assert.ok(meanAbsoluteDifference(softTissue.data, sigmoid.data) > 1, 'the sigmoid function differs from the linear one');
  // Rescale Slope/Intercept, then the window asked for, linear or sigmoid, as dcmtk applies them.
  const dcmtkWindowed = async (fn: string) => dcmtkRendering('CT_small.dcm', ['+Ww', '40', '400', fn]);
  assert.ok(meanAbsoluteDifference(softTissue.data, await dcmtkWindowed('+Wfl')) <= 1, 'window=40,400 as dcmj2pnm +Ww 40 400');
  assert.ok(meanAbsoluteDifference(sigmoid.data, await dcmtkWindowed('+Wfs')) <= 2, 'window=40,400,sigmoid as dcmj2pnm +Ww 40 400 +Wfs');
  const fitted = await render('?viewport=64,32');
  assert.deepEqual([fitted.width, fitted.height], [32, 32]);
  const enlarged = await render('?viewport=256,256');
  assert.deepEqual([enlarged.width, enlarged.height], [256, 256]);

  const jpegOf = async (quality: number) => Buffer.from(await (await get(ct.key, `${instancePath(ct.uids)}/rendered?quality=${quality}`, 'image/jpeg')).arrayBuffer());
  assert.ok((await jpegOf(10)).length < (await jpegOf(100)).length, 'quality changes the JPEG');
  const byParameter = await get(ct.key, `${instancePath(ct.uids)}/rendered?accept=image/png`, 'image/jpeg');
  assert.equal(byParameter.headers.get('content-type'), 'image/png');

  const big = await stored('image_dfl.dcm');
  const thumbnail = await get(big.key, `${instancePath(big.uids)}/thumbnail`, 'image/jpeg');
  assert.equal(thumbnail.headers.get('content-type'), 'image/jpeg');
  const thumbnailImage = await pixels(Buffer.from(await thumbnail.arrayBuffer()));
  assert.deepEqual([thumbnailImage.width, thumbnailImage.height], [256, 256], 'a thumbnail fits 256 x 256 by default');
  const small = await render('', `${instancePath(ct.uids)}/thumbnail`);
  assert.deepEqual([small.width, small.height], [128, 128], 'a small image is not enlarged into a thumbnail');
  const sized = await render('?viewport=50,50', `/studies/${ct.uids.study}/thumbnail`);
  assert.deepEqual([sized.width, sized.height], [50, 50]);
  const series = await render('', `/studies/${ct.uids.study}/series/${ct.uids.series}/thumbnail`);
  assert.deepEqual([series.width, series.height], [128, 128]);

  const twoFrames = await stored('SC_rgb_rle_2frame.dcm');
  const frame = async (n: number) => {
    const response = await get(twoFrames.key, `${instancePath(twoFrames.uids)}/frames/${n}/rendered`);
    assert.equal(response.status, 200);
    return (await pixels(Buffer.from(await response.arrayBuffer()))).data;
  };
  // A later frame of an uncompressed multi-frame instance (read alone) matches dcmtk's rendering of it.
  const dose = await stored('rtdose.dcm');
  const doseFrame = await get(dose.key, `${instancePath(dose.uids)}/frames/15/rendered`);
  assert.equal(doseFrame.status, 200);
  const doseDifference = meanAbsoluteDifference((await pixels(Buffer.from(await doseFrame.arrayBuffer()))).data, await dcmtkRendering('rtdose.dcm', ['+Wm', '+F', '15']));
  assert.ok(doseDifference <= 1, `rtdose frame 15: mean absolute difference ${doseDifference.toFixed(2)} from dcmj2pnm`);

  // The first pixel is red in frame 1 and its complement, cyan, in frame 2.
  assert.deepEqual([...(await frame(1)).subarray(0, 3)], [255, 0, 0]);
  assert.deepEqual([...(await frame(2)).subarray(0, 3)], [0, 255, 255]);
});

test('a study thumbnail shows the middle instance of its first series with images', async () => {
  const { key } = await siteWithKey(origin);
  // JPGExtended and JPEG2000 are two instances of one series (instance numbers 5 and 3).
  assert.equal((await stow(origin, key, [fixture('JPGExtended.dcm'), fixture('JPEG2000.dcm')])).status, 200);
  const uids = uidsOf('JPEG2000.dcm');
  const study = Buffer.from(await (await get(key, `/studies/${uids.study}/thumbnail`)).arrayBuffer());
  const first = Buffer.from(await (await get(key, `${instancePath(uids)}/thumbnail`)).arrayBuffer());
  assert.deepEqual(study, first, 'of two instances the lower instance number is the middle one');
});

test('what cannot be rendered is a clear 400, 404 or 406, and the origin keeps serving', async () => {
  const ct = await stored('CT_small.dcm');
  const rendered = `${instancePath(ct.uids)}/rendered`;
  for (const query of ['?window=abc', '?window=40', '?window=40,0', '?window=40,400,cubic', '?quality=0', '?quality=101', '?viewport=0,10', '?viewport=5000,5000', '?viewport=1,2,3,4,5,6', '?annotation=patient', '?iccprofile=srgb', '?window=1,2&window=3,4']) {
    const response = await get(ct.key, `${rendered}${query}`);
    assert.equal(response.status, 400, query);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'invalid', query);
  }
  assert.equal((await get(ct.key, `${instancePath(ct.uids)}/frames/1,2/rendered`)).status, 400);
  assert.equal((await get(ct.key, `${instancePath(ct.uids)}/frames/0/rendered`)).status, 400);

  const notAcceptable = await get(ct.key, rendered, 'image/gif');
  assert.equal(notAcceptable.status, 406);
  assert.match(((await notAcceptable.json()) as { error: { message: string } }).error.message, /image\/jpeg or image\/png/);
  const studyRendered = await get(ct.key, `/studies/${ct.uids.study}/rendered`);
  assert.equal(studyRendered.status, 406);
  assert.match(((await studyRendered.json()) as { error: { message: string } }).error.message, /thumbnail/);

  const noFrame = await get(ct.key, `${instancePath(ct.uids)}/frames/2/rendered`);
  assert.equal(noFrame.status, 404);
  assert.match(((await noFrame.json()) as { error: { message: string } }).error.message, /1 frame/);
  assert.equal((await get(ct.key, `${instancePath({ ...ct.uids, instance: '1.2.3.4' })}/rendered`)).status, 404);
  assert.equal((await get(ct.key, '/studies/1.2.3.4/thumbnail')).status, 404);
  const otherSite = await siteWithKey(origin);
  assert.equal((await get(otherSite.key, rendered)).status, 404, "another site's instance is not found");
  assert.equal((await get(otherSite.key, `/studies/${ct.uids.study}/thumbnail`)).status, 404);

  for (const name of ['test-SR.dcm', 'rtplan.dcm']) {
    const withoutPixels = await stored(name);
    const response = await get(withoutPixels.key, `${instancePath(withoutPixels.uids)}/rendered`);
    assert.equal(response.status, 406, name);
    assert.match(((await response.json()) as { error: { message: string } }).error.message, /no pixel data/, name);
    const studyThumbnail = await get(withoutPixels.key, `/studies/${withoutPixels.uids.study}/thumbnail`);
    assert.equal(studyThumbnail.status, 406, name);
    assert.match(((await studyThumbnail.json()) as { error: { message: string } }).error.message, /no instance with images/, name);
  }

  // A transfer syntax the decoders do not read: JPEG 2000 Part 2 (multi-component), same UID length as the baseline JPEG it replaces.
  const unsupported = await siteWithKey(origin);
  const relabelled = Buffer.from(fixture('SC_rgb_jpeg_dcmtk.dcm').toString('latin1').replace('1.2.840.10008.1.2.4.50', '1.2.840.10008.1.2.4.92'), 'latin1');
  assert.equal((await stow(origin, unsupported.key, [relabelled])).status, 200);
  const jpeg = uidsOf('SC_rgb_jpeg_dcmtk.dcm');
  const unsupportedRendering = await get(unsupported.key, `${instancePath(jpeg)}/rendered`);
  assert.equal(unsupportedRendering.status, 406);
  assert.match(((await unsupportedRendering.json()) as { error: { message: string } }).error.message, /transfer syntax 1\.2\.840\.10008\.1\.2\.4\.92 is not rendered/);

  // A stored file damaged on disk after it was indexed: its JPEG stream loses its markers.
  const damaged = await stored('SC_rgb_jpeg_dcmtk.dcm');
  const { rows } = await origin.db.database.query('SELECT storage_path FROM imaging_instance WHERE site_id = $1', [damaged.site.siteId]);
  const file = resolveStoredInstance(origin.services.config.dicomStorageDir, rows[0]!.storage_path);
  const bytes = readFileSync(file);
  const jpegStart = bytes.indexOf(Buffer.from([0xff, 0xd8, 0xff]));
  bytes.fill(0, jpegStart, jpegStart + 64);
  writeFileSync(file, bytes);
  const corrupt = await get(damaged.key, `${instancePath(damaged.uids)}/rendered`);
  assert.equal(corrupt.status, 406);
  assert.match(((await corrupt.json()) as { error: { message: string } }).error.message, /cannot be (decoded|rendered)/);
  assert.equal((await get(ct.key, rendered)).status, 200, 'the origin still renders after a failed decode');
});

test('MONOCHROME1 renders inverted, as dcmtk renders it', async () => {
  const file = join(scratch, 'MR_small_monochrome1.dcm');
  copyFileSync(fixturePath('dicom/MR_small.dcm'), file);
  execFileSync('dcmodify', ['-nb', '-m', '(0028,0004)=MONOCHROME1', file]);
  const png = { mediaType: 'image/png', frameNumber: 1, quality: 90 } as const;
  const inverted = await pixels((await renderStoredFrame(file, png)).body);
  const normal = await pixels((await renderStoredFrame(fixturePath('dicom/MR_small.dcm'), png)).body);
  const sums = inverted.data.map((value, i) => value + normal.data[i]!);
  assert.ok(sums.every((sum) => sum >= 254 && sum <= 256), 'each pixel is the complement of its MONOCHROME2 rendering');
  execFileSync('dcmj2pnm', ['--write-png', '+Wi', '1', file, join(scratch, 'monochrome1.png')]);
  assert.ok(meanAbsoluteDifference(inverted.data, (await pixels(readFileSync(join(scratch, 'monochrome1.png')))).data) <= 1);
});
