import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/storage/migrations.ts';
import { useFhirOrigin, fhirClient, patientBody } from './fhir-test-origin.ts';

// Migration 0880: Observations stored before category and status were searchable get the same
// token rows a write gives them now.

const fhirOrigin = useFhirOrigin();
const categorySystem = 'http://terminology.hl7.org/CodeSystem/observation-category';

test('Observations stored before category and status were indexed are found by them after the migration, with the rows a write makes', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('BACKFILL-1') })).json().id as string;
  const subject = { reference: `Patient/${patient}` };
  const bodies = [
    { resourceType: 'Observation', status: 'final', category: [{ coding: [{ system: categorySystem, code: 'laboratory' }, { code: 'local-lab' }] }], code: { text: 'Hb' }, subject },
    { resourceType: 'Observation', status: 'preliminary', category: [{ text: 'no coding' }, { coding: [{ system: categorySystem, code: 'vital-signs' }] }], code: { text: 'HR' }, subject },
    { resourceType: 'Observation', status: 'amended', code: { text: 'no category' }, subject },
  ];
  const ids: string[] = [];
  for (const body of bodies) {
    const response = await client.request('POST', '/fhir/Observation', { body });
    assert.equal(response.statusCode, 201, response.body);
    ids.push(response.json().id);
  }
  const tokens = async () =>
    (
      await fhirOrigin.db.database.query<{ resource_id: string; param: string; system: string; code: string }>(
        `SELECT resource_id, param, system, code FROM clinical_resource_token
          WHERE site_id = $1 AND resource_type = 'Observation' AND resource_id = ANY($2::uuid[]) AND param IN ('category', 'status')
          ORDER BY resource_id, param, system, code`,
        [client.site.siteId, ids],
      )
    ).rows;
  const written = await tokens();
  assert.equal(written.length, 2 + 1 + 1 + 1 + 1, JSON.stringify(written));

  // As the rows were before this version: no category or status tokens, migration 0880 not applied.
  await fhirOrigin.db.database.query(`DELETE FROM clinical_resource_token WHERE resource_type = 'Observation' AND param IN ('category', 'status')`);
  await fhirOrigin.db.database.query('DELETE FROM schema_migration WHERE version = 880');
  const search = async (query: string) => {
    const response = await client.request('GET', `/fhir/Observation?patient=${patient}&${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return ((response.json() as { entry?: { resource: { id: string } }[] }).entry ?? []).map((entry) => entry.resource.id).sort();
  };
  assert.deepEqual(await search('category=laboratory'), []);

  const report = await migrate(fhirOrigin.db.database);
  assert.ok(report.applied.some((name) => name.includes('0880')), report.applied.join(', '));
  assert.deepEqual(await tokens(), written);
  assert.deepEqual(await search('category=laboratory'), [ids[0]!]);
  assert.deepEqual(await search(`category=${categorySystem}|vital-signs`), [ids[1]!]);
  assert.deepEqual(await search('category=|local-lab'), [ids[0]!]);
  assert.deepEqual(await search('status=final,amended'), [ids[0]!, ids[2]!].sort());
  assert.deepEqual(await search('status=http://hl7.org/fhir/observation-status|preliminary'), [ids[1]!]);
});
