// Fixes of the admin app in headless Chromium: a user's role changes only with its Save button
// (arrowing through the options changes nothing); changing a site's AE title asks for
// confirmation; every page a service administrator uses fits a 390 px phone screen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { findSiteById } from '../../src/domain/sites/sites.ts';
import { findUserById } from '../../src/domain/users/users.ts';
import { createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { accessibilityViolations, fitsWidth, screenshot, useAdminInBrowser, watchConsole } from './browser-support.ts';
import { admitPatientWithResults } from './clinical-fixtures.ts';
import { createTestUser } from './support.ts';

const app = useAdminInBrowser('service-admin');

async function signIn(page: Page): Promise<void> {
  await app.signIn(page);
  await page.getByRole('heading', { level: 1, name: 'Sites' }).waitFor();
}

test('a role changes only when saved, and an AE title change asks first', { timeout: 300_000 }, async () => {
  const clinician = await createTestUser(app.db.database, app.site, 'clinician');
  const context = await app.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const console = watchConsole(page);
  await signIn(page);
  await page.goto(`${app.url}/#/sites/${app.site.siteId}/users`);
  const role = page.getByRole('combobox', { name: `Role of ${clinician.email}` });
  // The row names whose role the button saves (the cell's name stays the e-mail address).
  const save = page.getByRole('row').filter({ hasText: clinician.email }).getByRole('button', { name: 'Save role' });
  assert.equal(await save.isDisabled(), true);
  await role.focus();
  await page.keyboard.press('ArrowDown');
  await page.waitForTimeout(300);
  assert.equal((await findUserById(app.db.database, clinician.id))!.role, 'clinician', 'arrowing through the roles changes nothing');
  await role.selectOption('site-admin');
  assert.equal(await save.isDisabled(), false);
  const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/users/${clinician.id}`));
  await save.click();
  assert.equal((await saved).status(), 200);
  assert.equal((await findUserById(app.db.database, clinician.id))!.role, 'site-admin');
  assert.deepEqual(await accessibilityViolations(page), []);

  await page.goto(`${app.url}/#/sites/${app.site.siteId}`);
  const settings = page.getByRole('form', { name: 'Site settings' });
  await settings.getByLabel('DICOM AE title').fill('NEWTITLE');
  await settings.getByRole('button', { name: 'Save settings' }).click();
  const confirm = page.getByRole('dialog', { name: 'Change the DICOM AE title' });
  await confirm.getByText(`Modalities and PACS that send to ${app.site.aeTitle} will be refused`).waitFor();
  assert.deepEqual(await accessibilityViolations(page), []);
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  assert.equal((await findSiteById(app.db.database, app.site.siteId))!.aeTitle, app.site.aeTitle, 'cancelled: nothing saved');
  await settings.getByRole('button', { name: 'Save settings' }).click();
  const patched = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/sites/${app.site.siteId}`));
  await confirm.getByRole('button', { name: 'Change the AE title' }).click();
  assert.equal((await patched).status(), 200);
  assert.equal((await findSiteById(app.db.database, app.site.siteId))!.aeTitle, 'NEWTITLE');
  // Saving other settings with the same title asks nothing.
  await settings.getByLabel('Name').fill('Renamed site');
  const renamed = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/sites/${app.site.siteId}`));
  await settings.getByRole('button', { name: 'Save settings' }).click();
  assert.equal((await renamed).status(), 200);
  assert.deepEqual(console.errors, []);
  await context.close();
});

test('the service administrator\'s pages fit a 390 px phone screen', { timeout: 300_000 }, async () => {
  // Pages with rows in them: long names, keys, messages, a study, a patient with results.
  await createTestSite(app.db.database, { name: 'Northfield Regional Imaging and Diagnostic Centre (East Wing)' });
  await createTestApiKey(app.db.database, app.site);
  await admitPatientWithResults(app.db.database, app.site, 'PHONE-1');
  const patient = (await resourceStore(app.db.database, app.site).findPatientByBusinessIdentifier('PHONE-1'))!;
  const context = await app.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const console = watchConsole(page);
  await signIn(page);
  const S = `/sites/${app.site.siteId}`;
  const pages = ['/sites', '/admins', '/audit', '/account', S, `${S}/users`, `${S}/keys`, `${S}/clients`, `${S}/worklist`, `${S}/patients`, `${S}/patients?name=martin`, `${S}/patients/${patient.id}`, `${S}/messages`, `${S}/connectivity`, `${S}/dicom-destinations`, `${S}/audit`, `${S}/data-access`, `${S}/exports`];
  const tooWide: string[] = [];
  for (const path of pages) {
    await page.goto(`${app.url}/#${path}`);
    await page.locator('main h1').first().waitFor();
    await page.waitForLoadState('networkidle');
    if (!(await fitsWidth(page))) tooWide.push(`${path}: ${await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)} px`);
  }
  assert.deepEqual(tooWide, []);
  await page.goto(`${app.url}/#/sites`);
  await page.locator('main h1').first().waitFor();
  await screenshot(page, 'sites-phone');
  assert.deepEqual(console.errors, []);
  await context.close();
});
