// In headless Chromium: a site admin opens Activity and sees the service's health, the last
// hour's and day's counts per sender of every kind (MSH-3/MSH-4, integration client, API key,
// calling AE title), a uPlot chart of HL7, DICOM and FHIR traffic with its legend and a table of
// its figures per hour, and the page updating by itself; axe finds nothing; screenshots at
// desktop and phone sizes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import { seedSenderTraffic } from '../domain/activity/support.ts';
import { receivedInstance } from '../domain/imaging/fixtures.ts';
import { seedRecentTraffic } from '../domain/messages/support.ts';
import { accessibilityViolations, fitsWidth, screenshot, useAdminInBrowser, watchConsole } from './browser-support.ts';

const app = useAdminInBrowser('site-admin');

test('the activity dashboard shows counts, senders and a chart, and updates itself', { timeout: 300_000 }, async () => {
  // Seeded a second before the page asks: the message exactly an hour older (i = 12) is then out
  // of the last hour, the rest as in test/domain/messages/message-activity.test.ts. The chart's
  // buckets end with the current five minutes, so the oldest message (23 h 55 min back) stays in
  // the chart only while the page answers within the five minutes it was seeded in: seeding waits
  // for the next five minutes when the current ones are nearly over.
  const seededAt = await secondIntoFiveMinutesWithRoom(60_000);
  await seedRecentTraffic(app.db.database, app.site.siteId, seededAt);
  // test/domain/activity/support.ts: the LIS over MLLP is the client "Lab analyser", an EHR's key
  // makes FHIR requests, CT_SCANNER sends instances; three of them are in the imaging index.
  const { key } = await seedSenderTraffic(app.db.database, app.site, seededAt);
  for (let i = 0; i < 3; i++) await app.db.database.transaction((tx) => indexInstance(tx, app.site, receivedInstance({ callingAeTitle: 'CT_SCANNER' })));
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
    const health = await page.getByRole('region', { name: 'Service health' }).innerText();
    assert.match(health, /Ready\s+yes: the database is reachable/);
    assert.match(health, /Last error\s+\d/);
    // Lab analyser: the even half of the HL7 traffic (hour 6, 4 accepted, 2 errored; day 144, 115, 29).
    assert.match(await page.getByRole('region', { name: 'Integration clients of the last 24 hours' }).innerText(), /Lab analyser\s+6, 4, 2\s+144, 115, 29/);
    // FHIR requests every five minutes, every twentieth errored: hour 11 and 1, day 273 and 15.
    const keys = await page.getByRole('region', { name: 'API keys of the last 24 hours' }).innerText();
    assert.ok(keys.includes(`EHR interface (cg_${key.prefix}_…)`), keys);
    assert.match(keys, /FHIR\s+11, 1\s+273, 15/);
    // CT_SCANNER: associations every hour (1 in the last, 24 in the day), 3 instances indexed, failures every fiftieth.
    assert.match(await page.getByRole('region', { name: 'Calling AE titles of the last 24 hours' }).innerText(), /CT_SCANNER\s+1, 0, 3, 1\s+24, 0, 3, 6/);
    await page.locator('.chart canvas').waitFor();
    assert.match(await page.locator('.u-legend').innerText(), /HL7 received[\s\S]*HL7 errored or refused[\s\S]*DICOM instances stored[\s\S]*DICOM instances failed[\s\S]*FHIR requests[\s\S]*FHIR requests errored/i);
    assert.match(await page.getByRole('figure').locator('..').innerText(), /Last 24 hours: 288 HL7 received, 35 HL7 errored or refused, 282 DICOM instances stored, 6 DICOM instances failed, 288 FHIR requests, 15 FHIR requests errored\./);
    await page.getByText('The chart\'s figures per hour').click();
    const hours = await page.getByRole('region', { name: 'The chart per hour' }).locator('tbody tr').count();
    assert.ok(hours === 24 || hours === 25, `a row per hour the day touches (${hours})`);
    await page.getByText('The chart\'s figures per hour').click(); // closed again for the screenshot
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

/** A second before now, after waiting, if need be, for five minutes of the clock with at least `roomMs` left. */
async function secondIntoFiveMinutesWithRoom(roomMs: number): Promise<Date> {
  const fiveMinutesMs = 300_000;
  const seededAt = Date.now() - 1_000;
  const left = fiveMinutesMs - (seededAt % fiveMinutesMs);
  if (left >= roomMs) return new Date(seededAt);
  await delay(left + 1_000);
  return new Date(Date.now() - 1_000);
}
