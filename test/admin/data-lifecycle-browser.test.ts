// Data lifecycle in the browser: a site administrator sets the site's message body, export file
// and refused traffic retentions on its overview and reads its storage use, and the page passes axe.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordMessage } from '../../src/domain/messages/message-log.ts';
import { purgeMessageBodies } from '../../src/domain/retention/message-body-purge.ts';
import { cancelSitePurge, markSiteForPurge } from '../../src/domain/retention/site-offboarding.ts';
import { refreshStorageUsage } from '../../src/domain/retention/storage-usage.ts';
import { accessibilityViolations, screenshot, useAdminInBrowser, watchConsole } from './browser-support.ts';

const admin = useAdminInBrowser('site-admin');
/** The saved value, waited for (at most 10 s) until it is set. */
async function retentionOf(siteId: string): Promise<number | null> {
  for (let i = 0; ; i++) {
    const { rows } = await admin.db.database.query<{ days: number | null }>('SELECT message_body_retention_days AS days FROM site WHERE id = $1', [siteId]);
    if (rows[0]!.days !== null || i >= 100) return rows[0]!.days;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A signed-in browser page on the site's overview. */
async function siteOverview(siteId: string) {
  const context = await admin.browser.newContext();
  const page = await context.newPage();
  const console = watchConsole(page);
  await admin.signIn(page);
  await page.getByText('Sign out').first().waitFor();
  await page.goto(`${admin.url}/#/sites/${siteId}`);
  return { context, page, console };
}

test('a site administrator sets the message body retention and reads the storage use on the site\'s overview', { timeout: 120_000 }, async () => {
  const site = admin.site;
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { id } = await admin.db.database.transaction((tx) =>
      recordMessage(tx, site, {
        protocol: 'hl7v2', transport: 'mllp', sendingApplication: 'LAB', sendingFacility: 'HOSP', controlId: `BR-${i}`,
        messageType: 'ADT^A01', outcome: 'processed', ackCode: 'AA', problems: [], ackText: 'MSH|ack', raw: Buffer.from('MSH|'.padEnd(500, 'x')),
        receivedAt: new Date(Date.now() - 100 * 86_400_000),
      }),
    );
    ids.push(id);
  }
  await refreshStorageUsage(admin.db.database);

  const { context, page, console } = await siteOverview(site.siteId);

  const retention = page.getByLabel('Message body retention (days)');
  await retention.waitFor();
  assert.equal(await retention.inputValue(), '');
  const exportRetention = page.getByLabel('Export file retention (hours)');
  const refusalRetention = page.getByLabel('Refused traffic retention (days)');
  assert.equal(await exportRetention.inputValue(), '');
  assert.equal(await refusalRetention.inputValue(), '');
  const usage = page.getByRole('region', { name: 'Storage use by table' });
  await usage.waitFor();
  const messages = usage.getByRole('row').filter({ hasText: 'inbound_message' });
  assert.match(await messages.innerText(), /inbound_message\s+3\s/);
  assert.match(await page.getByRole('region', { name: 'Storage use', exact: true }).innerText(), /DICOM files\s+0 instances, 0 bytes/);

  await retention.fill('90');
  await exportRetention.fill('6');
  await refusalRetention.fill('120');
  await page.getByRole('button', { name: 'Save settings' }).click();
  assert.equal(await retentionOf(site.siteId), 90);
  const { rows: saved } = await admin.db.database.query<{ hours: number | null; days: number | null }>(
    'SELECT export_retention_hours AS hours, refused_traffic_retention_days AS days FROM site WHERE id = $1',
    [site.siteId],
  );
  assert.deepEqual(saved[0], { hours: 6, days: 120 });
  await page.getByText(/last changed/).waitFor();
  await page.getByRole('region', { name: 'Storage use by table' }).waitFor();
  assert.equal(await page.getByLabel('Export file retention (hours)').inputValue(), '6');
  assert.equal(await page.getByLabel('Refused traffic retention (days)').inputValue(), '120');
  await screenshot(page, 'site-overview-retention-and-usage');
  assert.deepEqual(await accessibilityViolations(page), []);

  // The purge keeps the entry and its acknowledgement; the message's page says the body went.
  assert.deepEqual(await purgeMessageBodies(admin.db.database, { pauseMs: 0 }), [{ siteId: site.siteId, purged: 3 }]);
  await page.goto(`${admin.url}/#/sites/${site.siteId}/messages/${ids[0]}`);
  await page.getByText(/by the site's message body retention/).waitFor();
  assert.match(await page.getByRole('region', { name: 'Acknowledgement sent' }).innerText(), /MSH\|ack/);
  assert.deepEqual(await accessibilityViolations(page), []);
  assert.deepEqual(console.errors, []);
  await context.close();
});

test('a site marked for offboarding says so on its overview, with the date of its purge, until the mark is cancelled', { timeout: 120_000 }, async () => {
  const site = admin.site;
  const marked = await admin.db.database.transaction((tx) => markSiteForPurge(tx, site.siteId, 14, { kind: 'operator' }));
  const { context, page, console } = await siteOverview(site.siteId);
  const warning = page.getByRole('note').filter({ hasText: 'Marked for offboarding' });
  await warning.waitFor();
  const text = await warning.innerText();
  assert.match(text, /purged after/);
  assert.match(text, new RegExp(String(marked.purgeAfter!.getUTCFullYear())));
  assert.match(text, /site offboard .* --cancel/);
  assert.deepEqual(await accessibilityViolations(page), []);

  await admin.db.database.transaction((tx) => cancelSitePurge(tx, site.siteId, { kind: 'operator' }));
  await page.reload();
  await page.getByLabel('Message body retention (days)').waitFor();
  assert.equal(await page.getByRole('note').filter({ hasText: 'Marked for offboarding' }).count(), 0);
  assert.deepEqual(console.errors, []);
  await context.close();
});
