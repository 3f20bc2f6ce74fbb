// In headless Chromium: a site admin sets the site's time zone and an integration client's from
// the admin app; a name that is not an IANA zone is explained next to the field, and the browser
// offers the zone names as suggestions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { adminSurface } from '../../src/admin/surface.ts';
import { findIntegrationClient, listIntegrationClients } from '../../src/domain/clients/integration-clients.ts';
import { findSiteById } from '../../src/domain/sites/sites.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { accessibilityViolations, launchChromium, watchConsole } from './browser-support.ts';
import { createTestUser, testPassword } from './support.ts';

let db: TestDatabase;
let admin: FastifyInstance;
let browser: Browser;
let adminUrl: string;
let site: SiteContext;
let email: string;

before(async () => {
  db = await createTestDatabase();
  site = await createTestSite(db.database);
  email = (await createTestUser(db.database, site, 'site-admin')).email;
  admin = await createOrigin(adminSurface, testServices(db.database));
  adminUrl = await admin.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await admin?.close();
  await db?.drop();
});

const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });

test('the site settings and the integration client form set a time zone, validated by field', { timeout: 300_000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const console = watchConsole(page);
  await page.goto(`${adminUrl}/`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(testPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.goto(`${adminUrl}/#/sites/${site.siteId}`);
  await heading(page, site.siteName).waitFor();

  const settings = page.getByRole('form', { name: 'Site settings' });
  const zone = settings.getByLabel('Time zone');
  assert.equal(await zone.inputValue(), '');
  const suggestions = await page.locator(`datalist#${await zone.getAttribute('list')} option`).evaluateAll((options) => options.map((o) => (o as any).value as string));
  assert.ok(suggestions.includes('UTC') && suggestions.includes('Europe/London') && suggestions.includes('America/New_York'), 'IANA names are suggested');
  await zone.fill('Mars/Olympus_Mons');
  await settings.getByRole('button', { name: 'Save settings' }).click();
  await settings.getByText('"Mars/Olympus_Mons" is not an IANA time zone name').waitFor();
  assert.equal(await zone.getAttribute('aria-invalid'), 'true');
  assert.equal((await findSiteById(db.database, site.siteId))!.timeZone, null, 'nothing was saved');
  await zone.fill('Europe/London');
  const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/sites/${site.siteId}`));
  await settings.getByRole('button', { name: 'Save settings' }).click();
  assert.equal((await saved).status(), 200);
  assert.equal((await findSiteById(db.database, site.siteId))!.timeZone, 'Europe/London');
  assert.deepEqual(await accessibilityViolations(page), []);

  await page.goto(`${adminUrl}/#/sites/${site.siteId}/clients`);
  await heading(page, 'Integration clients').waitFor();
  const register = page.getByRole('form', { name: 'Register an integration client' });
  await register.getByLabel('Name').fill('US reference lab');
  await register.getByLabel('Allowed IPs').fill('192.0.2.44');
  await register.getByText('Blank: the site\'s (Europe/London).').waitFor();
  await register.getByLabel('Time zone').fill('+05:00');
  await register.getByRole('button', { name: 'Register client' }).click();
  await register.getByText('"+05:00" is not an IANA time zone name').waitFor();
  await register.getByLabel('Time zone').fill('America/New_York');
  await register.getByRole('button', { name: 'Register client' }).click();
  await page.getByRole('cell', { name: 'US reference lab' }).waitFor();
  await page.getByRole('cell', { name: 'America/New_York' }).waitFor();
  const [client] = await listIntegrationClients(db.database, site.siteId);
  assert.equal(client!.timeZone, 'America/New_York');

  // Editing: clearing the field hands the client back to the site's zone.
  await page.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('form', { name: 'Edit US reference lab' });
  assert.equal(await edit.getByLabel('Time zone').inputValue(), 'America/New_York');
  await edit.getByLabel('Time zone').fill('');
  const edited = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/clients/${client!.id}`));
  await edit.getByRole('button', { name: 'Save changes' }).click();
  assert.equal((await edited).status(), 200);
  assert.equal((await findIntegrationClient(db.database, site.siteId, client!.id))!.timeZone, null);
  assert.deepEqual(console.errors, []);
  await context.close();
});
