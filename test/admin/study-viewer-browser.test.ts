import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { adminSurface } from '../../src/admin/surface.ts';
import { dicomwebSurface } from '../../src/dicomweb/surface.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { fixturePath } from '../support/fixtures.ts';
import { createTestApiKey, testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { multipartBody } from '../dicomweb/support.ts';
import { accessibilityViolations, fitsWidth, launchChromium, screenshot, screenshotDir, watchConsole } from './browser-support.ts';
import { createTestUser, testPassword } from './support.ts';

const studyUid = '1.3.6.1.4.1.5962.1.2.1.20040119072730.12322';

const state = {} as {
  db: TestDatabase; site: SiteContext; other: SiteContext; admin: FastifyInstance; dicomweb: FastifyInstance;
  adminUrl: string; dicomwebUrl: string; browser: Browser; clinician: string; stranger: string;
};

/** Three images of one series: the CT sample under three instance UIDs and numbers (dcmtk's dcmodify). */
function threeImageSeries(): Buffer[] {
  const folder = mkdtempSync(join(tmpdir(), 'cg-viewer-series-'));
  return [1, 2, 3].map((number) => {
    const path = join(folder, `ct-${number}.dcm`);
    copyFileSync(fixturePath('dicom/CT_small.dcm'), path);
    execFileSync('dcmodify', ['-nb', '-m', `(0008,0018)=1.2.826.0.1.3680043.10.1234.${number}`, '-m', `(0020,0013)=${number}`, path]);
    return readFileSync(path);
  });
}

before(async () => {
  state.db = await createTestDatabase();
  state.site = await createTestSite(state.db.database, { name: 'Riverside Imaging' });
  state.other = await createTestSite(state.db.database, { name: 'Hillside Clinic' });
  state.clinician = (await createTestUser(state.db.database, state.site, 'clinician')).email;
  state.stranger = (await createTestUser(state.db.database, state.other, 'clinician')).email;
  // One configuration for both origins, as one service has: the admin origin names the DICOMweb
  // origin to the browser, and the DICOMweb origin allows the admin origin (both on free ports).
  const services = testServices(state.db.database);
  state.dicomweb = await createOrigin(dicomwebSurface, services);
  state.dicomwebUrl = await state.dicomweb.listen({ host: '127.0.0.1', port: 0 });
  state.admin = await createOrigin(adminSurface, services);
  state.adminUrl = await state.admin.listen({ host: '127.0.0.1', port: 0 });
  services.config.dicomwebPublicUrl = state.dicomwebUrl;
  services.config.dicomwebCorsOrigins = [state.adminUrl];
  const { body, contentType } = multipartBody(threeImageSeries().map((file) => ({ contentType: 'application/dicom', body: file })));
  const stored = await fetch(`${state.dicomwebUrl}/studies`, { method: 'POST', headers: { 'x-api-key': await createTestApiKey(state.db.database, state.site), 'content-type': contentType }, body });
  assert.equal(stored.status, 200, await stored.text());
  state.browser = await launchChromium();
});

after(async () => {
  await state.browser?.close();
  await state.admin?.close();
  await state.dicomweb?.close();
  await state.db?.drop();
});

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${state.adminUrl}/`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(testPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: /sign out/i }).waitFor();
}

/** In the page: how many distinct red levels the viewport's canvas shows (0 without a canvas, 1 when blank). */
function canvasLevels(): number {
  const doc = (globalThis as any).document;
  const source = doc.querySelector('.viewport canvas');
  if (!source) return 0;
  const copy = doc.createElement('canvas');
  copy.width = source.width;
  copy.height = source.height;
  const context = copy.getContext('2d');
  context.drawImage(source, 0, 0);
  const pixels = context.getImageData(0, 0, copy.width, copy.height).data;
  const levels = new Set<number>();
  for (let i = 0; i < pixels.length; i += 4) levels.add(pixels[i]);
  return levels.size;
}

/** Waits until the viewport shows an image (more than a few levels), as frames load after the stack is set. */
async function showsImage(page: Page): Promise<void> {
  // Polled from here: waitForFunction with a string predicate re-evaluates it by eval inside the
  // page, which the admin CSP forbids, so it failed whenever the image was not there at once.
  const deadline = Date.now() + 30_000;
  while ((await page.evaluate(canvasLevels)) <= 10) {
    if (Date.now() > deadline) throw new Error('the viewport showed no image within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const statusText = (page: Page) => page.locator('.viewer-status').innerText();

test('a clinician opens a study from the worklist and reads its images: scroll, window/level, zoom and pan, with the report beside them', async () => {
  const page = await (await state.browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const seen = watchConsole(page);
  await signIn(page, state.clinician);
  await page.goto(`${state.adminUrl}/#/sites/${state.site.siteId}/worklist`);
  await page.getByRole('link', { name: /^CompressedSamples/ }).click();
  await page.locator('.viewport[data-ready="true"]').waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => /Image 1 of 3/.test((globalThis as any).document.querySelector('.viewer-status').textContent));
  await showsImage(page);
  assert.equal(await page.getByRole('button', { name: /CT/ }).getAttribute('aria-pressed'), 'true', 'the first series is selected');
  await page.locator('.series-button .thumbnail').first().waitFor();

  // Scroll: the keyboard on the focused viewport, then the next button.
  await page.locator('.viewport').focus();
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => /Image 2 of 3/.test((globalThis as any).document.querySelector('.viewer-status').textContent));
  await page.getByRole('button', { name: 'Next image' }).click();
  await page.waitForFunction(() => /Image 3 of 3/.test((globalThis as any).document.querySelector('.viewer-status').textContent));
  await page.mouse.move(640, 450);

  // Window/level by dragging across the image, then by keys.
  const before = await statusText(page);
  const box = (await page.locator('.viewport').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 80, box.y + box.height / 2 + 40, { steps: 8 });
  await page.mouse.up();
  await page.waitForFunction((previous) => (globalThis as any).document.querySelector('.viewer-status').textContent !== previous, before);
  const dragged = /Window (\d+) \/ level (-?\d+)/.exec(await statusText(page));
  assert.ok(dragged, await statusText(page));
  await page.locator('.viewport').focus();
  await page.keyboard.press('w');
  const widened = /Window (\d+)/.exec(await statusText(page));
  assert.ok(Number(widened![1]) > Number(dragged[1]), 'W widens the window');

  // Zoom from the keyboard; reset brings back 100 %.
  await page.keyboard.press('+');
  assert.match(await statusText(page), /Zoom 125%/);
  await page.getByRole('button', { name: 'Reset' }).click();
  await page.waitForFunction(() => /Zoom 100%/.test((globalThis as any).document.querySelector('.viewer-status').textContent));
  await showsImage(page);

  // The report editor is on the same screen, beside the images.
  const viewerBox = (await page.locator('.viewer').boundingBox())!;
  const editorBox = (await page.getByLabel('Report', { exact: true }).boundingBox())!;
  assert.ok(editorBox.x > viewerBox.x + viewerBox.width - 1, 'the editor is to the right of the viewer');
  assert.ok(editorBox.y < viewerBox.y + viewerBox.height, 'and beside it, not below');
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'admin-study-viewer');
  assert.deepEqual(seen.errors.filter((line) => !/WebGL|GPU|GroupMarkerNotSet|swiftshader/i.test(line)), []);
  await page.context().close();
});

test('on a phone (390 px) the viewer fits the width, scrolls by touch controls, and the report follows below', async () => {
  const page = await (await state.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 })).newPage();
  await signIn(page, state.clinician);
  await page.goto(`${state.adminUrl}/#/sites/${state.site.siteId}/studies/${studyUid}`);
  await page.locator('.viewport[data-ready="true"]').waitFor({ timeout: 60_000 });
  assert.ok(await fitsWidth(page), 'nothing wider than the screen');
  await page.getByRole('button', { name: 'Next image' }).tap();
  await page.waitForFunction(() => /Image 2 of 3/.test((globalThis as any).document.querySelector('.viewer-status').textContent));
  await showsImage(page);
  const viewerBox = (await page.locator('.viewer').boundingBox())!;
  const editorBox = (await page.getByLabel('Report', { exact: true }).boundingBox())!;
  assert.ok(editorBox.y > viewerBox.y + viewerBox.height - 1, 'the editor is below the viewer');
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'admin-study-viewer-phone');
  // The screen as the phone shows it, on the images (the documentation's picture).
  await page.locator('.viewer').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(screenshotDir, 'admin-study-viewer-phone-screen.png') });
  await page.context().close();
});

test('compressed images are decoded in the browser under the page\'s policy: JPEG baseline and JPEG 2000 by WebAssembly in a worker, RLE multi-frame', async () => {
  // A service administrator sees every site; each sample goes to a site of its own (some share UIDs).
  const email = (await createTestUser(state.db.database, null, 'service-admin')).email;
  const samples = { 'SC_rgb_jpeg_dcmtk.dcm': 1, 'MR_small_jp2klossless.dcm': 1, 'SC_rgb_rle_2frame.dcm': 2 };
  const page = await (await state.browser.newContext()).newPage();
  const seen = watchConsole(page);
  await signIn(page, email);
  for (const [name, images] of Object.entries(samples)) {
    const site = await createTestSite(state.db.database);
    const { body, contentType } = multipartBody([{ contentType: 'application/dicom', body: readFileSync(fixturePath(`dicom/${name}`)) }]);
    const stored = await fetch(`${state.dicomwebUrl}/studies`, { method: 'POST', headers: { 'x-api-key': await createTestApiKey(state.db.database, site), 'content-type': contentType }, body });
    assert.equal(stored.status, 200, name);
    const { rows } = await state.db.database.query<{ study_instance_uid: string }>('SELECT study_instance_uid FROM imaging_instance WHERE site_id = $1', [site.siteId]);
    // A fresh page load each time, so that nothing of the previous study is waited on.
    await page.goto('about:blank');
    await page.goto(`${state.adminUrl}/#/sites/${site.siteId}/studies/${rows[0]!.study_instance_uid}`);
    await page.locator('.viewport[data-ready="true"]').waitFor({ timeout: 60_000 });
    await page.waitForFunction((count) => new RegExp(`Image 1 of ${count}`).test((globalThis as any).document.querySelector('.viewer-status').textContent), images);
    assert.equal(await page.locator('.viewer-error').count(), 0);
    await showsImage(page);
  }
  assert.deepEqual(seen.errors.filter((line) => !/WebGL|GPU|GroupMarkerNotSet|swiftshader/i.test(line)), []);
  await page.context().close();
});

test("a user of another site gets no viewing token for the site and cannot read the study with their own (404)", async () => {
  const page = await (await state.browser.newContext()).newPage();
  await signIn(page, state.stranger);
  const answers = await page.evaluate(async ({ siteId, otherSiteId, studyUid }) => {
    // The CSRF token comes from the session answer, as the app gets it.
    const session = (await (await fetch('/api/session')).json()) as { csrf_token: string };
    const headers = { 'x-csrf-token': session.csrf_token, 'content-type': 'application/json' };
    const refused = await fetch(`/api/sites/${siteId}/dicomweb-tokens`, { method: 'POST', headers, body: '{}' });
    const own = (await (await fetch(`/api/sites/${otherSiteId}/dicomweb-tokens`, { method: 'POST', headers, body: '{}' })).json()) as { token: string; dicomweb_url: string };
    const read = await fetch(`${own.dicomweb_url}/studies/${studyUid}/metadata`, { headers: { authorization: `Bearer ${own.token}` } });
    return { refused: refused.status, read: read.status };
  }, { siteId: state.site.siteId, otherSiteId: state.other.siteId, studyUid });
  assert.deepEqual(answers, { refused: 404, read: 404 });
  await page.context().close();
});
