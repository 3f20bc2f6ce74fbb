import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ingestHl7v2 } from '../../src/hl7v2/intake/intake.ts';
import { message } from '../hl7v2/support.ts';
import { useFhirOrigin, fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';

// Patient family and given: the start of a family or given name of any of the patient's names,
// ignoring case and accents (search.html#string), never matching the other kind of part.

const fhirOrigin = useFhirOrigin();

async function found(client: FhirClient, query: string): Promise<string[]> {
  const response = await client.request('GET', `/fhir/Patient?${query}`);
  assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
  return ((response.json() as { entry?: { resource: { id: string } }[] }).entry ?? []).map((entry) => entry.resource.id);
}

async function create(client: FhirClient, identifier: string, name: unknown[]): Promise<string> {
  const response = await client.request('POST', '/fhir/Patient', { body: patientBody(identifier, { name }) });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id;
}

test('family and given match the start of the right parts of any name, without case or accents', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  // Every kind of part before and between the family and given names, so that their positions vary.
  const ann = await create(client, 'NP-1', [
    { text: 'Dr. Ann-Marie Müller-Lee', prefix: ['Dr.'], family: 'Müller-Lee', given: ['Ann-Marie', 'Rose'], suffix: ['PhD'] },
    { use: 'maiden', family: 'Åberg', given: ['Ann'] },
  ]);
  const lee = await create(client, 'NP-2', [{ family: 'Lee', given: ['Müller'] }]);
  const textOnly = await create(client, 'NP-3', [{ text: 'Rose Muller' }]);
  const sorted = (...ids: string[]) => ids.sort();

  assert.deepEqual((await found(client, 'family=muller')).sort(), [ann]);
  assert.deepEqual((await found(client, 'family=MÜLLER-L')).sort(), [ann]);
  assert.deepEqual((await found(client, 'family=aber')).sort(), [ann]);
  assert.deepEqual((await found(client, 'family=lee')).sort(), [lee]);
  assert.deepEqual((await found(client, 'family=ller')).sort(), [], 'the start of the part, not any substring');
  assert.deepEqual((await found(client, 'family=dr')).sort(), [], 'a prefix is not a family name');
  assert.deepEqual((await found(client, 'family=rose')).sort(), [], 'a given name is not a family name');
  assert.deepEqual((await found(client, 'given=muller')).sort(), [lee]);
  assert.deepEqual((await found(client, 'given=rose')).sort(), [ann], 'the second given name; text alone is no given name');
  assert.deepEqual((await found(client, 'given=ann-m')).sort(), [ann]);
  assert.deepEqual((await found(client, 'given=phd')).sort(), [], 'a suffix is not a given name');
  assert.deepEqual((await found(client, 'family=lee,aberg')).sort(), sorted(ann, lee));
  assert.deepEqual((await found(client, 'family=muller&given=rose')).sort(), [ann]);
  assert.deepEqual((await found(client, 'family=lee&given=rose')).sort(), []);
  assert.deepEqual((await found(client, 'name=muller')).sort(), sorted(ann, lee, textOnly), 'name still matches every part');
  assert.deepEqual(await found(client, 'family=l,m,a&_sort=family'), [lee, ann]);
  assert.deepEqual(await found(client, 'given=a,m&_sort=-given'), [lee, ann]);
});

test('patients registered over HL7 v2 are found by family and given name', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const outcome = await ingestHl7v2(fhirOrigin.db.database, {
    raw: message(['EVN|A04', 'PID|1||NP-HL7-1^^^H^MR||Ñúñez^José^Luis^Jr^Sr.||19700101|M'], { type: 'ADT^A04^ADT_A01' }),
    site: client.site,
    defaultCharset: 'UNICODE UTF-8',
    origin: { transport: 'mllp', remoteAddress: '127.0.0.1' },
  });
  assert.equal(outcome.ackCode, 'AA', JSON.stringify(outcome.errors));
  const [id] = await found(client, 'identifier=NP-HL7-1');
  assert.ok(id);
  assert.deepEqual(await found(client, 'family=nunez'), [id]);
  assert.deepEqual(await found(client, 'given=luis'), [id]);
  assert.deepEqual(await found(client, 'given=jr'), []);
});
