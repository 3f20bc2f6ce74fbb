// Issue 22 point 3: _include and _revinclude, _summary and _elements, _sort with several keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataAccessRecorder } from '../../src/domain/audit/data-access.ts';
import { listDataAccess } from '../../src/domain/audit/data-access-log.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { maxIncludedPerPage } from '../../src/fhir/search/search-limits.ts';
import { fhirClient, patientBody, useFhirOrigin, type FhirClient } from './fhir-test-origin.ts';

const fhirOrigin = useFhirOrigin();

interface Entry {
  fullUrl: string;
  resource: { resourceType: string; id: string; meta?: { tag?: { system: string; code: string }[] }; [key: string]: unknown };
  search: { mode: string };
}
interface Bundle {
  total?: number;
  link: { relation: string; url: string }[];
  entry?: Entry[];
}

async function get(client: FhirClient, url: string): Promise<Bundle> {
  const response = await client.request('GET', url);
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return response.json();
}

async function create(client: FhirClient, body: Record<string, unknown>): Promise<string> {
  const response = await client.request('POST', `/fhir/${String(body.resourceType)}`, { body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id;
}

const observation = (patient: string, code: string, extra: Record<string, unknown> = {}) => ({
  resourceType: 'Observation',
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code }] },
  subject: { reference: `Patient/${patient}` },
  valueQuantity: { value: 1, unit: 'g/dL' },
  text: { status: 'generated', div: '<div xmlns="http://www.w3.org/1999/xhtml">Hb</div>' },
  ...extra,
});

const ids = (bundle: Bundle, mode: string) => (bundle.entry ?? []).filter((entry) => entry.search.mode === mode).map((entry) => `${entry.resource.resourceType}/${entry.resource.id}`);
const next = (bundle: Bundle) => {
  const link = bundle.link.find((candidate) => candidate.relation === 'next');
  return link ? new URL(link.url).pathname + new URL(link.url).search : undefined;
};
const subsetted = (resource: Entry['resource']) => (resource.meta?.tag ?? []).some((tag) => tag.code === 'SUBSETTED' && tag.system === 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue');

test('_include adds the patients of the page\'s matches once each, as search mode include; the total counts matches only', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const ann = await create(client, patientBody('INC-A'));
  const bob = await create(client, patientBody('INC-B'));
  const o1 = await create(client, observation(ann, '718-7'));
  const o2 = await create(client, observation(ann, '718-7'));
  const o3 = await create(client, observation(bob, '718-7'));
  const bundle = await get(client, '/fhir/Observation?code=718-7&_include=Observation:patient');
  assert.equal(bundle.total, 3);
  assert.deepEqual(ids(bundle, 'match'), [`Observation/${o1}`, `Observation/${o2}`, `Observation/${o3}`]);
  assert.deepEqual(ids(bundle, 'include'), [`Patient/${ann}`, `Patient/${bob}`]);
  assert.match(bundle.link[0]!.url, /_include=Observation%3Apatient/);
  // With the target type named, and on every type with a patient reference.
  assert.deepEqual(ids(await get(client, `/fhir/Observation?patient=${bob}&_include=Observation:patient:Patient`), 'include'), [`Patient/${bob}`]);
  const condition = await create(client, { resourceType: 'Condition', subject: { reference: `Patient/${ann}` }, code: { text: 'x' } });
  assert.deepEqual(ids(await get(client, `/fhir/Condition?_id=${condition}&_include=Condition:patient`), 'include'), [`Patient/${ann}`]);

  // Paging: each page carries the patients of its own matches; the next link keeps _include.
  const first = await get(client, '/fhir/Observation?code=718-7&_include=Observation:patient&_count=2');
  assert.deepEqual(ids(first, 'include'), [`Patient/${ann}`]);
  const second = await get(client, next(first)!);
  assert.deepEqual(ids(second, 'match'), [`Observation/${o3}`]);
  assert.deepEqual(ids(second, 'include'), [`Patient/${bob}`]);
  assert.equal(second.total, 3);
});

test('_revinclude from Patient adds each patient\'s resources; several _revinclude parameters combine', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const ann = await create(client, patientBody('REV-A'));
  const bob = await create(client, patientBody('REV-B'));
  const o1 = await create(client, observation(ann, '718-7'));
  const o2 = await create(client, observation(bob, '2345-7'));
  const allergy = await create(client, {
    resourceType: 'AllergyIntolerance',
    clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] },
    patient: { reference: `Patient/${ann}` },
    code: { text: 'peanut' },
  });
  const bundle = await get(client, `/fhir/Patient?_id=${ann}&_revinclude=Observation:patient&_revinclude=AllergyIntolerance:patient`);
  assert.deepEqual(ids(bundle, 'match'), [`Patient/${ann}`]);
  assert.deepEqual(ids(bundle, 'include'), [`Observation/${o1}`, `AllergyIntolerance/${allergy}`]);
  assert.equal(bundle.total, 1);
  const both = await get(client, '/fhir/Patient?_revinclude=Observation:patient');
  assert.deepEqual(ids(both, 'include'), [`Observation/${o1}`, `Observation/${o2}`]);
});

test('another site\'s patient is never included, even when a resource names its id', async () => {
  const mine = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const theirs = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const theirPatient = await create(theirs, patientBody('ISO-T'));
  await create(theirs, observation(theirPatient, '718-7'));
  // The store refuses a reference to another site's patient; a row naming one anyway (written
  // below the store) still includes nothing.
  const myPatientForNow = await create(mine, patientBody('ISO-0'));
  const mineObservation = await create(mine, observation(myPatientForNow, '718-7'));
  await fhirOrigin.db.database.query(
    `UPDATE clinical_resource SET content = jsonb_set(content, '{subject,reference}', to_jsonb($3::text))
      WHERE site_id = $1 AND resource_type = 'Observation' AND id = $2`,
    [mine.site.siteId, mineObservation, `Patient/${theirPatient}`],
  );
  const included = await get(mine, '/fhir/Observation?_include=Observation:patient');
  assert.equal(ids(included, 'match').length, 1);
  assert.deepEqual(ids(included, 'include'), []);
  const myPatient = await create(mine, patientBody('ISO-M'));
  const reverse = await get(mine, `/fhir/Patient?_id=${myPatient},${theirPatient}&_revinclude=Observation:patient`);
  assert.deepEqual(ids(reverse, 'match'), [`Patient/${myPatient}`]);
  assert.deepEqual(ids(reverse, 'include'), []);
});

test(`included resources are bounded: past ${maxIncludedPerPage} a page gives the first ones and a warning`, async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = await create(client, patientBody('BOUND-1'));
  const store = resourceStore(fhirOrigin.db.database, client.site);
  await store.createAll(Array.from({ length: maxIncludedPerPage + 1 }, () => observation(patient, '718-7') as never));
  const bundle = await get(client, `/fhir/Patient?_id=${patient}&_revinclude=Observation:patient`);
  assert.equal(ids(bundle, 'include').length, maxIncludedPerPage);
  const outcome = bundle.entry!.find((entry) => entry.search.mode === 'outcome')!.resource as unknown as { issue: { severity: string; diagnostics: string }[] };
  assert.equal(outcome.issue[0]!.severity, 'warning');
  assert.match(outcome.issue[0]!.diagnostics, new RegExp(`more than ${maxIncludedPerPage} resources to include`));
});

test('included resources are in the data access log as read', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = await create(client, patientBody('AUD-INC'));
  const obs = await create(client, observation(patient, '718-7'));
  await get(client, `/fhir/Observation?_id=${obs}&_include=Observation:patient`);
  await dataAccessRecorder(fhirOrigin.db.database).settled();
  const { entries } = await listDataAccess(fhirOrigin.db.database, client.site.siteId);
  assert.deepEqual(entries[0]!.resourceIds, [`Observation/${obs}`, `Patient/${patient}`]);
});

test('_summary true, text, data and _elements return SUBSETTED resources with their mandatory elements; on read too', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = await create(client, patientBody('SUM-1', { gender: 'female', maritalStatus: { text: 'married' } }));
  const obs = await create(client, observation(patient, '718-7', { note: [{ text: 'not a summary element' }] }));
  const one = async (query: string) => (await get(client, `/fhir/Observation?_id=${obs}&${query}`)).entry![0]!.resource;

  const summary = await one('_summary=true');
  assert.ok(subsetted(summary));
  assert.deepEqual(Object.keys(summary).sort(), ['code', 'id', 'meta', 'resourceType', 'status', 'subject', 'valueQuantity']);
  const text = await one('_summary=text');
  assert.deepEqual(Object.keys(text).sort(), ['code', 'id', 'meta', 'resourceType', 'status', 'text'], 'text, id, meta and the mandatory status and code');
  const data = await one('_summary=data');
  assert.equal(data.text, undefined);
  assert.deepEqual(data.note, [{ text: 'not a summary element' }]);
  assert.ok(subsetted(data));
  const whole = await one('_summary=false');
  assert.ok(!subsetted(whole));
  assert.ok(whole.note && whole.text);
  const elements = await one('_elements=value,note');
  assert.deepEqual(Object.keys(elements).sort(), ['code', 'id', 'meta', 'note', 'resourceType', 'status', 'valueQuantity']);
  assert.ok(subsetted(elements));
  // Included resources are cut the same way.
  const included = (await get(client, `/fhir/Observation?_id=${obs}&_include=Observation:patient&_summary=true`)).entry!.find((entry) => entry.search.mode === 'include')!.resource;
  assert.equal(included.maritalStatus, undefined);
  assert.equal(included.gender, 'female');
  assert.ok(subsetted(included));
  // Read and vread.
  const read = await client.request('GET', `/fhir/Patient/${patient}?_elements=gender`);
  assert.equal(read.statusCode, 200);
  assert.deepEqual(Object.keys(read.json()).sort(), ['gender', 'id', 'meta', 'resourceType']);
  assert.ok(subsetted(read.json()));
  assert.ok(subsetted((await client.request('GET', `/fhir/Patient/${patient}/_history/1?_summary=true`)).json()));
  assert.equal((await client.request('GET', `/fhir/Patient/${patient}?_summary=count`)).statusCode, 400);
  assert.equal((await client.request('GET', `/fhir/Patient/${patient}?_elements=colour`)).statusCode, 400);
  // Bad input.
  for (const query of ['_summary=bogus', '_elements=colour', '_summary=true&_elements=gender', '_summary=true&_summary=data']) {
    const response = await client.request('GET', `/fhir/Patient?${query}`);
    assert.equal(response.statusCode, 400, query);
    assert.equal(response.json().resourceType, 'OperationOutcome', query);
  }
});

test('_sort by search parameters, _id and _lastUpdated, ascending and descending, several keys, stable across pages', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const made: { id: string; gender: string; birthDate?: string }[] = [];
  const people: [string, string | undefined][] = [
    ['male', '1980-01-01'],
    ['female', '1970-05-05'],
    ['male', '1960'],
    ['female', undefined],
    ['male', '1980-01-01'],
  ];
  for (const [index, [gender, birthDate]] of people.entries()) {
    made.push({ id: await create(client, patientBody(`SORT-${index}`, { gender, ...(birthDate ? { birthDate } : {}) })), gender, ...(birthDate ? { birthDate } : {}) });
  }
  const order = async (query: string) => {
    const found: string[] = [];
    let url: string | undefined = `/fhir/Patient?${query}&_count=2`;
    while (url) {
      const page = await get(client, url);
      found.push(...ids(page, 'match').map((id) => id.slice('Patient/'.length)));
      url = next(page);
    }
    return found;
  };
  const byIndex = (...indexes: number[]) => indexes.map((index) => made[index]!.id);
  // Ties (0 and 4) follow creation order in the last key's direction; a missing birth date is last either way.
  assert.deepEqual(await order('_sort=gender,-birthdate'), byIndex(1, 3, 4, 0, 2));
  assert.deepEqual(await order('_sort=-gender,birthdate'), byIndex(2, 0, 4, 1, 3));
  assert.deepEqual(await order('_sort=_lastUpdated'), byIndex(0, 1, 2, 3, 4));
  assert.deepEqual(await order('_sort=-_lastUpdated'), byIndex(4, 3, 2, 1, 0));
  assert.deepEqual(await order('_sort=_id'), [...byIndex(0, 1, 2, 3, 4)].sort());
  assert.deepEqual(await order('_sort=-_id'), [...byIndex(0, 1, 2, 3, 4)].sort().reverse());

  // A resource updated between pages moves neither back nor forward: the pages show the data as of the first page.
  const first = await get(client, '/fhir/Patient?_sort=birthdate&_count=2');
  const current = (await client.request('GET', `/fhir/Patient/${made[4]!.id}`)).json();
  assert.equal((await client.request('PUT', `/fhir/Patient/${made[4]!.id}`, { body: { ...current, birthDate: '1900' } })).statusCode, 200);
  const rest: string[] = [];
  for (let url = next(first); url; ) {
    const page = await get(client, url);
    rest.push(...ids(page, 'match').map((id) => id.slice('Patient/'.length)));
    url = next(page);
  }
  const seen = [...ids(first, 'match').map((id) => id.slice('Patient/'.length)), ...rest];
  assert.equal(new Set(seen).size, seen.length, 'no resource twice');

  const unknown = await client.request('GET', '/fhir/Patient?_sort=colour');
  assert.equal(unknown.statusCode, 400);
  assert.equal(unknown.json().issue[0].code, 'not-supported');
  assert.equal((await client.request('GET', '/fhir/Patient?_sort=gender,gender')).statusCode, 400);
  assert.equal((await client.request('GET', '/fhir/Observation?_sort=birthdate')).statusCode, 400);
});

test('_count above the largest page is clamped to it', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const bundle = await get(client, '/fhir/Patient?_count=5000');
  assert.match(bundle.link[0]!.url, /_count=1000/);
  assert.equal((await client.request('GET', '/fhir/Patient?_count=-1')).statusCode, 400);
});
