// In headless Chromium: a site admin registers a C-MOVE destination from the admin app, sees a
// bad port explained, and removes the destination again; another site's admin does not see it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listDicomDestinations } from '../../src/domain/imaging/dicom-destinations.ts';
import { createTestSite } from '../support/sites.ts';
import { accessibilityViolations, useAdminInBrowser, watchConsole } from './browser-support.ts';

const app = useAdminInBrowser('site-admin');

test('a site admin registers, sees refused and removes a DICOM destination', { timeout: 300_000 }, async () => {
  const { db, site } = app;
  const other = await createTestSite(db.database);
  const context = await app.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const console = watchConsole(page);
  await app.signIn(page);
  await page.getByRole('link', { name: 'DICOM destinations' }).click();
  await page.getByRole('heading', { level: 1, name: 'DICOM destinations', exact: true }).waitFor();
  await page.getByText('No DICOM destinations yet').waitFor();
  assert.deepEqual(await accessibilityViolations(page), []);

  const registration = page.getByRole('form', { name: 'Register a DICOM destination' });
  await registration.getByLabel('AE title').fill('PACS_1');
  await registration.getByLabel('Host').fill('pacs.example.org');
  await registration.getByLabel('Port').fill('99999');
  await registration.getByRole('button', { name: 'Register destination' }).click();
  await page.getByText('port must be an integer from 1 to 65535').first().waitFor();
  assert.deepEqual(await listDicomDestinations(db.database, site), []);

  await registration.getByLabel('Port').fill('11112');
  await registration.getByRole('button', { name: 'Register destination' }).click();
  const row = page.getByRole('row', { name: /PACS_1/ });
  await row.waitFor();
  assert.match(await row.innerText(), /pacs\.example\.org\s+11112/);
  assert.deepEqual((await listDicomDestinations(db.database, site)).map((d) => [d.aeTitle, d.host, d.port]), [['PACS_1', 'pacs.example.org', 11112]]);

  // Another site's page is not found, like a site that does not exist.
  const foreign = await page.evaluate(async (url) => (await fetch(url)).status, `${app.url}/api/sites/${other.siteId}/dicom-destinations`);
  assert.equal(foreign, 404);

  await row.getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove destination' }).click();
  await page.getByText('No DICOM destinations yet').waitFor();
  assert.deepEqual(await listDicomDestinations(db.database, site), []);
  assert.deepEqual(console.errors, []);
  await context.close();
});
