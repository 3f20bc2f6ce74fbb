// The idle warning in headless Chromium, with a 45-second idle limit (warned 19 s before) (CG_ADMIN_SESSION_IDLE_SECONDS):
// a dialog warns before the session ends and "Stay signed in" extends it; left alone, the
// session ends and the sign-in page says why.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accessibilityViolations, screenshot, useAdminInBrowser, watchConsole } from './browser-support.ts';

const app = useAdminInBrowser('clinician', { CG_ADMIN_SESSION_IDLE_SECONDS: '45' });

test('the idle warning appears before the limit, extends the session, and a session left alone ends with a message', { timeout: 300_000 }, async () => {
  const context = await app.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const console = watchConsole(page);
  await app.signIn(page);
  await page.getByRole('heading', { level: 1, name: 'Worklist' }).waitFor();

  const warning = page.getByRole('dialog', { name: 'Your session is about to end' });
  await warning.waitFor({ timeout: 60_000 });
  await warning.getByText(/you will be signed out in \d+ s\./).waitFor();
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'idle-warning');
  const extended = page.waitForResponse((r) => r.url().endsWith('/api/session/extend'));
  await warning.getByRole('button', { name: 'Stay signed in' }).click();
  assert.equal((await extended).status(), 200);
  await warning.waitFor({ state: 'hidden' });
  const { rows } = await app.db.database.query<{ idle: number }>('SELECT extract(epoch FROM now() - max(last_seen_at))::float AS idle FROM admin_session');
  assert.ok(rows[0]!.idle < 5, 'the extend call restarted the idle limit');

  // Work in another tab of the same browser keeps this one from warning or signing out.
  const other = await context.newPage();
  await other.goto(`${app.url}/#/sites/${app.site.siteId}/worklist`);
  // Longer than this tab's 26 s until its warning.
  for (let i = 0; i < 7; i++) {
    await other.waitForTimeout(5_000);
    await other.reload();
    await other.getByRole('heading', { level: 1, name: 'Worklist' }).waitFor();
    assert.equal(await warning.isVisible(), false, 'no warning while another tab is in use');
  }
  await other.close();

  // Left alone again: the warning comes back and, unanswered, the session ends.
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor({ timeout: 90_000 });
  await page.getByText('You were signed out after a period without activity.').waitFor();
  assert.equal((await app.db.database.query('SELECT 1 FROM admin_session')).rowCount, 0, 'ended on the server too');
  assert.deepEqual(console.errors, []);
  await context.close();
});
