// The administration app's page of a site's FHIR Bulk Data exports, in Chromium: a site
// administrator sees each export's state, who asked, counts and expiry, and cancels one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { adminSurface } from '../../src/admin/surface.ts';
import { claimExport } from '../../src/domain/bulk-export/export-jobs.ts';
import { runExport } from '../../src/fhir/export/export-runner.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import type { Services } from '../../src/platform/services.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { createTestApiKey, testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { accessibilityViolations, launchChromium, screenshot, watchConsole } from './browser-support.ts';
import { createTestUser, testPassword } from './support.ts';

let db: TestDatabase;
let services: Services;
let admin: FastifyInstance;
let fhir: FastifyInstance;
let browser: Browser;
let adminUrl: string;
let fhirUrl: string;

before(async () => {
  db = await createTestDatabase();
  services = testServices(db.database);
  admin = await createOrigin(adminSurface, services);
  fhir = await createOrigin(fhirSurface, services);
  adminUrl = await admin.listen({ host: '127.0.0.1', port: 0 });
  fhirUrl = await fhir.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await admin?.close();
  await fhir?.close();
  await db?.drop();
});

test("a site administrator sees the site's exports (state, who, counts, expiry) and cancels a queued one", { timeout: 120_000 }, async () => {
  const site = await createTestSite(db.database);
  const siteAdmin = await createTestUser(db.database, site, 'site-admin');
  const key = await createTestApiKey(db.database, site);
  const headers = { 'x-api-key': key, 'content-type': 'application/fhir+json' };
  for (const identifier of ['EXP-1', 'EXP-2']) {
    await fetch(`${fhirUrl}/fhir/Patient`, { method: 'POST', headers, body: JSON.stringify({ resourceType: 'Patient', identifier: [{ value: identifier }] }) });
  }
  const kickOff = async (path: string) => {
    const response = await fetch(`${fhirUrl}${path}`, { headers: { 'x-api-key': key, prefer: 'respond-async' } });
    assert.equal(response.status, 202);
    return response.headers.get('content-location')!;
  };
  await kickOff('/fhir/$export?_type=Patient');
  const job = (await claimExport(db.database, 'browser-test', 30))!;
  await runExport({ database: db.database, settings: services.config.bulkExport, owner: 'browser-test', logger: services.logger, stopping: () => false }, job);
  const queued = await kickOff('/fhir/Patient/$export');

  const context = await browser.newContext();
  const page = await context.newPage();
  const console = watchConsole(page);
  await page.goto(`${adminUrl}/`);
  await page.getByLabel('E-mail').fill(siteAdmin.email);
  await page.getByLabel('Password').fill(testPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Exports' }).click();
  await page.getByRole('heading', { level: 1, name: 'Exports' }).waitFor();
  const jobs = page.getByRole('table', { name: 'Bulk Data exports, newest first' });
  await jobs.getByRole('row').nth(2).waitFor();
  assert.equal(await jobs.getByRole('row').count(), 3, 'a header row and two exports');
  const newest = await jobs.getByRole('row').nth(1).innerText();
  assert.match(newest, /Patient\/\$export/);
  assert.match(newest, /queued/);
  const completed = await jobs.getByRole('row').nth(2).innerText();
  assert.match(completed, /completed/);
  assert.match(completed, /2 in 1 file/);
  assert.match(completed, /Patient 2/);
  assert.match(completed, /127\.0\.0\.1/);
  await page.getByText(/kept 24 hours/).waitFor();
  await screenshot(page, 'exports');
  assert.deepEqual(await accessibilityViolations(page), []);

  await jobs.getByRole('row').nth(1).getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel export' }).click();
  await jobs.getByRole('row').nth(2).waitFor({ state: 'detached' });
  assert.equal((await fetch(queued, { headers: { 'x-api-key': key } })).status, 404, 'the client polling it now gets 404');
  const { rows } = await db.database.query("SELECT details FROM audit_event WHERE site_id = $1 AND action = 'bulk-export.cancelled'", [site.siteId]);
  assert.equal(rows.length, 1);
  assert.deepEqual(console.errors, []);
  await context.close();
});

test("the exports API: another site's admin gets 404, a clinician 403, an unknown export 404", async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const signIn = async (email: string) => {
    const response = await fetch(`${adminUrl}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: testPassword }) });
    const csrf = ((await response.json()) as { csrf_token: string }).csrf_token;
    return { cookie: String(response.headers.get('set-cookie')).split(';')[0]!, 'x-csrf-token': csrf, 'content-type': 'application/json' };
  };
  const stranger = await signIn((await createTestUser(db.database, other, 'site-admin')).email);
  const clinician = await signIn((await createTestUser(db.database, site, 'clinician')).email);
  const owner = await signIn((await createTestUser(db.database, site, 'site-admin')).email);
  assert.equal((await fetch(`${adminUrl}/api/sites/${site.siteId}/exports`, { headers: stranger })).status, 404);
  assert.equal((await fetch(`${adminUrl}/api/sites/${site.siteId}/exports`, { headers: clinician })).status, 403);
  assert.equal((await fetch(`${adminUrl}/api/sites/${site.siteId}/exports`, { headers: owner })).status, 200);
  const missing = await fetch(`${adminUrl}/api/sites/${site.siteId}/exports/00000000-0000-4000-8000-000000000000/cancel`, { method: 'POST', headers: owner, body: '{}' });
  assert.equal(missing.status, 404);
});
