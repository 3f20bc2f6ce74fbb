// In headless Chromium: a site admin finds the one failed message among 5,000 with the filters,
// jumps to a date, reads times to the second with their zone, reprocesses a message refused for
// its MSH-4 once the client is fixed, and reads the site's refused traffic. Axe checks each page;
// screenshots at desktop and phone sizes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { adminSurface } from '../../src/admin/surface.ts';
import { createIntegrationClient, updateIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { recordMessage } from '../../src/domain/messages/message-log.ts';
import { refusedTrafficRecorder } from '../../src/domain/refused-traffic/recorder.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { hl7v2Rerun } from '../../src/hl7v2/intake/rerun.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { accessibilityViolations, fitsWidth, launchChromium, screenshot, watchConsole } from './browser-support.ts';
import { createTestUser, testPassword } from './support.ts';

let db: TestDatabase;
let site: SiteContext;
let admin: FastifyInstance;
let url: string;
let browser: Browser;
let email: string;

before(async () => {
  db = await createTestDatabase();
  site = await createTestSite(db.database);
  email = (await createTestUser(db.database, site, 'site-admin')).email;
  admin = await createOrigin(adminSurface, { ...testServices(db.database), messageRerun: hl7v2Rerun(db.database) });
  url = await admin.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
  // 5,000 messages a minute apart ending 2026-03-10 12:00 UTC; number 4242 failed (AE).
  await db.database.query(
    `INSERT INTO inbound_message (site_id, id, protocol, transport, sending_application, sending_facility, control_id, message_type,
            outcome, ack_code, problems, ack_text, raw, remote_address, received_at, patient_identifier)
     SELECT $1, gen_random_uuid(), 'hl7v2', 'mllp', 'LIS', 'MAIN', 'LAB' || i, 'ORU^R01',
            CASE WHEN i = 4242 THEN 'error' ELSE 'processed' END, CASE WHEN i = 4242 THEN 'AE' ELSE 'AA' END,
            CASE WHEN i = 4242 THEN '[{"severity":"error","code":"101","location":"PID-3","message":"PID-3 is required"}]'::jsonb ELSE '[]' END,
            'MSA|AA', convert_to('MSH|^~\\&|LIS|MAIN', 'UTF8'), '127.0.0.1',
            timestamptz '2026-03-10T12:00:07Z' - (5000 - i) * interval '1 minute', 'MRN' || (i % 300)
       FROM generate_series(1, 5000) AS i`,
    [site.siteId],
  );
});
after(async () => {
  await browser?.close();
  await admin?.close();
  await db?.drop();
});

async function signedInPage(width: number, height: number): Promise<{ page: Page; close: () => Promise<void>; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height }, timezoneId: 'UTC', locale: 'en-GB' });
  const page = await context.newPage();
  const console = watchConsole(page);
  await page.goto(`${url}/`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(testPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  return { page, close: () => context.close(), errors: console.errors };
}

test('the one failed message among 5,000 is found with a filter; times carry seconds and the zone; a jump opens a date', { timeout: 300_000 }, async () => {
  const { page, close, errors } = await signedInPage(1280, 900);
  await page.getByRole('link', { name: 'Messages', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Messages' }).waitFor();
  await page.getByText('5,000 messages match.').waitFor();
  const firstTime = await page.getByRole('row').nth(1).getByRole('link').innerText();
  assert.equal(firstTime, '2026-03-10 12:00:07 UTC');
  assert.deepEqual(await accessibilityViolations(page), []);

  const search = page.getByRole('search', { name: 'Search the message log' });
  await search.getByLabel('Outcome').selectOption('AE');
  await search.getByRole('button', { name: 'Search' }).click();
  await page.getByText('1 message matches the filters.').waitFor();
  const rows = page.getByRole('row');
  assert.equal(await rows.count(), 2);
  assert.match(await rows.nth(1).innerText(), /LAB4242[\s\S]*PID-3 is required/);
  await screenshot(page, 'admin-messages-search');
  assert.deepEqual(await accessibilityViolations(page), []);

  await search.getByRole('button', { name: 'Clear' }).click();
  await page.getByText('5,000 messages match').waitFor();
  const jump = page.getByRole('form', { name: 'Go to a date' });
  await jump.getByLabel(/Go to/).fill('2026-03-09T00:00:30');
  await jump.getByRole('button', { name: 'Go' }).click();
  await page.getByText(/Showing from/).waitFor();
  assert.match(await page.getByRole('row').nth(1).innerText(), /^2026-03-09 00:00:07 UTC/);
  await page.getByRole('link', { name: 'Older messages' }).click();
  await page.getByRole('row').nth(1).waitFor();
  assert.deepEqual(errors, []);
  await close();

  const phone = await signedInPage(390, 844);
  await phone.page.goto(`${url}/#/sites/${site.siteId}/messages?outcome=AE`);
  await phone.page.getByText('1 message matches the filters.').waitFor();
  assert.ok(await fitsWidth(phone.page), 'the page fits a phone\'s width');
  await screenshot(phone.page, 'admin-messages-search-phone');
  await phone.close();
});

test('a message refused for its MSH-4 is reprocessed from its page once the client is fixed', { timeout: 300_000 }, async () => {
  const client = await createIntegrationClient(db.database, site.siteId, { name: 'Lab', protocol: 'hl7-mllp', allowedIps: '127.0.6.1', sendingApplication: 'LAB', sendingFacility: 'MAIN' }, { kind: 'operator' });
  const { id } = await db.database.transaction((tx) =>
    recordMessage(tx, site, {
      protocol: 'hl7v2', transport: 'mllp', sendingApplication: 'LAB', sendingFacility: 'ANNEX', controlId: 'REFUSED-1', messageType: 'ADT^A01',
      outcome: 'refused', ackCode: 'AR', problems: [{ severity: 'error', code: '204', location: 'MSH-3', message: 'sender not authorized: MSH-3 "LAB" / MSH-4 "ANNEX" match no integration client for this address' }],
      ackText: 'MSA|AR|REFUSED-1', raw: Buffer.from('MSH|^~\\&|LAB|ANNEX|GW|SITE|20260301080000+0000||ADT^A01^ADT_A01|REFUSED-1|P|2.5.1\rPID|1||BR-1^^^H^MR||Doe^Jo\r'),
      remoteAddress: '127.0.6.1', patientIdentifier: 'BR-1',
    }),
  );
  const { page, close, errors } = await signedInPage(1280, 900);
  await page.goto(`${url}/#/sites/${site.siteId}/messages?outcome=refused`);
  await page.getByRole('link', { name: /2026|\d{2}:\d{2}:\d{2}/ }).first().click();
  await page.getByRole('heading', { level: 1, name: /ADT\^A01/ }).waitFor();
  assert.match(page.url(), new RegExp(id));
  const reprocess = page.getByRole('button', { name: 'Reprocess' });
  await reprocess.click();
  await page.getByRole('dialog').getByRole('button', { name: 'Reprocess' }).click();
  await page.getByText(/MSH-4 "ANNEX" match no integration client/).nth(1).waitFor();
  assert.deepEqual(await accessibilityViolations(page), []);

  await updateIntegrationClient(db.database, site.siteId, client.id, { sendingFacility: 'ANNEX' }, { kind: 'operator' });
  await reprocess.click();
  await page.getByRole('dialog').getByRole('button', { name: 'Reprocess' }).click();
  await page.getByRole('heading', { level: 2, name: 'Reprocessed attempts' }).waitFor();
  assert.match(await page.getByRole('region', { name: 'Reprocessed attempts' }).first().innerText(), /AA\s+processed/);
  assert.equal(await page.getByRole('button', { name: 'Reprocess' }).count(), 0, 'an accepted message is not offered again');
  await screenshot(page, 'admin-message-reprocessed');
  assert.deepEqual(await accessibilityViolations(page), []);
  assert.deepEqual(errors, []);
  await close();
});

test('the site\'s refused traffic lists senders and keys refused on its behalf', { timeout: 300_000 }, async () => {
  const recorder = refusedTrafficRecorder(db.database);
  for (let i = 0; i < 4; i++) recorder.record({ siteId: site.siteId, surface: 'http', kind: 'http-api-key-revoked', remoteAddress: '127.0.6.9', reason: 'the API key has been revoked', details: { key_prefix: 'cg_5814d36817a5', origin: 'fhir', request: 'GET /fhir/Patient' } });
  recorder.record({ siteId: site.siteId, surface: 'mllp', kind: 'mllp-sender-not-authorized', remoteAddress: '127.0.6.1', reason: 'sender not authorized: MSH-3 "LAB" / MSH-4 "ANNEX" match no integration client for this address', details: { sending_application: 'LAB', sending_facility: 'ANNEX', control_id: 'REFUSED-2' } });
  await recorder.settle();
  for (const [width, height, name] of [[1280, 900, 'admin-refused-traffic'], [390, 844, 'admin-refused-traffic-phone']] as const) {
    const { page, close, errors } = await signedInPage(width, height);
    await page.goto(`${url}/#/sites/${site.siteId}/refused-traffic`);
    await page.getByRole('heading', { level: 1, name: 'Refused traffic' }).waitFor();
    const text = await page.getByRole('region', { name: 'Refused traffic' }).first().innerText();
    assert.match(text, /API key revoked[\s\S]*key cg_5814d36817a5[\s\S]*4 times/);
    assert.match(text, /MSH-4 ANNEX/);
    assert.deepEqual(await accessibilityViolations(page), []);
    if (width < 500) assert.ok(await fitsWidth(page), 'the page fits a phone\'s width');
    await screenshot(page, name);
    assert.deepEqual(errors, []);
    await close();
  }
});
