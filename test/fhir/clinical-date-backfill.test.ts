import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/storage/migrations.ts';
import { useFhirOrigin, fhirClient, patientBody } from './fhir-test-origin.ts';

// Migration 0890: resources stored before their dates were searchable get the same index values a
// write gives them now, computed in SQL by the rules the service applies in TypeScript.

const fhirOrigin = useFhirOrigin();

test('resources stored before the date parameters are found by them after the migration, with the values a write stores', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('DATE-BACKFILL-1') })).json().id as string;
  const subject = { reference: `Patient/${patient}` };
  const code = { text: 'x' };
  const bodies = [
    { resourceType: 'Observation', status: 'final', code, subject, effectiveDateTime: '2024' },
    { resourceType: 'Observation', status: 'final', code, subject, effectiveDateTime: '2024-02' },
    // The day summer time began in New York: still a UTC day of 24 hours.
    { resourceType: 'Observation', status: 'final', code, subject, effectiveDateTime: '2024-03-10' },
    { resourceType: 'Observation', status: 'final', code, subject, effectiveDateTime: '2024-03-10T23:30:00-05:00' },
    { resourceType: 'Observation', status: 'final', code, subject, effectiveDateTime: '2024-03-10T23:30:15.1234+05:30' },
    { resourceType: 'Observation', status: 'final', code, subject, effectivePeriod: { start: '2024-05', end: '2024-06-02T10:00:00Z' } },
    { resourceType: 'Observation', status: 'final', code, subject, effectivePeriod: { end: '2024-05' } },
    { resourceType: 'Observation', status: 'final', code, subject, effectiveInstant: '2024-03-10T12:00:00.25Z' },
    { resourceType: 'Observation', status: 'final', code, subject },
    { resourceType: 'Procedure', status: 'completed', code, subject, performedPeriod: { start: '2023-12-31T22:00:00-03:00' } },
    { resourceType: 'Condition', clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }] }, code, subject, onsetDateTime: '2019-07' },
    { resourceType: 'AllergyIntolerance', clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] }, code, patient: subject, recordedDate: '2021-01-15T08:00:00Z' },
    { resourceType: 'DocumentReference', status: 'current', subject, date: '2022-09-01T10:00:00.5+02:00', content: [{ attachment: { contentType: 'text/plain', data: 'aGk=' } }] },
  ];
  const ids: string[] = [];
  for (const body of bodies) {
    const response = await client.request('POST', `/fhir/${body.resourceType}`, { body });
    assert.equal(response.statusCode, 201, response.body);
    ids.push(response.json().id);
  }
  const stored = async () =>
    (
      await fhirOrigin.db.database.query<{ id: string; start: string | null; end: string | null }>(
        `SELECT id, clinical_date_start::text AS start, clinical_date_end::text AS end FROM clinical_resource
          WHERE site_id = $1 AND id = ANY($2::uuid[]) ORDER BY id`,
        [client.site.siteId, ids],
      )
    ).rows;
  const written = await stored();
  assert.equal(written.filter((row) => row.start !== null).length, bodies.length - 1, JSON.stringify(written));

  // As the table was before this version: no date columns, migration 0890 not applied.
  await fhirOrigin.db.database.query('ALTER TABLE clinical_resource DROP COLUMN clinical_date_start, DROP COLUMN clinical_date_end');
  await fhirOrigin.db.database.query('DELETE FROM schema_migration WHERE version = 890');
  const report = await migrate(fhirOrigin.db.database);
  assert.ok(report.applied.some((name) => name.includes('0890')), report.applied.join(', '));
  assert.deepEqual(await stored(), written);

  const found = async (query: string) => {
    const response = await client.request('GET', `/fhir/${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return ((response.json() as { entry?: { resource: { id: string } }[] }).entry ?? []).map((entry) => entry.resource.id).sort();
  };
  assert.deepEqual(await found(`Observation?patient=${patient}&date=2024-03-10`), [ids[2]!, ids[4]!, ids[7]!].sort());
  assert.deepEqual(await found('Procedure?date=ge2024-06-01'), [ids[9]!]);
  assert.deepEqual(await found('Condition?onset-date=2019'), [ids[10]!]);
  assert.deepEqual(await found('AllergyIntolerance?date=2021-01-15'), [ids[11]!]);
  assert.deepEqual(await found('DocumentReference?date=lt2022-09-01T08:00:01Z'), [ids[12]!]);
});
