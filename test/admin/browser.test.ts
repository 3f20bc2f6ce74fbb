// End to end in headless Chromium against real listening origins: a new operator signs in with
// the first-run account, sets up a site from the browser, and the site then works over FHIR,
// MLLP and DICOM with what the pages showed; a clinician reports a study that FHIR then serves.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { adminSurface } from '../../src/admin/surface.ts';
import { startDicomListener, type DicomListener } from '../../src/dicom/listener.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { startMllpListener, type RunningMllpListener } from '../../src/hl7v2/mllp/listener.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import type { Services } from '../../src/platform/services.ts';
import { ensureInitialAdmin, initialAdminEmail } from '../../src/server/first-run.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { fixturePath } from '../support/fixtures.ts';
import { testServices } from '../support/http.ts';
import { accessibilityViolations, fitsWidth, launchChromium, screenshot as capture, watchConsole } from './browser-support.ts';

const run = promisify(execFile);

let db: TestDatabase;
let services: Services;
let admin: FastifyInstance;
let fhir: FastifyInstance;
let dicom: DicomListener;
let mllp: RunningMllpListener;
let browser: Browser;
let adminUrl: string;
let fhirUrl: string;

before(async () => {
  db = await createTestDatabase();
  const base = testServices(db.database);
  dicom = await startDicomListener(base, { host: '127.0.0.1', port: 0, closeGraceMs: 1_000 });
  mllp = await startMllpListener(base, { host: '127.0.0.1', port: 0 });
  // The configuration the composition root would have built for these ports: what the
  // connectivity page shows is then what this test's DICOM peer uses. No DICOMweb origin here
  // (test/admin/study-viewer-browser.test.ts has the images): the study page says so.
  services = {
    ...base,
    config: { ...base.config, ports: { ...base.config.ports, dicom: dicom.port, mllp: mllp.port, dicomweb: undefined }, dicomPublic: { host: '127.0.0.1', port: dicom.port } },
  };
  await ensureInitialAdmin(db.database, services.config.dataDir, services.logger);
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
  await mllp?.close();
  await dicom?.close();
  await db?.drop();
});

async function fhirGet(path: string, key: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${fhirUrl}/fhir/${path}`, { headers: { 'x-api-key': key, accept: 'application/fhir+json' } });
  return { status: response.status, body: await response.json() };
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${adminUrl}/`);
  // Keyboard only: the e-mail field has focus on arrival; Tab to the password; Enter submits.
  await page.getByLabel('E-mail').waitFor();
  assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.name), 'email');
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  await page.keyboard.press('Enter');
}

/** Every page the test shows is kept as a screenshot and audited for WCAG 2.1 AA. */
const violations: string[] = [];
async function screenshot(page: Page, name: string): Promise<void> {
  await capture(page, name);
  violations.push(...(await accessibilityViolations(page)).map((v) => `${name}: ${v}`));
}

const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });

// One long story (it is the acceptance path); a loaded CI machine gets more than the default time.
test('a new operator sets up a site end to end from the browser; a clinician reports a study that FHIR serves', { timeout: 900_000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: adminUrl });
  const page = await context.newPage();
  const console = watchConsole(page);

  // 1. First-run service admin signs in with the password from the data directory.
  const initialPassword = readFileSync(join(services.config.dataDir, 'initial-admin-password'), 'utf8').trim();
  await page.goto(`${adminUrl}/`);
  await heading(page, 'Sign in').waitFor();
  await screenshot(page, '01-sign-in');
  await page.getByLabel('E-mail').fill(initialAdminEmail);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').getByText('The e-mail address or password is not correct.').waitFor();
  await page.getByLabel('Password').fill(initialPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Sites').waitFor();
  await page.getByText('No sites yet').waitFor();
  await screenshot(page, '02-sites-empty');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Service admins' }).click();
  await heading(page, 'Service admins').waitFor();
  await page.getByRole('cell', { name: initialAdminEmail }).waitFor();
  await screenshot(page, '02b-service-admins');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sites' }).click();
  await heading(page, 'Sites').waitFor();

  // 2. Create a site; an invalid AE title is explained next to its field.
  await page.getByLabel('Name').fill('Northfield Imaging');
  await page.getByLabel('DICOM AE title').fill('NORTH\\FIELD');
  await page.getByRole('button', { name: 'Create site' }).click();
  const aeField = page.getByLabel('DICOM AE title');
  await page.getByText('the DICOM AE title may not contain a backslash').waitFor();
  assert.equal(await aeField.getAttribute('aria-invalid'), 'true');
  const describedBy = (await aeField.getAttribute('aria-describedby'))!.split(' ');
  assert.ok(await page.locator(`#${describedBy.at(-1)}`).textContent().then((t) => t?.includes('backslash')), 'the error is tied to the field');
  await aeField.fill('NORTHFIELD');
  await page.getByRole('button', { name: 'Create site' }).click();
  await heading(page, 'Northfield Imaging').waitFor();
  const siteId = /#\/sites\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
  await screenshot(page, '03-site-overview');
  // The site switcher in the header: choosing does not navigate until Open.
  const switcher = page.getByRole('form', { name: 'Choose a site' });
  await switcher.getByLabel('Site').selectOption({ label: 'All sites' });
  await heading(page, 'Northfield Imaging').waitFor();
  await switcher.getByRole('button', { name: 'Open' }).click();
  await heading(page, 'Sites').waitFor();
  await page.getByRole('form', { name: 'Choose a site' }).getByLabel('Site').selectOption({ label: 'Northfield Imaging' });
  await page.getByRole('form', { name: 'Choose a site' }).getByRole('button', { name: 'Open' }).click();
  await heading(page, 'Northfield Imaging').waitFor();

  // 3. Users: a clinician with a chosen password.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await heading(page, 'Users').waitFor();
  await page.getByLabel('E-mail').fill('dr.reader@northfield.example');
  await page.getByLabel('Role').selectOption('clinician');
  await page.getByLabel('Initial password').fill('radiology reading room 7');
  await page.getByRole('button', { name: 'Add user' }).click();
  await page.getByRole('cell', { name: 'dr.reader@northfield.example' }).waitFor();
  await screenshot(page, '04-users');

  // 4. API keys: shown once, with a copy button; after a reload only the prefix remains.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await heading(page, 'API keys').waitFor();
  await page.getByText('No API keys yet').waitFor();
  await page.getByLabel('Label').fill('EHR FHIR integration');
  await page.getByRole('button', { name: 'Create key' }).click();
  const keyBox = page.locator('#new-api-key');
  await keyBox.waitFor();
  const key = await keyBox.inputValue();
  assert.match(key, /^cg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  await page.getByRole('button', { name: 'Copy the API key' }).click();
  await page.getByRole('button', { name: 'Copy the API key' }).getByText('Copied').waitFor();
  assert.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), key, 'the Copy button copies the key');
  await screenshot(page, '05-api-key-created');
  await page.reload();
  await heading(page, 'API keys').waitFor();
  await page.getByRole('cell', { name: 'EHR FHIR integration' }).waitFor();
  const content = await page.content();
  assert.ok(!content.includes(key), 'the key is not shown again');
  // cg_<12 hex>_<secret>; the base64url secret may itself contain '_', so not a split.
  assert.ok(!content.includes(key.slice('cg_'.length + 12 + 1)), 'not even its secret part');
  assert.ok(content.includes(key.slice(0, 'cg_'.length + 12)), 'its prefix is listed');
  await screenshot(page, '06-api-keys');

  // 5. FHIR with the key; revoke it (with confirmation) and FHIR answers 401.
  assert.equal((await fhirGet('Patient', key)).status, 200);
  await page.getByRole('button', { name: 'Revoke' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke API key' });
  await dialog.waitFor();
  await screenshot(page, '07-revoke-confirmation');
  // Focus starts on Cancel; Escape closes the dialog and nothing is revoked.
  assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), 'Cancel');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.equal((await fhirGet('Patient', key)).status, 200, 'the key still works after Cancel');
  await page.getByRole('button', { name: 'Revoke' }).click();
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByText('revoked', { exact: true }).first().waitFor();
  const revoked = await fhirGet('Patient', key);
  assert.equal(revoked.status, 401);
  assert.equal(revoked.body.resourceType, 'OperationOutcome');

  // A second key for the clinical checks below.
  await page.getByLabel('Label').fill('Reporting');
  await page.getByRole('button', { name: 'Create key' }).click();
  await keyBox.waitFor();
  const readerKey = await keyBox.inputValue();
  await page.getByRole('button', { name: 'I have stored it' }).click();

  // 6. Integration client: a bad address is explained; then an MLLP message from it is accepted.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Integration clients' }).click();
  await heading(page, 'Integration clients').waitFor();
  await page.getByLabel('Name').fill('Northfield LIS');
  await page.getByLabel('Allowed IPs').fill('127.0.0.1\n10.0.0.0/33');
  await page.getByRole('button', { name: 'Register client' }).click();
  await page.getByText('"10.0.0.0/33" has an invalid prefix length').waitFor();
  await page.getByLabel('Allowed IPs').fill('127.0.0.1\n10.20.0.0/16');
  await page.getByLabel('Sending application (MSH-3)').fill('NLIS');
  await page.getByLabel('Sending facility (MSH-4)').fill('NORTHFIELD');
  await page.getByRole('button', { name: 'Register client' }).click();
  await page.getByRole('cell', { name: 'Northfield LIS' }).waitFor();
  await screenshot(page, '08-integration-clients');

  const message = ['MSH|^~\\&|NLIS|NORTHFIELD|CG|CG|20240105101500||ADT^A01^ADT_A01|E2E-0001|P|2.5.1', 'EVN|A01|20240105101500', 'PID|1||1CT1^^^NORTHFIELD^MR||Lestrade^G||19500101|M', 'PV1|1|O'].join('\r') + '\r';
  const dir = mkdtempSync(join(tmpdir(), 'cg-admin-e2e-'));
  writeFileSync(join(dir, 'adt.mllp'), Buffer.concat([Buffer.from([0x0b]), Buffer.from(message), Buffer.from([0x1c, 0x0d])]));
  const sent = await run('mllp_send', ['-p', String(mllp.port), '-f', join(dir, 'adt.mllp'), '127.0.0.1'], { timeout: 60_000 });
  assert.match(sent.stdout, /MSA\|AA\|E2E-0001/);

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Messages' }).click();
  await heading(page, 'Messages').waitFor();
  await page.getByRole('cell', { name: 'E2E-0001' }).waitFor();
  await screenshot(page, '09-messages');
  await page.getByRole('link', { name: /\d/ }).filter({ hasText: /:/ }).first().click();
  await page.getByText('PID|1||1CT1^^^NORTHFIELD^MR||Lestrade^G||19500101|M').waitFor();
  await screenshot(page, '10-message');

  // 7. Connectivity: the values an engineer types into the modality; storescu uses exactly them.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Connectivity' }).click();
  await heading(page, 'Connectivity').waitFor();
  await screenshot(page, '11-connectivity');
  const settings = await page.locator('pre.raw').first().textContent();
  const called = /Called AE title: (.+)/.exec(settings!)![1]!;
  const host = /Host: (.+)/.exec(settings!)![1]!;
  const port = /Port: (\d+)/.exec(settings!)![1]!;
  assert.equal(called, 'NORTHFIELD');
  await run('storescu', ['-aet', 'CT_SCANNER', '-aec', called, host, port, fixturePath('dicom/CT_small.dcm')], { timeout: 60_000 });

  // 8. The audit log shows what the operator did.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit', exact: true }).click();
  await heading(page, 'Audit').waitFor();
  for (const action of ['site.created', 'user.created', 'api-key.created', 'api-key.revoked', 'integration-client.created']) {
    await page.getByRole('cell', { name: action, exact: true }).first().waitFor();
  }
  await screenshot(page, '12-audit');

  // Tablet width: no administration page makes the whole page scroll sideways (wide tables
  // scroll inside their own keyboard-focusable region).
  await page.setViewportSize({ width: 768, height: 1024 });
  for (const area of ['', '/users', '/keys', '/clients', '/messages', '/connectivity', '/audit']) {
    await page.goto(`${adminUrl}/#/sites/${siteId}${area}`);
    await page.locator('main h1').waitFor();
    await page.waitForLoadState('networkidle');
    assert.ok(await fitsWidth(page), `#/sites/${siteId}${area} fits a tablet`);
  }
  await screenshot(page, '12b-audit-tablet');
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await heading(page, 'Sign in').waitFor();
  assert.deepEqual(console.errors, []);

  // 9. The clinician: the study is on the worklist; they write, save and complete a report.
  const clinicianContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const clinician = await clinicianContext.newPage();
  const clinicianConsole = watchConsole(clinician);
  await signIn(clinician, 'dr.reader@northfield.example', 'radiology reading room 7');
  await heading(clinician, 'Worklist').waitFor();
  const nav = clinician.getByRole('navigation', { name: 'Main' });
  assert.equal(await nav.getByRole('link', { name: 'API keys' }).count(), 0, 'no keys link for a clinician');
  await clinician.getByLabel('Modality (CT, MR…)').fill('ct');
  await clinician.getByRole('button', { name: 'Apply filters' }).click();
  await clinician.getByText('1–1 of 1').waitFor();
  await screenshot(clinician, '13-worklist');
  await clinician.getByLabel('Modality (CT, MR…)').fill('MR');
  await clinician.getByRole('button', { name: 'Apply filters' }).click();
  await clinician.getByText('No studies match these filters').waitFor();
  await clinician.getByRole('button', { name: 'Clear' }).click();
  await clinician.getByText('1–1 of 1').waitFor();
  const studyLink = clinician.getByRole('table', { name: 'Studies' }).getByRole('link').first();
  await studyLink.click();
  await clinician.getByRole('heading', { name: 'Reports' }).waitFor();
  await clinician.getByText('Not reported yet').waitFor();
  await clinician.getByLabel('Report', { exact: true }).fill('Findings: no focal lesion.');
  await clinician.getByRole('button', { name: 'Save draft' }).click();
  await clinician.getByText(/^Draft saved at/).waitFor();
  await clinician.getByLabel('Report', { exact: true }).fill('Findings: no focal lesion. Impression: normal CT.');
  await clinician.getByRole('button', { name: 'Save draft' }).click();
  await clinician.getByText(/^Draft saved at/).waitFor();
  assert.equal((await fhirGet('DiagnosticReport?status=final', readerKey)).body.total ?? 0, 0);
  await screenshot(clinician, '14-study-report-editor');
  await clinician.getByRole('button', { name: 'Complete and sign' }).click();
  await clinician.getByRole('dialog', { name: 'Complete report' }).getByRole('button', { name: 'Complete and sign' }).click();
  await clinician.getByText(/Signed by dr\.reader@northfield\.example/).waitFor();
  await screenshot(clinician, '15-study-report-completed');

  // 10. The completed report is a final DiagnosticReport over FHIR.
  const finals = await fhirGet('DiagnosticReport?status=final', readerKey);
  assert.equal(finals.status, 200);
  const reports = (finals.body.entry ?? []).map((e: { resource: { status: string; conclusion: string } }) => e.resource);
  assert.equal(reports.length, 1);
  assert.equal(reports[0].status, 'final');
  assert.equal(reports[0].conclusion, 'Findings: no focal lesion. Impression: normal CT.');

  // 11. A clinician cannot open the keys page, even by its address; the API refuses too.
  await clinician.goto(`${adminUrl}/#/sites/${siteId}/keys`);
  await heading(clinician, 'No access').waitFor();
  assert.equal(await clinician.getByRole('table').count(), 0);
  const apiStatus = await clinician.evaluate(async (url) => (await fetch(url)).status, `/api/sites/${siteId}/keys`);
  assert.equal(apiStatus, 403);
  await screenshot(clinician, '16-clinician-no-access');

  // 12. Tablet width: the worklist fits without sideways scrolling of the page.
  await clinician.setViewportSize({ width: 768, height: 1024 });
  await clinician.goto(`${adminUrl}/#/sites/${siteId}/worklist`);
  await heading(clinician, 'Worklist').waitFor();
  await clinician.getByText('1–1 of 1').waitFor();
  assert.ok(await fitsWidth(clinician), 'worklist fits a tablet');
  await screenshot(clinician, '17-worklist-tablet');
  assert.deepEqual(clinicianConsole.errors, []);
  assert.deepEqual(violations, [], 'no WCAG 2.1 AA violations on any page');
  await clinicianContext.close();
  await context.close();
});

test('requests without the CSRF token, or sent by another origin, are refused', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${adminUrl}/`);
  await page.getByLabel('E-mail').fill(initialAdminEmail);
  await page.getByLabel('Password').fill(readFileSync(join(services.config.dataDir, 'initial-admin-password'), 'utf8').trim());
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Sites').waitFor();
  const countSites = async () => (await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM site')).rows[0]!.n;
  const before = await countSites();

  // Same origin, signed in, but without X-CSRF-Token.
  const sameOrigin = await page.evaluate(async () => {
    const response = await fetch('/api/sites', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'No token', ae_title: 'NOTOKEN' }) });
    return { status: response.status, body: (await response.json()) as { error: { code: string } } };
  });
  assert.equal(sameOrigin.status, 403);
  assert.equal(sameOrigin.body.error.code, 'csrf');

  // Another origin (same host, other port: the same "site" for SameSite) posts a form and a
  // no-cors fetch at the admin API with the browser's cookies.
  const evil: Server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end(`<!doctype html><form id="f" method="post" action="${adminUrl}/api/sites" enctype="text/plain"><input name='{"name":"Evil","ae_title":"EVIL","x":"' value='"}'></form>`);
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  try {
    const evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}/`;
    await page.goto(evilUrl);
    await page.evaluate(async (target) => {
      await fetch(`${target}/api/sites`, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{"name":"Evil","ae_title":"EVIL"}' }).catch(() => undefined);
    }, adminUrl);
    const [response] = await Promise.all([page.waitForEvent('response', (r) => r.url().endsWith('/api/sites')), page.evaluate(() => (globalThis as any).document.getElementById('f').submit())]);
    assert.equal(response.status(), 403);
  } finally {
    await new Promise((resolve) => evil.close(resolve));
  }
  assert.equal(await countSites(), before, 'no site was created');
  await context.close();
});
