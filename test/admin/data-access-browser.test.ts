// Issue 26 point 14 in the browser: a site administrator opens the site's data access log and
// finds a patient's reads by FHIR key and by the app's users.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { adminSurface } from '../../src/admin/surface.ts';
import { recordOperatorRead } from '../../src/cli/record-read.ts';
import { dataAccessRecorder } from '../../src/domain/audit/data-access.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { createTestApiKey, testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { accessibilityViolations, launchChromium, screenshot, watchConsole } from './browser-support.ts';
import { createTestUser, testPassword } from './support.ts';

let db: TestDatabase;
let admin: FastifyInstance;
let fhir: FastifyInstance;
let browser: Browser;
let adminUrl: string;
let fhirUrl: string;

before(async () => {
  db = await createTestDatabase();
  const services = testServices(db.database);
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

test('a site administrator filters the data access log by patient and sees who read what, from where', { timeout: 120_000 }, async () => {
  const site = await createTestSite(db.database);
  const siteAdmin = await createTestUser(db.database, site, 'site-admin');
  const key = await createTestApiKey(db.database, site);
  const headers = { 'x-api-key': key, 'content-type': 'application/fhir+json' };
  const created = async (identifier: string) =>
    ((await (await fetch(`${fhirUrl}/fhir/Patient`, { method: 'POST', headers, body: JSON.stringify({ resourceType: 'Patient', identifier: [{ value: identifier }], name: [{ text: identifier }] }) })).json()) as { id: string }).id;
  const watched = await created('BR-WATCHED');
  const other = await created('BR-OTHER');
  for (const id of [watched, other, watched]) assert.equal((await fetch(`${fhirUrl}/fhir/Patient/${id}`, { headers })).status, 200);
  await dataAccessRecorder(db.database).settled();
  // And the operator's chart read on the command line (written before the command prints).
  await recordOperatorRead(db.database, site.siteId, { interaction: 'view', resourceType: 'Patient', resourceIds: [other], patientIds: [other] });

  const context = await browser.newContext();
  const page = await context.newPage();
  const console = watchConsole(page);
  await page.goto(`${adminUrl}/`);
  await page.getByLabel('E-mail').fill(siteAdmin.email);
  await page.getByLabel('Password').fill(testPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Data access' }).click();
  await page.getByRole('heading', { level: 1, name: 'Data access' }).waitFor();
  const records = page.getByRole('table', { name: 'Data access records' });
  await records.getByRole('row').nth(4).waitFor();
  assert.equal(await records.getByRole('row').count(), 5, 'a header row, three FHIR reads and the operator\'s');
  const newest = await records.getByRole('row').nth(1).innerText();
  assert.match(newest, /operator/);
  assert.match(newest, /Command line view/);
  await page.getByLabel('Patient (FHIR id)').fill(watched);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(new RegExp(`patient=${watched}`));
  await records.getByRole('row').nth(2).waitFor();
  assert.equal(await records.getByRole('row').count(), 3, 'the two reads of the watched patient');
  const first = records.getByRole('row').nth(1);
  assert.match(await first.innerText(), /cg_[0-9a-f]{12}/);
  assert.match(await first.innerText(), /127\.0\.0\.1/);
  assert.match(await first.innerText(), /FHIR read/);
  await screenshot(page, 'data-access-by-patient');
  assert.deepEqual(await accessibilityViolations(page), []);
  assert.deepEqual(console.errors, []);
  await context.close();
});

/** The saved value, waited for (at most 10 s) until it differs from the default. */
async function retentionOf(siteId: string): Promise<number> {
  for (let i = 0; ; i++) {
    const { rows } = await db.database.query<{ days: number }>('SELECT data_access_retention_days AS days FROM site WHERE id = $1', [siteId]);
    if (rows[0]!.days !== 2190 || i >= 100) return rows[0]!.days;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a service administrator sets the site\'s data access retention on its overview; a site administrator only reads it', { timeout: 120_000 }, async () => {
  const site = await createTestSite(db.database);
  const serviceAdmin = await createTestUser(db.database, null, 'service-admin');
  const siteAdmin = await createTestUser(db.database, site, 'site-admin');
  const context = await browser.newContext();
  const page = await context.newPage();
  const console = watchConsole(page);
  const signIn = async (email: string) => {
    await page.goto(`${adminUrl}/`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(testPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(email).first().waitFor();
  };
  await signIn(serviceAdmin.email);
  await page.goto(`${adminUrl}/#/sites/${site.siteId}`);
  const retention = page.getByLabel('Data access log retention (days)');
  await retention.waitFor();
  assert.equal(await retention.inputValue(), '2190');
  await retention.fill('400');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText(/last changed/).waitFor();
  assert.equal(await retentionOf(site.siteId), 400);
  await page.getByRole('button', { name: 'Sign out' }).or(page.getByRole('link', { name: 'Sign out' })).click();
  await signIn(siteAdmin.email);
  await page.goto(`${adminUrl}/#/sites/${site.siteId}`);
  await page.getByText('The data access log is kept 400 days: a service administrator sets this.').waitFor();
  assert.equal(await page.getByLabel('Data access log retention (days)').count(), 0);
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText(/last changed/).waitFor();
  assert.equal(await retentionOf(site.siteId), 400, 'saving the other settings keeps it');
  assert.deepEqual(console.errors, []);
  await context.close();
});
