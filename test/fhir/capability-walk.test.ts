import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createReport } from '../../src/domain/imaging/reports.ts';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/env.ts';
import { claimExport } from '../../src/domain/bulk-export/export-jobs.ts';
import { runExport } from '../../src/fhir/export/export-runner.ts';
import { useFhirOrigin, fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';
import { indexedStudyOf } from './imaging-study-support.ts';

// Issue 19 point 8: GET /fhir/metadata is walked claim by claim against a seeded site, so that a
// claim without behaviour (a new type, interaction, search parameter, result parameter or flag
// this walk does not know how to check) fails here instead of reaching a client.

const fhirOrigin = useFhirOrigin();

interface RestResource {
  type: string;
  documentation: string;
  interaction: { code: string }[];
  versioning: string;
  readHistory: boolean;
  updateCreate: boolean;
  conditionalCreate: boolean;
  conditionalRead: string;
  conditionalUpdate: boolean;
  conditionalDelete: string;
  searchParam: { name: string; type: string }[];
  searchInclude?: string[];
  searchRevInclude?: string[];
}

interface Bundle {
  type: string;
  total?: number;
  link: { relation: string; url: string }[];
  entry?: { resource: { id: string; resourceType: string; meta?: { versionId: string; tag?: { system: string; code: string }[] }; [element: string]: unknown }; search?: { mode: string } }[];
}

/** Two patients, and for every other type one resource of each, a's made before `between`, b's after. */
interface Seed {
  patients: { a: string; b: string; mrnA: string };
  ids: Record<string, { a: string; b: string }>;
  between: string;
  /** The bodies the stored resources were created from (for create and update). */
  bodies: Record<string, (patient: string) => Record<string, unknown>>;
}

const codes: Record<string, { system: string; a: string; b: string }> = {
  Condition: { system: 'http://snomed.info/sct', a: '38341003', b: '44054006' },
  AllergyIntolerance: { system: 'http://snomed.info/sct', a: '91936005', b: '300916003' },
  Observation: { system: 'http://loinc.org', a: '718-7', b: '2345-7' },
  Procedure: { system: 'http://snomed.info/sct', a: '80146002', b: '73761001' },
  DocumentReference: { system: 'http://loinc.org', a: '34133-9', b: '11488-4' },
};
const categories: Record<string, { system: string; a: string; b: string }> = {
  Observation: { system: 'http://terminology.hl7.org/CodeSystem/observation-category', a: 'laboratory', b: 'vital-signs' },
};
const clinicalStatus: Record<string, { system: string; a: string; b: string }> = {
  Condition: { system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', a: 'active', b: 'resolved' },
  AllergyIntolerance: { system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', a: 'active', b: 'inactive' },
};

// Each type's clinical date, in each of the forms its element takes: a's in 2020, b's from June 2024.
const clinicalDates: Record<string, { a: Record<string, unknown>; b: Record<string, unknown> }> = {
  Condition: { a: { onsetDateTime: '2020-03-04' }, b: { onsetPeriod: { start: '2024-06-01T10:00:00Z' } } },
  AllergyIntolerance: { a: { recordedDate: '2020-03' }, b: { recordedDate: '2024-06-01T10:00:00Z' } },
  Observation: { a: { effectiveDateTime: '2020-03-04' }, b: { effectivePeriod: { start: '2024-06-01T10:00:00Z' } } },
  Procedure: { a: { performedPeriod: { start: '2020-03-01', end: '2020-03-04' } }, b: { performedDateTime: '2024-06-01T10:00:00+02:00' } },
  DocumentReference: { a: { date: '2020-03-04T09:00:00Z' }, b: { date: '2024-06-01T10:00:00.250Z' } },
};

function bodyFor(type: string, which: 'a' | 'b', patient: string): Record<string, unknown> {
  const subject = { reference: `Patient/${patient}` };
  const coding = (of: Record<string, { system: string; a: string; b: string }>) => ({ coding: [{ system: of[type]!.system, code: of[type]![which] }] });
  const date = clinicalDates[type]?.[which];
  switch (type) {
    case 'Condition':
      return { resourceType: type, subject, clinicalStatus: coding(clinicalStatus), code: coding(codes), ...date };
    case 'AllergyIntolerance':
      return { resourceType: type, patient: subject, clinicalStatus: coding(clinicalStatus), code: coding(codes), ...date };
    case 'Observation':
      return { resourceType: type, status: which === 'a' ? 'final' : 'preliminary', category: [coding(categories)], subject, code: coding(codes), ...date };
    case 'Procedure':
      return { resourceType: type, status: 'completed', subject, code: coding(codes), ...date };
    case 'DocumentReference':
      return { resourceType: type, status: 'current', subject, type: coding(codes), content: [{ attachment: { contentType: 'text/plain', data: 'aGk=' } }], ...date };
    default:
      throw new Error(`the walk has no body for ${type}`);
  }
}

async function created(response: LightMyRequestResponse): Promise<string> {
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id;
}

async function seed(client: FhirClient): Promise<Seed> {
  const mrnA = `WALK-A-${client.site.siteId.slice(0, 8)}`;
  const ids: Seed['ids'] = {};
  const bodies: Seed['bodies'] = {};
  const patientA = await created(
    await client.request('POST', '/fhir/Patient', { body: patientBody(mrnA, { name: [{ family: 'Walker', given: ['Ann'] }], birthDate: '1970-03-04', gender: 'female' }) }),
  );
  const studyA = await indexedStudyOf(fhirOrigin.db.database, client.site, patientA, mrnA);
  const stored = Object.keys(codes);
  const others: Record<string, string> = {};
  for (const type of stored) {
    bodies[type] = (patient) => bodyFor(type, 'a', patient);
    others[type] = await created(await client.request('POST', `/fhir/${type}`, { body: bodyFor(type, 'a', patientA) }));
  }
  const reportA = (await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid: studyA, text: 'Final report.', status: 'completed' })).id;
  await new Promise((resolve) => setTimeout(resolve, 20));
  const between = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const mrnB = `WALK-B-${client.site.siteId.slice(0, 8)}`;
  const patientB = await created(
    await client.request('POST', '/fhir/Patient', { body: patientBody(mrnB, { name: [{ text: 'Bob Bishop', family: 'Bishop', given: ['Bob'] }], birthDate: '1990', gender: 'male' }) }),
  );
  ids.Patient = { a: patientA, b: patientB };
  for (const type of stored) ids[type] = { a: others[type]!, b: await created(await client.request('POST', `/fhir/${type}`, { body: bodyFor(type, 'b', patientB) })) };
  const studyB = await indexedStudyOf(fhirOrigin.db.database, client.site, patientB, mrnB);
  ids.DiagnosticReport = { a: reportA, b: (await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid: studyB, text: 'Draft.', status: 'draft' })).id };
  bodies.Patient = () => patientBody(`WALK-C-${client.site.siteId.slice(0, 8)}`);
  return { patients: { a: patientA, b: patientB, mrnA }, ids, between, bodies };
}

/** The seeded codes of a type, or a failure naming the claim the walk cannot check. */
function seeded(table: Record<string, { system: string; a: string; b: string }>, type: string, parameter: string) {
  const values = table[type];
  assert.ok(values, `the walk has no seeded values for ${type}?${parameter}, which the statement claims`);
  return values;
}

/** For each search parameter name the walk knows: queries and the seeded resources each must match. */
type Probe = (type: string, seed: Seed) => [query: string, expected: ('a' | 'b')[]][];

const probes: Record<string, Probe> = {
  _id: (type, { ids }) => [
    [`_id=${ids[type]!.a}`, ['a']],
    [`_id=${ids[type]!.a},${ids[type]!.b}`, ['a', 'b']],
  ],
  _lastUpdated: (_type, { between }) => [
    [`_lastUpdated=lt${encodeURIComponent(between)}`, ['a']],
    [`_lastUpdated=ge${encodeURIComponent(between)}`, ['b']],
  ],
  patient: (_type, { patients }) => [
    [`patient=Patient/${patients.a}`, ['a']],
    [`patient=${patients.b}`, ['b']],
  ],
  subject: (_type, { patients }) => [
    [`subject=Patient/${patients.a}`, ['a']],
    [`subject=${patients.b}`, ['b']],
    [`subject=Group/${patients.a}`, []],
  ],
  category: (type) => {
    const category = seeded(categories, type, 'category');
    return [
      [`category=${category.a}`, ['a']],
      [`category=${category.system}|${category.b}`, ['b']],
    ];
  },
  identifier: (_type, { patients }) => [
    [`identifier=urn:mrn|${patients.mrnA}`, ['a']],
    [`identifier=${patients.mrnA}`, ['a']],
  ],
  name: () => [
    ['name=WALK', ['a']],
    ['name=bishop', ['b']],
  ],
  family: () => [
    ['family=walk', ['a']],
    ['family=BISH', ['b']],
    ['family=alker', []],
  ],
  given: () => [
    ['given=an', ['a']],
    ['given=bob,ann', ['a', 'b']],
    ['given=walker', []],
  ],
  birthdate: () => [
    ['birthdate=1970-03-04', ['a']],
    ['birthdate=gt1980', ['b']],
  ],
  date: (type) => clinicalDateProbes(type, 'date'),
  'onset-date': (type) => clinicalDateProbes(type, 'onset-date'),
  gender: () => [
    ['gender=female', ['a']],
    ['gender=http://hl7.org/fhir/administrative-gender|male', ['b']],
  ],
  'clinical-status': (type) => {
    const status = seeded(clinicalStatus, type, 'clinical-status');
    return [
      [`clinical-status=${status.a}`, ['a']],
      [`clinical-status=${status.system}|${status.b}`, ['b']],
    ];
  },
  code: (type) => {
    const code = seeded(codes, type, 'code');
    return [
      [`code=${code.system}|${code.a}`, ['a']],
      [`code=${code.b}`, ['b']],
    ];
  },
  type: (type) => [[`type=${seeded(codes, type, 'type').system}|${seeded(codes, type, 'type').a}`, ['a']]],
  status: () => [
    ['status=final', ['a']],
    ['status=preliminary', ['b']],
  ],
  // Result parameters claimed as search parameters: they choose order and content, never the matches.
  _sort: () => [['_sort=-_id', ['a', 'b']]],
  _summary: () => [['_summary=true', ['a', 'b']]],
  _elements: () => [['_elements=id', ['a', 'b']]],
};

function clinicalDateProbes(type: string, parameter: string): [string, ('a' | 'b')[]][] {
  assert.ok(clinicalDates[type], `the walk has no seeded dates for ${type}?${parameter}, which the statement claims`);
  return [
    [`${parameter}=2020`, ['a']],
    [`${parameter}=ge2024-06-01`, ['b']],
    [`${parameter}=lt2024-06-01T12:00:01%2B02:00`, ['a', 'b']],
    [`${parameter}=gt2020-12-31&${parameter}=lt2024`, []],
  ];
}

const isSubsetted = (resource: { meta?: { tag?: { system: string; code: string }[] } }) =>
  (resource.meta?.tag ?? []).some((tag) => tag.system === 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue' && tag.code === 'SUBSETTED');

/** Each claimed _include or _revinclude value of a type: the seeded a's search includes a's resource of the other side, never b's. */
async function walkIncludes(resource: RestResource, client: FhirClient, seed: Seed, parameter: '_include' | '_revinclude'): Promise<void> {
  const claims = (parameter === '_include' ? resource.searchInclude : resource.searchRevInclude) ?? [];
  assert.ok(claims.length > 0, `${resource.type} documents ${parameter} but claims no value`);
  for (const claim of claims) {
    const [source, name] = claim.split(':') as [string, string];
    assert.ok(name === 'patient' || name === 'subject', `the walk cannot check ${parameter}=${claim}`);
    const other = parameter === '_include' ? 'Patient' : source;
    assert.ok(seed.ids[other], `the walk has no seed for ${other}`);
    const bundle = await search(client, `/fhir/${resource.type}?_id=${seed.ids[resource.type]!.a}&${parameter}=${claim}`);
    const included = (bundle.entry ?? []).filter((entry) => entry.search?.mode === 'include').map((entry) => `${entry.resource.resourceType}/${entry.resource.id}`);
    assert.ok(included.includes(`${other}/${seed.ids[other]!.a}`), `${resource.type}?${parameter}=${claim}: ${included.join(', ')}`);
    assert.ok(!included.includes(`${other}/${seed.ids[other]!.b}`), `${resource.type}?${parameter}=${claim}: only a's`);
    assert.equal(bundle.total, 1, `${resource.type}?${parameter}=${claim}: the total counts matches only`);
  }
}

/** For each result parameter the documentation names: what it must do to a search of a and b. */
const resultProbes: Record<string, (type: string, client: FhirClient, seed: Seed, documentation: string, resource: RestResource) => Promise<void>> = {
  async _count(type, client) {
    const bundle = await search(client, `/fhir/${type}?_count=1`);
    assert.equal(bundle.entry?.length, 1, `${type} _count`);
    const next = bundle.link.find((link) => link.relation === 'next');
    assert.ok(next, `${type} _count: next link`);
    assert.equal((await search(client, relative(next.url))).entry?.length, 1, `${type} _count: next page`);
  },
  async _sort(type, client, { ids }, documentation) {
    const keys = /_sort \(comma-separated keys among ([^;]*);/.exec(documentation)![1]!.split('|');
    assert.ok(keys.includes('_id') && keys.includes('_lastUpdated'), `${type} _sort keys`);
    const a = ids[type]!.a;
    const b = ids[type]!.b;
    for (const key of keys) {
      const ascending = (await search(client, `/fhir/${type}?_sort=${key}`)).entry!.map((entry) => entry.resource.id);
      const descending = (await search(client, `/fhir/${type}?_sort=-${key}`)).entry!.map((entry) => entry.resource.id);
      assert.deepEqual([...ascending].sort(), [a, b].sort(), `${type} _sort=${key}`);
      // a and b differ in every sortable value the seed sets.
      assert.deepEqual(descending, [...ascending].reverse(), `${type} _sort=-${key}`);
      if (key === '_lastUpdated') assert.deepEqual(ascending, [a, b], `${type} _sort=_lastUpdated`);
      if (key === '_id') assert.deepEqual(ascending, [a, b].sort(), `${type} _sort=_id`);
      // The order holds across pages (the keys are in the page cursor).
      const first = await search(client, `/fhir/${type}?_sort=-${key}&_count=1`);
      const second = await search(client, relative(first.link.find((link) => link.relation === 'next')!.url));
      assert.deepEqual([first.entry![0]!.resource.id, second.entry![0]!.resource.id], descending, `${type} _sort=-${key} paged`);
    }
    assert.equal((await client.request('GET', `/fhir/${type}?_sort=unknown`)).statusCode, 400, `${type} _sort on an unknown key`);
  },
  async _elements(type, client) {
    const bundle = await search(client, `/fhir/${type}?_elements=id`);
    for (const entry of bundle.entry!) assert.ok(isSubsetted(entry.resource), `${type} _elements: SUBSETTED`);
  },
  async _include(type, client, seed, _documentation, resource) {
    await walkIncludes(resource, client, seed, '_include');
  },
  async _revinclude(type, client, seed, _documentation, resource) {
    await walkIncludes(resource, client, seed, '_revinclude');
  },
  async _total(type, client) {
    assert.equal((await search(client, `/fhir/${type}?_total=accurate`)).total, 2, `${type} _total=accurate`);
    assert.equal((await search(client, `/fhir/${type}?_total=none`)).total, undefined, `${type} _total=none`);
  },
  async _summary(type, client) {
    const counted = await search(client, `/fhir/${type}?_summary=count`);
    assert.equal(counted.total, 2, `${type} _summary=count`);
    assert.equal(counted.entry?.length ?? 0, 0, `${type} _summary=count`);
    assert.equal((await search(client, `/fhir/${type}?_summary=false`)).entry?.length, 2, `${type} _summary=false`);
    for (const mode of ['true', 'text', 'data']) {
      const bundle = await search(client, `/fhir/${type}?_summary=${mode}`);
      assert.equal(bundle.entry?.length, 2, `${type} _summary=${mode}`);
      for (const entry of bundle.entry!) assert.ok(isSubsetted(entry.resource), `${type} _summary=${mode}: SUBSETTED`);
      if (mode === 'data') assert.ok(bundle.entry!.every((entry) => entry.resource.text === undefined), `${type} _summary=data`);
    }
    assert.equal((await client.request('GET', `/fhir/${type}?_summary=bogus`)).statusCode, 400, `${type} _summary=bogus`);
  },
  async _format(type, client) {
    await search(client, `/fhir/${type}?_format=json`);
    assert.equal((await client.request('GET', `/fhir/${type}?_format=xml`)).statusCode, 406, `${type} _format=xml`);
  },
  async _pretty(type, client) {
    const response = await client.request('GET', `/fhir/${type}?_pretty=true`);
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /^\{\n {2}"resourceType"/, `${type} _pretty=true`);
  },
};

async function search(client: FhirClient, url: string, headers: Record<string, string> = {}): Promise<Bundle> {
  const response = await client.request('GET', url, { headers });
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return response.json();
}

function relative(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

function matched(bundle: Bundle, seed: Seed, type: string): string[] {
  const names = new Map([
    [seed.ids[type]!.a, 'a'],
    [seed.ids[type]!.b, 'b'],
  ]);
  return (bundle.entry ?? [])
    .filter((entry) => entry.search?.mode === 'match')
    .map((entry) => names.get(entry.resource.id) ?? entry.resource.id)
    .sort();
}

const missing = '00000000-0000-4000-8000-000000000000';

/**
 * Interactions the walk can perform, and what refusing each looks like when it is not claimed.
 * In this order: create comes after search-type, whose total it would change.
 */
const interactions: Record<string, { perform(resource: RestResource, client: FhirClient, seed: Seed): Promise<void>; refused(type: string, client: FhirClient, seed: Seed): Promise<void> }> = {
  read: {
    async perform({ type }, client, { ids }) {
      const response = await client.request('GET', `/fhir/${type}/${ids[type]!.a}`);
      assert.equal(response.statusCode, 200, `${type} read`);
      assert.equal(response.json().id, ids[type]!.a);
      assert.equal(response.headers.etag, `W/"${response.json().meta.versionId}"`);
      assert.equal((await client.request('GET', `/fhir/${type}/${missing}`)).statusCode, 404, `${type} read of an unknown id`);
    },
    async refused(type, client, { ids }) {
      assert.equal((await client.request('GET', `/fhir/${type}/${ids[type]!.a}`)).statusCode, 405);
    },
  },
  vread: {
    async perform({ type }, client, { ids }) {
      const current = (await client.request('GET', `/fhir/${type}/${ids[type]!.a}`)).json();
      const version = await client.request('GET', `/fhir/${type}/${ids[type]!.a}/_history/${current.meta.versionId}`);
      assert.equal(version.statusCode, 200, `${type} vread`);
      assert.deepEqual(version.json(), current);
      assert.equal((await client.request('GET', `/fhir/${type}/${ids[type]!.a}/_history/999`)).statusCode, 404, `${type} vread of an unknown version`);
    },
    async refused(type, client, { ids }) {
      assert.notEqual((await client.request('GET', `/fhir/${type}/${ids[type]!.a}/_history/1`)).statusCode, 200);
    },
  },
  update: {
    async perform({ type, documentation }, client, { ids }) {
      const url = `/fhir/${type}/${ids[type]!.a}`;
      const current = (await client.request('GET', url)).json();
      const updated = await client.request('PUT', url, { body: current });
      assert.equal(updated.statusCode, 200, `${type} update: ${updated.body}`);
      assert.equal(updated.json().meta.versionId, String(Number(current.meta.versionId) + 1));
      const { id: _id, ...withoutId } = current;
      const noId = await client.request('PUT', url, { body: withoutId });
      if (/a body without id is refused with 400/.test(documentation)) {
        assert.equal(noId.statusCode, 400, `${type} update without id`);
      } else {
        assert.match(documentation, /a body without id updates the resource of the URL/, `${type}: the documentation says what a body without id does`);
        assert.equal(noId.statusCode, 200, `${type} update without id`);
      }
    },
    async refused(type, client, { ids }) {
      assert.equal((await client.request('PUT', `/fhir/${type}/${ids[type]!.a}`, { body: { resourceType: type, id: ids[type]!.a } })).statusCode, 405);
    },
  },
  'search-type': {
    async perform({ type }, client, seed) {
      const bundle = await search(client, `/fhir/${type}`);
      assert.equal(bundle.type, 'searchset');
      assert.equal(bundle.total, 2, `${type} search`);
      assert.deepEqual(matched(bundle, seed, type), ['a', 'b']);
      const posted = await client.request('POST', `/fhir/${type}/_search`, { body: `_id=${seed.ids[type]!.b}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(posted.statusCode, 200, `${type} POST _search`);
      assert.deepEqual(matched(posted.json(), seed, type), ['b']);
    },
    async refused(type, client) {
      assert.notEqual((await client.request('GET', `/fhir/${type}`)).statusCode, 200);
    },
  },
  'history-instance': {
    async perform({ type, documentation }, client, { ids }) {
      const url = `/fhir/${type}/${ids[type]!.b}`;
      const first = (await client.request('GET', url)).json();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const between = new Date().toISOString();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = (await client.request('PUT', url, { body: first })).json();
      const bundle = await search(client, `${url}/_history`);
      assert.equal(bundle.type, 'history');
      assert.deepEqual(bundle.entry!.map((entry) => entry.resource.meta!.versionId), [second.meta.versionId, first.meta.versionId]);
      // Every link of the bundle answers.
      for (const link of bundle.link) assert.equal((await client.request('GET', relative(link.url))).statusCode, 200, `${type} history ${link.relation} link ${link.url}`);
      const parameters = [.../History takes ([^.]*)\./.exec(documentation)![1]!.matchAll(/(?:^|, )(_[a-z]+) \(/g)].map((match) => match[1]!);
      assert.ok(parameters.includes('_count'), `${type}: the documentation lists the history parameters`);
      const checks: Record<string, () => Promise<void>> = {
        async _count() {
          const page = await search(client, `${url}/_history?_count=1`);
          assert.deepEqual(page.entry!.map((entry) => entry.resource.meta!.versionId), [second.meta.versionId]);
          const next = await search(client, relative(page.link.find((link) => link.relation === 'next')!.url));
          assert.deepEqual(next.entry!.map((entry) => entry.resource.meta!.versionId), [first.meta.versionId]);
        },
        async _since() {
          const since = await search(client, `${url}/_history?_since=${encodeURIComponent(between)}`);
          assert.deepEqual(since.entry!.map((entry) => entry.resource.meta!.versionId), [second.meta.versionId], `${type} _since`);
        },
        async _at() {
          const at = await search(client, `${url}/_history?_at=${encodeURIComponent(between)}`);
          assert.deepEqual(at.entry!.map((entry) => entry.resource.meta!.versionId), [first.meta.versionId], `${type} _at`);
        },
      };
      for (const parameter of parameters) {
        assert.ok(checks[parameter], `the walk cannot check the history parameter ${parameter} that ${type} claims`);
        await checks[parameter]!();
      }
      assert.equal((await client.request('GET', `${url}/_history?_unknown=1`)).statusCode, 400, `${type} history with an unknown parameter`);
    },
    async refused(type, client, { ids }) {
      assert.equal((await client.request('GET', `/fhir/${type}/${ids[type]!.a}/_history`)).statusCode, 404);
    },
  },
  create: {
    async perform({ type }, client, seed) {
      const response = await client.request('POST', `/fhir/${type}`, { body: seed.bodies[type]!(seed.patients.a) });
      assert.equal(response.statusCode, 201, `${type} create: ${response.body}`);
      assert.equal((await client.request('GET', relative(String(response.headers.location)))).statusCode, 200, `${type} create: Location`);
    },
    async refused(type, client) {
      assert.equal((await client.request('POST', `/fhir/${type}`, { body: { resourceType: type } })).statusCode, 405);
    },
  },
  'history-type': {
    async perform({ type }, client, { ids }) {
      const bundle = await search(client, `/fhir/${type}/_history`);
      assert.equal(bundle.type, 'history', `${type} history-type`);
      const seen = bundle.entry!.map((entry) => entry.resource.id);
      assert.ok(seen.includes(ids[type]!.a) && seen.includes(ids[type]!.b), `${type} history-type: the versions of a and b`);
      assert.ok(bundle.entry!.every((entry) => entry.resource.resourceType === type), `${type} history-type: its type only`);
      const page = await search(client, `/fhir/${type}/_history?_count=1`);
      assert.equal(page.entry!.length, 1);
      const next = await search(client, relative(page.link.find((link) => link.relation === 'next')!.url));
      assert.notDeepEqual(next.entry![0], page.entry![0], `${type} history-type: the next page`);
      const since = await search(client, `/fhir/${type}/_history?_since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
      assert.equal(since.entry?.length ?? 0, 0, `${type} history-type _since`);
      assert.equal((await client.request('GET', `/fhir/${type}/_history?_since=tomorrow`)).statusCode, 400);
    },
    async refused(type, client) {
      assert.notEqual((await client.request('GET', `/fhir/${type}/_history`)).statusCode, 200);
    },
  },
  patch: {
    async perform({ type }) {
      assert.fail(`the walk cannot check patch, which ${type} claims`);
    },
    async refused(type, client, { ids }) {
      assert.equal((await client.request('PATCH', `/fhir/${type}/${ids[type]!.a}`, { body: [] })).statusCode, 405);
    },
  },
  delete: {
    async perform({ type }) {
      assert.fail(`the walk cannot check delete, which ${type} claims`);
    },
    async refused(type, client, { ids }) {
      assert.equal((await client.request('DELETE', `/fhir/${type}/${ids[type]!.a}`)).statusCode, 405);
      assert.equal((await client.request('GET', `/fhir/${type}/${ids[type]!.a}`)).statusCode, 200);
    },
  },
};

test('every type, interaction, search parameter and flag the CapabilityStatement claims works as claimed, and nothing unclaimed does', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database, { patientPutCreates: true });
  const seedData = await seed(client);
  const statement = (await client.request('GET', '/fhir/metadata')).json();
  assert.equal(statement.fhirVersion, '4.0.1');
  assert.deepEqual(statement.format, ['json']);
  assert.match(statement.rest[0].documentation, /Prefer: handling=lenient/);
  const resources = statement.rest[0].resource as RestResource[];
  assert.equal((await client.request('GET', '/fhir/Medication')).statusCode, 404, 'an unclaimed type');
  const claimedSystem = (statement.rest[0].interaction ?? []).map((interaction: { code: string }) => interaction.code);
  for (const code of claimedSystem) assert.ok(['batch', 'transaction', 'history-system'].includes(code), `the walk cannot check ${code}, which the server claims`);
  const system = await client.request('GET', '/fhir/_history');
  if (claimedSystem.includes('history-system')) {
    assert.equal(system.statusCode, 200, 'history-system');
    const versions = (system.json() as Bundle).entry!.map((entry) => `${entry.resource.resourceType}/${entry.resource.id}`);
    for (const resource of resources.filter((candidate) => candidate.interaction.some((interaction) => interaction.code === 'history-type'))) {
      assert.ok(versions.includes(`${resource.type}/${seedData.ids[resource.type]!.a}`), `history-system holds ${resource.type}`);
    }
  } else {
    assert.notEqual(system.statusCode, 200, 'history-system is not claimed');
  }

  for (const resource of resources) {
    const { type } = resource;
    assert.ok(seedData.ids[type], `the walk has no seed for ${type}, a type the statement claims`);
    const claimed = resource.interaction.map((interaction) => interaction.code);
    for (const code of claimed) {
      assert.ok(interactions[code], `the walk cannot check ${code}, which ${type} claims`);
    }
    // Searches first, while the seed is as made; then the interactions that add versions.
    for (const parameter of resource.searchParam) {
      const probe = probes[parameter.name];
      assert.ok(probe, `the walk has no probe for the search parameter ${parameter.name} that ${type} claims`);
      for (const [query, expected] of probe(type, seedData)) {
        const bundle = await search(client, `/fhir/${type}?${query}`, { prefer: 'handling=strict' });
        assert.deepEqual(matched(bundle, seedData, type), expected, `${type}?${query}`);
        // The parameter was applied: it is in the self link.
        assert.match(bundle.link[0]!.url, new RegExp(`[?&]${parameter.name}=`), `${type}?${query}: self link`);
      }
      // Modifiers and chains on it are refused.
      assert.equal((await client.request('GET', `/fhir/${type}?${parameter.name}:missing=true`)).statusCode, 400, `${type} ${parameter.name}:missing`);
      assert.equal((await client.request('GET', `/fhir/${type}?${parameter.name}.name=x`)).statusCode, 400, `${type} ${parameter.name}.name`);
    }
    const results = /Result parameters: (.*?)\. /.exec(resource.documentation)?.[1]?.match(/(?:^|, )(_[a-z]+)/g)?.map((name) => name.replace(', ', '')) ?? [];
    assert.ok(results.includes('_count'), `${type}: the documentation lists the result parameters`);
    for (const name of results) {
      assert.ok(resultProbes[name], `the walk has no probe for the result parameter ${name} that ${type} documents`);
      await resultProbes[name]!(type, client, seedData, resource.documentation, resource);
    }
    // Parameters that are not claimed are refused, and under lenient handling ignored and left out of the self link.
    const unclaimed = ['_text=x', '_content=x', '_tag=x', '_has:Observation:patient:code=1', '_include=*', '_elements=id', 'subject=Patient/x', 'date=2020'];
    if (!results.includes('_sort')) unclaimed.push('_sort=-_lastUpdated');
    for (const query of unclaimed.filter((query) => !resource.searchParam.some((parameter) => query.startsWith(`${parameter.name}=`)))) {
      const refused = await client.request('GET', `/fhir/${type}?${query}`);
      assert.equal(refused.statusCode, 400, `${type}?${query}`);
      assert.equal(refused.json().issue[0].code, 'not-supported', `${type}?${query}`);
      const lenient = await search(client, `/fhir/${type}?${query}`, { prefer: 'handling=lenient' });
      assert.deepEqual(matched(lenient, seedData, type), ['a', 'b'], `${type}?${query} lenient`);
      assert.equal(new URL(lenient.link[0]!.url).search, '', `${type}?${query} lenient: self link`);
    }

    for (const code of Object.keys(interactions)) {
      if (claimed.includes(code)) await interactions[code]!.perform(resource, client, seedData);
      else await interactions[code]!.refused(type, client, seedData);
    }

    // Flags.
    const a = `/fhir/${type}/${seedData.ids[type]!.a}`;
    const current = await client.request('GET', a);
    assert.ok(current.json().meta.versionId, `${type} versioning ${resource.versioning}`);
    if (resource.versioning === 'versioned-update') {
      const stale = await client.request('PUT', a, { body: current.json(), headers: { 'if-match': 'W/"0"' } });
      assert.equal(stale.statusCode, 412, `${type} versioned-update: a stale If-Match`);
    } else {
      assert.equal(resource.versioning, 'versioned', `the walk cannot check versioning ${resource.versioning}`);
    }
    if (resource.readHistory) {
      const v1 = await client.request('GET', `${a}/_history/1`);
      assert.equal(v1.statusCode, 200, `${type} readHistory`);
      assert.equal(v1.json().meta.versionId, '1');
      assert.notEqual(current.json().meta.versionId, '1', `${type} readHistory: the walk updated it`);
    }
    const unknownId = '00000000-0000-4000-8000-0000000000ff';
    const putNew = await client.request('PUT', `/fhir/${type}/${unknownId}`, { body: { ...(current.json() as Record<string, unknown>), id: unknownId } });
    const madeAtId = (await client.request('GET', `/fhir/${type}/${unknownId}`)).statusCode === 200;
    assert.equal(madeAtId, resource.updateCreate, `${type} updateCreate ${resource.updateCreate} (PUT to a new id: ${putNew.statusCode})`);
    if (claimed.includes('create')) {
      const conditional = await client.request('POST', `/fhir/${type}`, { body: seedData.bodies[type]!(seedData.patients.a), headers: { 'if-none-exist': `_id=${seedData.ids[type]!.a}` } });
      assert.equal(conditional.statusCode === 200 && conditional.json().id === seedData.ids[type]!.a, resource.conditionalCreate, `${type} conditionalCreate`);
    }
    const ifNoneMatch = await client.request('GET', a, { headers: { 'if-none-match': String(current.headers.etag) } });
    const ifModifiedSince = await client.request('GET', a, { headers: { 'if-modified-since': String(current.headers['last-modified']) } });
    if (resource.conditionalRead === 'full-support') {
      assert.equal(ifNoneMatch.statusCode, 304, `${type} conditionalRead full-support: If-None-Match`);
      assert.equal(ifModifiedSince.statusCode, 304, `${type} conditionalRead full-support: If-Modified-Since`);
    } else {
      assert.equal(resource.conditionalRead, 'not-supported', `the walk cannot check conditionalRead ${resource.conditionalRead}`);
      assert.equal(ifNoneMatch.statusCode, 200, `${type} conditionalRead not-supported`);
    }
    const conditionalUpdate = await client.request('PUT', `/fhir/${type}?_id=${seedData.ids[type]!.a}`, { body: current.json() });
    if (resource.conditionalUpdate) {
      assert.equal(conditionalUpdate.statusCode, 200, `${type} conditionalUpdate`);
      assert.equal(conditionalUpdate.json().id, seedData.ids[type]!.a, `${type} conditionalUpdate: the match`);
      assert.equal(Number(conditionalUpdate.json().meta.versionId), Number(current.json().meta.versionId) + 1, `${type} conditionalUpdate: a new version`);
    } else {
      assert.ok(conditionalUpdate.statusCode >= 400, `${type} conditionalUpdate false`);
    }
    assert.equal(resource.conditionalDelete, 'not-supported', `the walk cannot check conditionalDelete ${resource.conditionalDelete}`);
    assert.ok((await client.request('DELETE', `/fhir/${type}?_id=${seedData.ids[type]!.a}`)).statusCode >= 400, `${type} conditionalDelete not-supported`);
    assert.equal((await client.request('GET', a)).statusCode, 200, `${type}: still there`);
  }
  // System interactions (after the types: they add resources the searches above do not expect): each claimed one is walked, and an unclaimed Bundle type is refused.
  // history-system was walked before the types.
  const systemInteractions = ((statement.rest[0].interaction ?? []) as { code: string }[]).map((interaction) => interaction.code).filter((code) => code !== 'history-system');
  for (const code of systemInteractions) {
    assert.ok(code === 'batch' || code === 'transaction', `the walk cannot check the system interaction ${code}`);
    const patient = seedData.patients.a;
    const observations = `Observation?patient=${patient}&_summary=count`;
    const before = (await client.request('GET', `/fhir/${observations}`)).json().total as number;
    const answer = await client.request('POST', '/fhir', {
      body: {
        resourceType: 'Bundle',
        type: code,
        entry: [
          { request: { method: 'GET', url: `Patient/${patient}` } },
          { resource: seedData.bodies.Observation!(patient), request: { method: 'POST', url: 'Observation' } },
          { request: { method: 'GET', url: observations } },
        ],
      },
    });
    assert.equal(answer.statusCode, 200, `${code}: ${answer.body}`);
    assert.equal(answer.json().type, `${code}-response`);
    assert.deepEqual(answer.json().entry.map((entry: { response: { status: string } }) => entry.response.status), ['200 OK', '201 Created', '200 OK'], code);
    // Both process creates before reads (http.html#transaction); a transaction's reads see its own writes.
    assert.equal(answer.json().entry[2].resource.total, before + 1, `${code}: the read runs after the create`);
  }
  for (const code of ['batch', 'transaction', 'history']) {
    if (systemInteractions.includes(code)) continue;
    assert.ok((await client.request('POST', '/fhir', { body: { resourceType: 'Bundle', type: code, entry: [] } })).statusCode >= 400, `${code} is not claimed`);
  }

});

test('the OpenAPI document describes the 400 for unsupported parameters and the Prefer header of every search and history', async () => {
  const document = (await fhirOrigin.app.inject({ method: 'GET', url: '/api/documentation/openapi.json' })).json();
  const statement = (await fhirOrigin.app.inject({ method: 'GET', url: '/fhir/metadata' })).json();
  const systemInteractions = ((statement.rest[0].interaction ?? []) as { code: string }[]).map((interaction) => interaction.code).filter((code) => code !== 'history-system');
  assert.equal(Boolean(document.paths['/fhir']?.post), systemInteractions.length > 0, 'POST /fhir is documented exactly when batch or transaction is claimed');
  for (const code of systemInteractions) assert.match(document.paths['/fhir'].post.description, new RegExp(code), `${code} documented`);
  const systemHistory = (statement.rest[0].interaction ?? []).some((interaction: { code: string }) => interaction.code === 'history-system');
  assert.equal(Boolean(document.paths['/fhir/_history']?.get), systemHistory, 'history-system documented exactly when claimed');
  for (const resource of statement.rest[0].resource as RestResource[]) {
    const operations = [document.paths[`/fhir/${resource.type}`].get, document.paths[`/fhir/${resource.type}/_search`].post];
    if (resource.interaction.some((interaction) => interaction.code === 'history-instance')) operations.push(document.paths[`/fhir/${resource.type}/{id}/_history`].get);
    for (const operation of operations) {
      assert.match(operation.responses['400'].description, /unsupported parameter/, resource.type);
      const prefer = operation.parameters.find((parameter: { in: string; name: string }) => parameter.in === 'header' && parameter.name === 'prefer');
      assert.match(prefer.description, /handling=lenient/, resource.type);
    }
    const queryNames = document.paths[`/fhir/${resource.type}`].get.parameters
      .filter((parameter: { in: string }) => parameter.in === 'query')
      .map((parameter: { name: string }) => parameter.name);
    for (const parameter of resource.searchParam) assert.ok(queryNames.includes(parameter.name), `${resource.type} ${parameter.name} documented`);
    if ((resource.searchInclude ?? []).length > 0) assert.ok(queryNames.includes('_include'), `${resource.type} _include documented`);
    if ((resource.searchRevInclude ?? []).length > 0) assert.ok(queryNames.includes('_revinclude'), `${resource.type} _revinclude documented`);
    const typeHistory = document.paths[`/fhir/${resource.type}/_history`]?.get;
    assert.equal(Boolean(typeHistory), resource.interaction.some((interaction) => interaction.code === 'history-type'), `${resource.type}: history-type documented exactly when claimed`);
    if (typeHistory) assert.match(typeHistory.responses['400'].description, /unsupported parameter/, resource.type);
    if (resource.conditionalRead === 'full-support') {
      for (const read of [document.paths[`/fhir/${resource.type}/{id}`].get, document.paths[`/fhir/${resource.type}/{id}/_history/{vid}`].get]) {
        assert.ok(read.responses['304'], `${resource.type}: the 304 of a conditional read documented`);
        const names = read.parameters.filter((parameter: { in: string }) => parameter.in === 'header').map((parameter: { name: string }) => parameter.name);
        assert.ok(names.includes('if-none-match') && names.includes('if-modified-since'), `${resource.type}: conditional read headers documented`);
      }
    }
    const conditionalUpdate = document.paths[`/fhir/${resource.type}`].put;
    assert.equal(Boolean(conditionalUpdate), resource.conditionalUpdate, `${resource.type}: conditional update documented exactly when claimed`);
    if (conditionalUpdate) {
      assert.ok(conditionalUpdate.responses['201'] && conditionalUpdate.responses['200'], `${resource.type}: conditional update answers documented`);
      assert.match(conditionalUpdate.description, /Several matches: 412/, resource.type);
    }
  }
});

/** What the walk does for each operation the statement claims: kick it off and see it complete. */
const operationProbes: Record<string, (client: FhirClient, kickOffPath: string) => Promise<void>> = {
  async export(client, kickOffPath) {
    const kickOff = await client.request('GET', kickOffPath, { headers: { prefer: 'respond-async', accept: 'application/fhir+json' } });
    assert.equal(kickOff.statusCode, 202, `${kickOffPath}: ${kickOff.body}`);
    const status = new URL(String(kickOff.headers['content-location'])).pathname;
    const dir = await scratchDir();
    const settings = { ...loadConfig({ CG_DATA_DIR: dir }).bulkExport, dir };
    const database = fhirOrigin.db.database;
    for (let job = await claimExport(database, 'walk', 30); job; job = await claimExport(database, 'walk', 30)) {
      await runExport({ database, settings, owner: 'walk', logger: pino({ level: 'silent' }), stopping: () => false }, job);
    }
    const done = await client.request('GET', status);
    assert.equal(done.statusCode, 200, `${kickOffPath}: the export completes`);
    assert.equal(done.json().requiresAccessToken, true);
    assert.ok(done.json().output.some((file: { type: string }) => file.type === 'Patient'), `${kickOffPath}: patients are exported`);
  },
  // Claimed on Patient at instance level: the type-level path is not served.
  async everything(client, typePath) {
    assert.equal((await client.request('GET', typePath)).statusCode, 404, `${typePath}: instance level only`);
    const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody(`EV-${client.site.siteId.slice(0, 8)}`) })).json().id as string;
    const observation = await created(
      await client.request('POST', '/fhir/Observation', { body: { resourceType: 'Observation', status: 'final', code: { text: 'x' }, subject: { reference: `Patient/${patient}` } } }),
    );
    const bundle = (await client.request('GET', `/fhir/Patient/${patient}/$everything`)).json();
    assert.deepEqual(
      bundle.entry.map((entry: { resource: { resourceType: string; id: string } }) => `${entry.resource.resourceType}/${entry.resource.id}`),
      [`Patient/${patient}`, `Observation/${observation}`],
    );
  },
};

function scratchDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'cg-walk-export-'));
}

test('every operation the CapabilityStatement claims (system and type level) works, it instantiates the Bulk Data statement, and unclaimed operations are not served', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  await client.request('POST', '/fhir/Patient', { body: patientBody('OP-1') });
  const statement = (await client.request('GET', '/fhir/metadata')).json();
  assert.deepEqual(statement.instantiates, ['http://hl7.org/fhir/uv/bulkdata/CapabilityStatement/bulk-data']);
  const claimed: [string, string][] = (statement.rest[0].operation ?? []).map((operation: { name: string }) => [operation.name, `/fhir/$${operation.name}`]);
  for (const resource of statement.rest[0].resource as { type: string; operation?: { name: string }[] }[]) {
    for (const operation of resource.operation ?? []) claimed.push([operation.name, `/fhir/${resource.type}/$${operation.name}`]);
  }
  assert.deepEqual(claimed.map(([, path]) => path).sort(), ['/fhir/$export', '/fhir/Patient/$everything', '/fhir/Patient/$export']);
  for (const [name, path] of claimed) {
    assert.ok(operationProbes[name], `the walk cannot check the operation ${name} claimed at ${path}`);
    await operationProbes[name]!(client, path);
  }
  // The OpenAPI document claims exactly these operations: the kick-offs, the status URL and the files.
  const document = (await fhirOrigin.app.inject({ method: 'GET', url: '/api/documentation/openapi.json' })).json();
  const operationPaths = Object.keys(document.paths).filter((path) => path.includes('$'));
  assert.deepEqual(operationPaths.sort(), ['/fhir/$export', '/fhir/$export-file/{id}/{index}', '/fhir/$export-status/{id}', '/fhir/Patient/$export', '/fhir/Patient/{id}/$everything']);
  assert.deepEqual(Object.keys(document.paths['/fhir/Patient/{id}/$everything']), ['get']);
  for (const path of claimed.filter(([name]) => name === 'export').map(([, path]) => path)) {
    assert.deepEqual(Object.keys(document.paths[path]).sort(), ['get', 'post'], path);
    assert.ok(document.paths[path].get.parameters.some((parameter: { in: string; name: string }) => parameter.in === 'header' && parameter.name === 'prefer'), `${path}: the Prefer header`);
  }
  assert.deepEqual(Object.keys(document.paths['/fhir/$export-status/{id}']).sort(), ['delete', 'get']);
  for (const path of ['/fhir/Observation/$export', '/fhir/Group/1/$export', '/fhir/$import', '/fhir/Patient/$everything']) {
    const response = await client.request('GET', path, { headers: { prefer: 'respond-async' } });
    assert.equal(response.statusCode, 404, `${path} is not claimed and not served`);
  }
});
