import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ingestHl7v2 } from '../../src/hl7v2/intake/intake.ts';
import { message } from '../hl7v2/support.ts';
import { useFhirOrigin, fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';

// Date search over the clinical types' own dates (Observation.effective[x] and the like): every
// stored form is a range of instants, compared with the search value's range as search.html#date
// says, whichever way the resource was written (FHIR create and update, HL7 v2 results).

const fhirOrigin = useFhirOrigin();

interface Bundle {
  entry?: { resource: { id: string }; search: { mode: string } }[];
  link: { relation: string; url: string }[];
}

async function searchIds(client: FhirClient, query: string): Promise<string[]> {
  const response = await client.request('GET', query.startsWith('/') ? query : `/fhir/${query}`);
  assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
  return ((response.json() as Bundle).entry ?? []).filter((entry) => entry.search.mode === 'match').map((entry) => entry.resource.id);
}

async function create(client: FhirClient, body: Record<string, unknown>): Promise<string> {
  const response = await client.request('POST', `/fhir/${body.resourceType}`, { body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id;
}

async function observations(client: FhirClient) {
  const patient = await create(client, patientBody(`DATE-${client.site.siteId.slice(0, 8)}`));
  const other = await create(client, patientBody(`DATE-OTHER-${client.site.siteId.slice(0, 8)}`));
  const observation = (effective: Record<string, unknown>, subject = patient) =>
    create(client, { resourceType: 'Observation', status: 'final', code: { text: 'Hb' }, subject: { reference: `Patient/${subject}` }, ...effective });
  return {
    patient,
    day: await observation({ effectiveDateTime: '2024-03-10' }),
    month: await observation({ effectiveDateTime: '2024-03' }),
    // 04:30 UTC on 11 March.
    evening: await observation({ effectiveDateTime: '2024-03-10T23:30:00-05:00' }),
    period: await observation({ effectivePeriod: { start: '2024-03-09T08:00:00Z', end: '2024-03-12' } }),
    ongoing: await observation({ effectivePeriod: { start: '2024-03-20T00:00:00Z' } }),
    instant: await observation({ effectiveInstant: '2024-03-10T12:00:00.5Z' }),
    undated: await observation({}),
    otherPatients: await observation({ effectiveDateTime: '2024-03-10' }, other),
  };
}

test('Observation date: each stored form is a range, compared by every prefix; values AND across parameters', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const o = await observations(client);
  const found = async (query: string) => (await searchIds(client, `Observation?patient=${o.patient}&${query}`)).sort();
  const ids = (...names: (keyof typeof o)[]) => names.map((name) => o[name]).sort();

  // eq: the search range holds the resource's whole range (dates without a time are UTC days).
  assert.deepEqual(await found('date=2024-03-10'), ids('day', 'instant'));
  assert.deepEqual(await found('date=eq2024-03'), ids('day', 'month', 'evening', 'period', 'instant'));
  assert.deepEqual(await found(`date=${encodeURIComponent('2024-03-10T23:30:00-05:00')}`), ids('evening'));
  assert.deepEqual(await found('date=ne2024-03-10'), ids('month', 'evening', 'period', 'ongoing'));
  // lt and gt: the resource starts before, or ends after, the search range; le and ge also overlap it.
  assert.deepEqual(await found('date=lt2024-03-10'), ids('month', 'period'));
  assert.deepEqual(await found('date=le2024-03-10'), ids('day', 'month', 'period', 'instant'));
  assert.deepEqual(await found('date=gt2024-03-11'), ids('month', 'period', 'ongoing'));
  assert.deepEqual(await found('date=ge2024-03-11'), ids('month', 'evening', 'period', 'ongoing'));
  // At the bounds: the period ends as 12 March ends, the month begins as 1 March begins.
  assert.deepEqual(await found('date=gt2024-03-12'), ids('month', 'ongoing'));
  assert.deepEqual(await found('date=ge2024-03-13'), ids('month', 'ongoing'));
  assert.deepEqual(await found('date=le2024-02-29'), []);
  assert.deepEqual(await found('date=ge2024-03-01&date=lt2024-03-10'), ids('month', 'period'));
  assert.deepEqual(await found('date=2024-03-10,2024-03-20'), ids('day', 'instant'));
  assert.deepEqual(await found('date=ge2024-03-20T00:00:00Z'), ids('month', 'ongoing'));
  // Without the patient, another patient's result of the same day is found too.
  assert.deepEqual((await searchIds(client, 'Observation?date=2024-03-10')).sort(), ids('day', 'instant', 'otherPatients'));
});

test('Observation _sort=date orders by first instant, -date by last, undated last, across pages', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const o = await observations(client);
  const ascending = [o.month, o.period, o.day, o.instant, o.evening, o.ongoing, o.undated];
  const descending = [o.ongoing, o.month, o.period, o.evening, o.day, o.instant, o.undated];
  assert.deepEqual(await searchIds(client, `Observation?patient=${o.patient}&_sort=date`), ascending);
  assert.deepEqual(await searchIds(client, `Observation?patient=${o.patient}&_sort=-date`), descending);
  const paged: string[] = [];
  let next: string | undefined = `/fhir/Observation?patient=${o.patient}&_sort=-date&_count=2`;
  while (next) {
    const response = await client.request('GET', next);
    assert.equal(response.statusCode, 200, response.body);
    const bundle = response.json() as Bundle;
    paged.push(...(bundle.entry ?? []).map((entry) => entry.resource.id));
    const link = bundle.link.find((candidate) => candidate.relation === 'next')?.url;
    next = link === undefined ? undefined : new URL(link).pathname + new URL(link).search;
  }
  assert.deepEqual(paged, descending);
});

test('an update moves a resource to its new date; a date that is no date is refused on write and on search', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = await create(client, patientBody(`DATE-U-${client.site.siteId.slice(0, 8)}`));
  const body = { resourceType: 'Procedure', status: 'completed', code: { text: 'Biopsy' }, subject: { reference: `Patient/${patient}` } };
  const id = await create(client, { ...body, performedDateTime: '2023-05-02' });
  assert.deepEqual(await searchIds(client, `Procedure?patient=${patient}&date=2023-05`), [id]);
  const updated = await client.request('PUT', `/fhir/Procedure/${id}`, { body: { ...body, id, performedPeriod: { start: '2025-01-01', end: '2025-01-03' } } });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.deepEqual(await searchIds(client, `Procedure?patient=${patient}&date=2023-05`), []);
  assert.deepEqual(await searchIds(client, `Procedure?patient=${patient}&date=2025-01`), [id]);

  const refused = await client.request('POST', '/fhir/Procedure', { body: { ...body, performedDateTime: '2023-02-30' } });
  assert.equal(refused.statusCode, 400, refused.body);
  for (const value of ['2024-03-10T10:00', 'yesterday', '2024-13', 'xx2024']) {
    const response = await client.request('GET', `/fhir/Procedure?date=${value}`);
    assert.equal(response.statusCode, 400, `date=${value}: ${response.body}`);
    assert.equal(response.json().resourceType, 'OperationOutcome');
  }
});

test('HL7 v2 results are found by their observation time, and a correction moves them', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const mrn = `DATE-HL7-${client.site.siteId.slice(0, 8)}`;
  const send = async (status: string, time: string) => {
    const outcome = await ingestHl7v2(fhirOrigin.db.database, {
      raw: message(
        [
          `PID|1||${mrn}^^^H^MR||Result^Ruth`,
          'OBR|1|ORD-1|FIL-1|718-7^Hemoglobin^LN',
          `OBX|1|NM|718-7^Hemoglobin^LN||13.2|g/dL|||||${status}|||${time}`,
          `OBX|2|NM|4544-3^Hematocrit^LN||40|%|||||${status}|||${time}`,
        ],
        { type: 'ORU^R01^ORU_R01' },
      ),
      site: client.site,
      defaultCharset: 'UNICODE UTF-8',
      origin: { transport: 'mllp', remoteAddress: '127.0.0.1' },
    });
    assert.equal(outcome.ackCode, 'AA', JSON.stringify(outcome.errors));
  };
  await send('F', '202403100815-0500');
  const results = await searchIds(client, `Observation?date=${encodeURIComponent('2024-03-10T08:15:00-05:00')}`);
  assert.equal(results.length, 2);
  assert.deepEqual(await searchIds(client, 'Observation?date=2024-03-11'), []);
  await send('C', '202403110900-0500');
  assert.deepEqual((await searchIds(client, 'Observation?date=2024-03-11')).sort(), [...results].sort());
  assert.deepEqual(await searchIds(client, 'Observation?date=2024-03-10'), []);
});
