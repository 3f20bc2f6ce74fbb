// The clinical views in headless Chromium: a clinician finds a patient, opens the chart and reads
// an ORU result stored over HL7 v2 (value, unit, range, flag, labelled time); the study page sets
// the record's demographics beside the DICOM header's and flags the differences; a report typed
// before signing out is offered back after signing in again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { accessibilityViolations, fitsWidth, screenshot, useAdminInBrowser, watchConsole } from './browser-support.ts';
import { admitPatientWithResults } from './clinical-fixtures.ts';

const app = useAdminInBrowser('clinician');

const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name });

test('patient search, then the patient page with an ORU result from HL7 v2', { timeout: 300_000 }, async () => {
  const { studyInstanceUid } = await admitPatientWithResults(app.db.database, app.site, 'CV-1001');
  const patient = (await resourceStore(app.db.database, app.site).findPatientByBusinessIdentifier('CV-1001'))!;
  const context = await app.browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: 'Europe/Paris' });
  const page = await context.newPage();
  const console = watchConsole(page);
  await app.signIn(page);
  await heading(page, 'Worklist').waitFor();
  // Reachable from the worklist row too.
  assert.equal(await page.getByRole('link', { name: 'Patient record of MARTIN, CLAIRE' }).getAttribute('href'), `#/sites/${app.site.siteId}/patients/${patient.id}`);

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Patients' }).click();
  await heading(page, 'Patients').waitFor();
  const search = page.getByRole('search', { name: 'Find a patient' });
  await search.getByLabel('Name').fill('mart');
  await search.getByLabel('Birth date').fill('1980-05-17');
  await search.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: 'Claire Martin' }).click();
  await heading(page, /Claire Martin/).waitFor();

  const results = page.getByRole('region', { name: 'Results' });
  const row = results.getByRole('row').filter({ hasText: 'Cholesterol' });
  const cells = await row.getByRole('cell').allInnerTexts();
  assert.deepEqual(cells.slice(0, 6).map((text) => text.trim()), [
    '2026-11-20 08:30:00 UTC+01:00',
    'Cholesterol [Mass/volume] in Serum or Plasma\n2093-3',
    '245',
    'mg/dL',
    '<200',
    'High (H)',
  ]);
  await page.getByText('Times are shown in your browser\'s time zone, Europe/Paris').waitFor();
  await page.getByRole('link', { name: 'CT chest' }).waitFor();
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'patient-desktop');

  await page.setViewportSize({ width: 390, height: 844 });
  assert.ok(await fitsWidth(page), 'the patient page fits a 390 px phone');
  await screenshot(page, 'patient-phone');

  // From the study page: the record's demographics beside the header's, differences flagged.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${app.url}/#/sites/${app.site.siteId}/studies/${encodeURIComponent(studyInstanceUid)}`);
  await heading(page, /CT chest/).waitFor();
  const compared = page.getByRole('region', { name: 'Demographics compared' });
  const line = async (item: string) => (await compared.getByRole('row').filter({ has: page.getByRole('rowheader', { name: item }) }).getByRole('cell').allInnerTexts()).map((text) => text.trim());
  assert.deepEqual(await line('Sex'), ['female', 'other', 'differs']);
  assert.deepEqual(await line('Birth date'), [(await page.evaluate(() => new Date(1980, 4, 17).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }))), '—', 'differs']);
  assert.deepEqual(await line('Name'), ['Claire Martin', 'MARTIN, CLAIRE', 'same']);
  assert.deepEqual(await line('Patient ID'), ['CV-1001', 'CV-1001', 'same']);
  await page.getByText('The DICOM header differs from the patient record in: sex, birth date.').waitFor();
  assert.equal(await page.getByRole('link', { name: 'Patient record', exact: true }).getAttribute('href'), `#/sites/${app.site.siteId}/patients/${patient.id}`);
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'study-demographics');
  assert.deepEqual(console.errors, []);
  await context.close();
});

test('a report typed before signing out is offered back after signing in again, and cleared once saved', { timeout: 300_000 }, async () => {
  const { studyInstanceUid } = await admitPatientWithResults(app.db.database, app.site, 'CV-2002');
  const context = await app.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const console = watchConsole(page);
  const studyUrl = `${app.url}/#/sites/${app.site.siteId}/studies/${encodeURIComponent(studyInstanceUid)}`;
  await app.signIn(page);
  await heading(page, 'Worklist').waitFor();
  await page.goto(studyUrl);
  const report = page.getByRole('textbox', { name: 'Report' });
  await report.fill('Findings: no focal consolidation.');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await heading(page, 'Sign in').waitFor();

  await app.signIn(page);
  await page.goto(studyUrl);
  await heading(page, /CT chest/).waitFor();
  const offer = page.getByRole('status').filter({ hasText: 'Unsaved report text was kept in this browser' });
  await offer.getByText('Findings: no focal consolidation.').waitFor();
  assert.equal(await report.inputValue(), '');
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'draft-offer');
  await offer.getByRole('button', { name: 'Restore the unsaved text' }).click();
  assert.equal(await report.inputValue(), 'Findings: no focal consolidation.');

  // The session ends under the user (signed out in another tab): Save draft says so, the text is kept.
  await app.db.database.query('DELETE FROM admin_session');
  await report.fill('Findings: no focal consolidation. Impression: normal.');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Your session has ended (signed out in another tab, or idle for too long).').waitFor();
  await app.signIn(page);
  await page.goto(studyUrl);
  await page.getByRole('button', { name: 'Restore the unsaved text' }).click();
  assert.equal(await report.inputValue(), 'Findings: no focal consolidation. Impression: normal.');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText(/^Draft saved at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/).waitFor();
  await page.reload();
  await heading(page, /CT chest/).waitFor();
  assert.equal(await report.inputValue(), 'Findings: no focal consolidation. Impression: normal.', 'the server has the draft');
  assert.equal(await page.getByText('Unsaved report text was kept in this browser').count(), 0, 'nothing is offered once saved');
  assert.deepEqual(console.errors, []);
  await context.close();
});
