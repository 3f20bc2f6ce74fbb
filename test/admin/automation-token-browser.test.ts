// In headless Chromium: a service admin creates an automation token on the service admins' page,
// sees it once, finds it working on the API, and revokes it; the page passes axe.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accessibilityViolations, screenshot, useAdminInBrowser, watchConsole } from './browser-support.ts';

const app = useAdminInBrowser('service-admin');

test('a service admin creates an automation token, sees it only once, and revokes it', { timeout: 300_000 }, async () => {
  const context = await app.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const console = watchConsole(page);
  await app.signIn(page);
  await page.getByRole('link', { name: 'Service admins' }).click();
  await page.getByRole('heading', { level: 2, name: 'Automation tokens', exact: true }).waitFor();
  await page.getByText('No automation tokens').waitFor();
  assert.deepEqual(await accessibilityViolations(page), []);

  const create = page.getByRole('form', { name: 'Create an automation token' });
  await create.getByLabel('Label').fill('fleet provisioning');
  await create.getByLabel('Expires').selectOption('30d');
  await create.getByRole('button', { name: 'Create token' }).click();
  const shown = page.getByLabel('The new automation token');
  await shown.waitFor();
  const token = await shown.inputValue();
  assert.match(token, /^cgat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  await page.getByText('Copy it now: it is shown only this once.').waitFor();
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'admin-automation-token-created');

  // The token works for a script (no cookie: a fetch that omits credentials).
  const status = async () => page.evaluate(async ([url, bearer]) => (await fetch(url!, { credentials: 'omit', headers: { authorization: `Bearer ${bearer}` } })).status, [`${app.url}/api/sites`, token]);
  assert.equal(await status(), 200);

  const row = page.getByRole('row', { name: /fleet provisioning/ });
  assert.match(await row.innerText(), /active/);
  // Shown once: after a reload only the prefix remains.
  await page.reload();
  await page.getByRole('heading', { level: 2, name: 'Automation tokens', exact: true }).waitFor();
  assert.equal(await page.getByLabel('The new automation token').count(), 0);
  assert.equal((await page.content()).includes(token.slice(-43)), false);
  await row.waitFor();

  await row.getByRole('button', { name: /Revoke/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
  await page.getByRole('row', { name: /fleet provisioning.*revoked/s }).waitFor();
  assert.equal(await status(), 401);
  assert.deepEqual(await accessibilityViolations(page), []);
  assert.deepEqual(console.errors, []);
  await context.close();
});
