import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useFhirOrigin, fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';

const fhirOrigin = useFhirOrigin();

interface Bundle {
  resourceType: string;
  type: string;
  total?: number;
  link: { relation: string; url: string }[];
  entry?: { resource: { id: string; resourceType: string; [key: string]: unknown }; search: { mode: string } }[];
}

async function search(client: FhirClient, query: string, headers: Record<string, string> = {}): Promise<Bundle> {
  const response = await client.request('GET', query.startsWith('/') ? query : `/fhir/${query}`, { headers });
  assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
  return response.json();
}

function matchIds(bundle: Bundle): string[] {
  return (bundle.entry ?? []).filter((entry) => entry.search.mode === 'match').map((entry) => entry.resource.id).sort();
}

async function create(client: FhirClient, body: Record<string, unknown>): Promise<string> {
  const response = await client.request('POST', `/fhir/${body.resourceType}`, { body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id;
}

function relative(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

test('Patient: identifier, name (substring of any part, case- and accent-insensitive), birthdate with prefixes, gender', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const ann = await create(client, patientBody('S-1', { name: [{ family: 'Müller', given: ['Ann', 'Marie'] }], birthDate: '1980-05-17', gender: 'female' }));
  const bob = await create(client, patientBody('S-2', { identifier: [{ system: 'urn:other', value: 'S-2' }], name: [{ text: 'Bob Stone' }], birthDate: '1975', gender: 'male' }));
  const cyd = await create(client, patientBody('S-3', { name: [{ family: 'Young', given: ['Cyd'] }], birthDate: '1990-01-02', gender: 'other' }));

  assert.deepEqual(matchIds(await search(client, 'Patient?identifier=S-1')), [ann]);
  assert.deepEqual(matchIds(await search(client, 'Patient?identifier=urn:mrn|S-1')), [ann]);
  assert.deepEqual(matchIds(await search(client, 'Patient?identifier=urn:mrn|S-2')), []);
  assert.deepEqual(matchIds(await search(client, 'Patient?identifier=urn:other|')), [bob]);
  assert.deepEqual(matchIds(await search(client, 'Patient?identifier=|S-1')), []);
  assert.deepEqual(matchIds(await search(client, 'Patient?identifier=S-1,S-3')), [ann, cyd].sort());

  assert.deepEqual(matchIds(await search(client, 'Patient?name=MULL')), [ann]);
  assert.deepEqual(matchIds(await search(client, 'Patient?name=arie')), [ann]);
  assert.deepEqual(matchIds(await search(client, 'Patient?name=stone')), [bob]);
  assert.deepEqual(matchIds(await search(client, 'Patient?name=ann,cyd')), [ann, cyd].sort());
  assert.deepEqual(matchIds(await search(client, 'Patient?name=ann&name=mar')), [ann]);
  assert.deepEqual(matchIds(await search(client, 'Patient?name=ann&name=young')), []);
  // LIKE wildcards in the value are literal characters.
  assert.deepEqual(matchIds(await search(client, 'Patient?name=%25')), []);
  assert.deepEqual(matchIds(await search(client, 'Patient?name=_')), []);

  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=1980-05-17')), [ann]);
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=1980')), [ann]);
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=1975')), [bob]);
  // A year-precision birth date is not inside one day.
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=1975-06-01')), []);
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=lt1980-01-01')), [bob]);
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=ge1980-05-17')), [ann, cyd].sort());
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=gt1980-05-17')), [cyd]);
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=le1980-05-17')), [ann, bob].sort());
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=ne1980-05-17')), [bob, cyd].sort());
  assert.deepEqual(matchIds(await search(client, 'Patient?birthdate=ge1976&birthdate=lt1990')), [ann]);

  assert.deepEqual(matchIds(await search(client, 'Patient?gender=female')), [ann]);
  assert.deepEqual(matchIds(await search(client, 'Patient?gender=male,other')), [bob, cyd].sort());
  assert.deepEqual(matchIds(await search(client, 'Patient?gender=http://hl7.org/fhir/administrative-gender|male')), [bob]);

  const all = await search(client, 'Patient');
  assert.equal(all.type, 'searchset');
  assert.equal(all.total, 3);
  assert.deepEqual(matchIds(all), [ann, bob, cyd].sort());
  assert.deepEqual(matchIds(await search(client, `Patient?_id=${bob},${cyd}`)), [bob, cyd].sort());
  assert.deepEqual(matchIds(await search(client, 'Patient?_id=not-a-uuid')), []);
});

test('clinical types: patient (reference or bare id), clinical-status, code and type, with token forms', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const p1 = await create(client, patientBody('K-1'));
  const p2 = await create(client, patientBody('K-2'));
  const conditionStatus = (code: string) => ({ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code }] });
  const allergyStatus = (code: string) => ({ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code }] });
  const snomed = (code: string) => ({ coding: [{ system: 'http://snomed.info/sct', code }] });
  const c1 = await create(client, { resourceType: 'Condition', subject: { reference: `Patient/${p1}` }, clinicalStatus: conditionStatus('active'), code: snomed('38341003') });
  const c2 = await create(client, { resourceType: 'Condition', subject: { reference: `Patient/${p2}` }, clinicalStatus: conditionStatus('resolved'), code: snomed('44054006') });
  const a1 = await create(client, { resourceType: 'AllergyIntolerance', patient: { reference: `Patient/${p1}` }, clinicalStatus: allergyStatus('active'), code: snomed('91936005') });
  const a2 = await create(client, { resourceType: 'AllergyIntolerance', patient: { reference: `Patient/${p2}` }, clinicalStatus: allergyStatus('inactive'), code: snomed('300916003') });
  const o1 = await create(client, { resourceType: 'Observation', status: 'final', subject: { reference: `Patient/${p1}` }, code: { coding: [{ system: 'http://loinc.org', code: '718-7' }] } });
  const o2 = await create(client, { resourceType: 'Observation', status: 'final', subject: { reference: `Patient/${p2}` }, code: { coding: [{ code: 'LOCAL-1' }] } });
  const pr1 = await create(client, { resourceType: 'Procedure', status: 'completed', subject: { reference: `Patient/${p1}` }, code: snomed('80146002') });
  const d1 = await create(client, {
    resourceType: 'DocumentReference',
    status: 'current',
    subject: { reference: `Patient/${p2}` },
    type: { coding: [{ system: 'http://loinc.org', code: '34133-9' }] },
    content: [{ attachment: { contentType: 'text/plain', data: 'aGk=' } }],
  });

  assert.deepEqual(matchIds(await search(client, `Condition?patient=Patient/${p1}`)), [c1]);
  assert.deepEqual(matchIds(await search(client, `Condition?patient=${p2}`)), [c2]);
  assert.deepEqual(matchIds(await search(client, `Condition?patient=Group/${p2}`)), []);
  // The type modifier of a reference (search.html#reference).
  assert.deepEqual(matchIds(await search(client, `Condition?subject:Patient=${p1}`)), [c1]);
  assert.deepEqual(matchIds(await search(client, `Condition?patient:Patient=${p1},Patient/${p2}`)), [c1, c2].sort());
  const wrongType = await client.request('GET', `/fhir/Condition?subject:Group=${p1}`);
  assert.equal(wrongType.statusCode, 400, wrongType.body);
  assert.match(wrongType.json().issue[0].diagnostics, /subject:Group: the modifier :Group is not supported on subject \(only :Patient is\)/);
  assert.deepEqual(matchIds(await search(client, 'Condition?clinical-status=active')), [c1]);
  assert.deepEqual(matchIds(await search(client, 'Condition?clinical-status=http://terminology.hl7.org/CodeSystem/condition-clinical|resolved')), [c2]);
  assert.deepEqual(matchIds(await search(client, 'Condition?code=http://snomed.info/sct|38341003,44054006')), [c1, c2].sort());
  assert.deepEqual(matchIds(await search(client, `Condition?code=38341003&patient=${p2}`)), []);

  assert.deepEqual(matchIds(await search(client, `AllergyIntolerance?patient=${p1}`)), [a1]);
  assert.deepEqual(matchIds(await search(client, 'AllergyIntolerance?clinical-status=inactive')), [a2]);
  assert.deepEqual(matchIds(await search(client, 'AllergyIntolerance?code=91936005')), [a1]);

  assert.deepEqual(matchIds(await search(client, `Observation?patient=${p1}`)), [o1]);
  assert.deepEqual(matchIds(await search(client, 'Observation?code=http://loinc.org|718-7')), [o1]);
  assert.deepEqual(matchIds(await search(client, 'Observation?code=|LOCAL-1')), [o2]);
  assert.deepEqual(matchIds(await search(client, 'Observation?code=|718-7')), []);
  assert.deepEqual(matchIds(await search(client, 'Observation?code=http://loinc.org|')), [o1]);

  assert.deepEqual(matchIds(await search(client, `Procedure?patient=${p1}`)), [pr1]);
  assert.deepEqual(matchIds(await search(client, 'Procedure?code=80146002')), [pr1]);
  assert.deepEqual(matchIds(await search(client, `Procedure?patient=${p2}`)), []);

  assert.deepEqual(matchIds(await search(client, `DocumentReference?patient=${p2}`)), [d1]);
  assert.deepEqual(matchIds(await search(client, 'DocumentReference?type=http://loinc.org|34133-9')), [d1]);
  assert.deepEqual(matchIds(await search(client, 'DocumentReference?type=11488-4')), []);
});

test('_lastUpdated with prefixes, _sort on _lastUpdated, _count and _total', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const first = await create(client, patientBody('L-1'));
  const between = new Date(Date.now() + 5).toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const second = await create(client, patientBody('L-2'));
  assert.deepEqual(matchIds(await search(client, `Patient?_lastUpdated=lt${encodeURIComponent(between)}`)), [first]);
  assert.deepEqual(matchIds(await search(client, `Patient?_lastUpdated=gt${encodeURIComponent(between)}`)), [second]);
  assert.deepEqual(matchIds(await search(client, `Patient?_lastUpdated=ge${between.slice(0, 10)}`)), [first, second].sort());

  const descending = await search(client, 'Patient?_sort=-_lastUpdated');
  assert.deepEqual(descending.entry!.map((entry) => entry.resource.id), [second, first]);
  const ascending = await search(client, 'Patient?_sort=_lastUpdated');
  assert.deepEqual(ascending.entry!.map((entry) => entry.resource.id), [first, second]);

  const countOnly = await search(client, 'Patient?_count=0');
  assert.equal(countOnly.total, 2);
  assert.equal(countOnly.entry?.length ?? 0, 0);
  const noTotal = await search(client, 'Patient?_total=none');
  assert.equal(noTotal.total, undefined);
  const clamped = await search(client, 'Patient?_count=5000');
  assert.match(clamped.link[0]!.url, /_count=1000/);
});

test('paging: next links walk every result once, even while resources are updated and created', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push(await create(client, patientBody(`PG-${i}`, { gender: 'female' })));
  for (const sort of ['', '&_sort=_lastUpdated', '&_sort=-_lastUpdated']) {
    const seen: string[] = [];
    let bundle = await search(client, `Patient?gender=female&_count=3${sort}`);
    let pages = 0;
    for (;;) {
      pages++;
      seen.push(...bundle.entry!.map((entry) => entry.resource.id));
      // Change data between pages: update one already seen and one not yet seen, add one more.
      if (pages === 1) {
        for (const id of [seen[0]!, ids.find((candidate) => !seen.includes(candidate))!]) {
          const current = (await client.request('GET', `/fhir/Patient/${id}`)).json();
          assert.equal((await client.request('PUT', `/fhir/Patient/${id}`, { body: { ...current, birthDate: '2000-01-01' } })).statusCode, 200);
        }
      }
      const next = bundle.link.find((link) => link.relation === 'next');
      if (!next) break;
      bundle = await search(client, relative(next.url));
    }
    assert.equal(new Set(seen).size, seen.length, `no duplicates (${sort})`);
    if (sort === '') {
      // Creation order: everything that existed is seen exactly once, updated or not.
      for (const id of ids) assert.ok(seen.includes(id), `${id} seen (${sort})`);
    }
    ids.push(await create(client, patientBody(`PG-extra${sort}`, { gender: 'female' })));
  }
});

test('paging tokens are bound to their site and cannot be edited', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const other = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  for (let i = 0; i < 3; i++) await create(client, patientBody(`PT-${i}`));
  await create(other, patientBody('PT-other'));
  const first = await search(client, 'Patient?_count=1');
  const next = first.link.find((link) => link.relation === 'next')!.url;
  assert.equal((await client.request('GET', relative(next))).statusCode, 200);
  const foreign = await other.request('GET', relative(next));
  assert.equal(foreign.statusCode, 400);
  assert.equal(foreign.json().resourceType, 'OperationOutcome');
  const token = new URL(next).searchParams.get('_page')!;
  const [payload, signature] = token.split('.');
  const edited = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  edited.position.seq = '0';
  const forged = `${Buffer.from(JSON.stringify(edited)).toString('base64url')}.${signature}`;
  assert.equal((await client.request('GET', `/fhir/Patient?_page=${forged}`)).statusCode, 400);
  assert.equal((await client.request('GET', '/fhir/Patient?_page=garbage')).statusCode, 400);
  // A token of one type is not a token of another.
  assert.equal((await client.request('GET', `/fhir/Observation?_page=${token}`)).statusCode, 400);
});

test('unknown parameters are refused, or ignored and reported with Prefer: handling=lenient; bad values are 400', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const id = await create(client, patientBody('U-1'));
  const lenient = await search(client, 'Patient?colour=blue&_summary=bogus', { prefer: 'handling=lenient' });
  assert.deepEqual(matchIds(lenient), [id]);
  const outcome = lenient.entry!.find((entry) => entry.search.mode === 'outcome')!;
  assert.equal(outcome.resource.resourceType, 'OperationOutcome');
  assert.match(JSON.stringify(outcome.resource), /colour/);
  assert.match(JSON.stringify(outcome.resource), /_summary/);

  const strict = await client.request('GET', '/fhir/Patient?colour=blue', { headers: { prefer: 'handling=strict' } });
  assert.equal(strict.statusCode, 400);
  assert.equal((await client.request('GET', '/fhir/Patient?colour=blue')).statusCode, 400);
  assert.equal(strict.json().resourceType, 'OperationOutcome');
  // A parameter of another type is unknown here.
  assert.equal((await client.request('GET', '/fhir/Observation?gender=male', { headers: { prefer: 'handling=strict' } })).statusCode, 400);

  const tooMany = Array.from({ length: 101 }, (_, i) => `name=n${i}`).join('&');
  const controls = ['name=%00', 'identifier=%00', 'identifier=a%00|b', 'name=a%07b', `name=${'x'.repeat(5000)}`, tooMany];
  for (const query of [...controls, 'birthdate=1980-13-01', 'birthdate=yesterday', '_count=-1', '_count=abc', '_total=maybe', '_lastUpdated=2020-01-01T10:00', 'name:exact=x']) {
    const response = await client.request('GET', `/fhir/Patient?${query}`);
    assert.equal(response.statusCode, 400, query.slice(0, 40));
    assert.equal(response.json().resourceType, 'OperationOutcome', query.slice(0, 40));
  }
});

test('POST _search takes form-encoded parameters', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const id = await create(client, patientBody('F-1', { gender: 'unknown' }));
  const response = await client.request('POST', '/fhir/Patient/_search', {
    body: 'gender=unknown',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(response.statusCode, 200);
  assert.deepEqual(matchIds(response.json()), [id]);
  const wrongType = await client.request('POST', '/fhir/Patient/_search', { body: { gender: 'unknown' } });
  assert.equal(wrongType.statusCode, 415);
});
