// In headless Chromium: a site admin opens Activity and sees the last hour's and day's counts,
// per sender, a uPlot chart drawn from the library as published on npm, and the page updating by
// itself; axe finds nothing; screenshots at desktop and phone sizes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seedRecentTraffic } from '../domain/messages/support.ts';
import { accessibilityViolations, fitsWidth, screenshot, useAdminInBrowser, watchConsole } from './browser-support.ts';

const app = useAdminInBrowser('site-admin');

test('the activity dashboard shows counts, senders and a chart, and updates itself', { timeout: 300_000 }, async () => {
  // Seeded a second before the page asks: the message exactly an hour older (i = 12) is then out
  // of the last hour, the rest as in test/domain/messages/message-activity.test.ts.
  await seedRecentTraffic(app.db.database, app.site.siteId, new Date(Date.now() - 1_000));
  for (const [width, height, name] of [[1280, 900, 'admin-activity'], [390, 844, 'admin-activity-phone']] as const) {
    const context = await app.browser.newContext({ viewport: { width, height }, timezoneId: 'UTC', locale: 'en-GB' });
    const page = await context.newPage();
    const console = watchConsole(page);
    await app.signIn(page);
    await page.getByRole('link', { name: 'Activity', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor();
    const counts = await page.getByRole('region', { name: 'HL7 messages of the site' }).innerText();
    assert.match(counts, /Last hour\s+12\s+9\s+2\s+1/);
    assert.match(counts, /Last 24 hours\s+288\s+253\s+29\s+6/);
    const senders = await page.getByRole('region', { name: 'Senders of the last 24 hours' }).innerText();
    assert.match(senders, /LIS \/ MAIN\s+MLLP/);
    assert.match(senders, /RIS \/ MAIN\s+HTTP/);
    await page.locator('.chart canvas').waitFor();
    assert.match(await page.locator('.u-legend').innerText(), /Received[\s\S]*Errored or refused/i);
    if (width > 500) {
      // The page refreshes itself: a message arriving now is counted within the refresh period.
      const first = await page.getByRole('status').filter({ hasText: 'Updated' }).innerText();
      await page.getByRole('status').filter({ hasNotText: first }).filter({ hasText: 'Updated' }).waitFor({ timeout: 30_000 });
    } else {
      assert.ok(await fitsWidth(page), 'the page fits a phone\'s width');
    }
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshot(page, name);
    assert.deepEqual(console.errors, []);
    await context.close();
  }
});
