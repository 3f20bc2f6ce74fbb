// Issue 22 point 4: type- and system-level history with _since, _at, _count and paging, confined to the key's site.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fhirClient, patientBody, useFhirOrigin, type FhirClient } from './fhir-test-origin.ts';

const fhirOrigin = useFhirOrigin();

interface HistoryBundle {
  type: string;
  total?: number;
  link: { relation: string; url: string }[];
  entry: { fullUrl: string; resource: { resourceType: string; id: string; meta: { versionId: string } }; request: { method: string } }[];
}

async function history(client: FhirClient, url: string): Promise<HistoryBundle> {
  const response = await client.request('GET', url);
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return response.json();
}

const versions = (bundle: HistoryBundle) => bundle.entry.map((entry) => `${entry.resource.resourceType}/${entry.resource.id}/${entry.resource.meta.versionId}`);
const pause = () => new Promise((resolve) => setTimeout(resolve, 15));

async function all(client: FhirClient, url: string): Promise<string[]> {
  const found: string[] = [];
  for (let next: string | undefined = url; next; ) {
    const page = await history(client, next);
    found.push(...versions(page));
    const link = page.link.find((candidate) => candidate.relation === 'next');
    next = link ? new URL(link.url).pathname + new URL(link.url).search : undefined;
  }
  return found;
}

test('GET /fhir/{type}/_history and /fhir/_history: every version of the site, newest first, with _since, _at and paging', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const other = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  await other.request('POST', '/fhir/Patient', { body: patientBody('HIST-OTHER') });

  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('HIST-1') })).json();
  await pause();
  const observation = (
    await client.request('POST', '/fhir/Observation', {
      body: { resourceType: 'Observation', status: 'final', code: { text: 'Hb' }, subject: { reference: `Patient/${patient.id}` } },
    })
  ).json();
  await pause();
  const between = new Date().toISOString();
  await pause();
  const updated = (await client.request('PUT', `/fhir/Patient/${patient.id}`, { body: { ...patient, gender: 'female' } })).json();
  assert.equal(updated.meta.versionId, '2');

  const types = await history(client, '/fhir/Patient/_history');
  assert.equal(types.type, 'history');
  assert.equal(types.total, 2);
  assert.deepEqual(versions(types), [`Patient/${patient.id}/2`, `Patient/${patient.id}/1`]);
  assert.deepEqual(types.entry.map((entry) => entry.request.method), ['PUT', 'POST']);

  const system = await history(client, '/fhir/_history');
  assert.deepEqual(versions(system), [`Patient/${patient.id}/2`, `Observation/${observation.id}/1`, `Patient/${patient.id}/1`]);
  // Paging one at a time gives the same versions, each once, even with a write between pages.
  const first = await history(client, '/fhir/_history?_count=1');
  assert.deepEqual(versions(first), [`Patient/${patient.id}/2`]);
  await client.request('POST', '/fhir/Patient', { body: patientBody('HIST-2') });
  const nextUrl = first.link.find((link) => link.relation === 'next')!.url;
  const rest = await all(client, new URL(nextUrl).pathname + new URL(nextUrl).search);
  assert.deepEqual(rest, [`Observation/${observation.id}/1`, `Patient/${patient.id}/1`]);

  const since = await history(client, `/fhir/_history?_since=${encodeURIComponent(between)}`);
  assert.ok(versions(since).includes(`Patient/${patient.id}/2`));
  assert.ok(!versions(since).includes(`Observation/${observation.id}/1`));
  const at = await history(client, `/fhir/Patient/_history?_at=${encodeURIComponent(between)}`);
  assert.deepEqual(versions(at), [`Patient/${patient.id}/1`], 'the version current at that moment');
  assert.deepEqual(versions(await history(client, `/fhir/Observation/_history?_at=${encodeURIComponent(between)}`)), [`Observation/${observation.id}/1`]);

  // The other site sees only its own.
  const theirs = await history(other, '/fhir/_history');
  assert.equal(theirs.entry.length, 1);
  assert.ok(!versions(theirs).some((version) => version.includes(patient.id)));
  // A token of one site or one path is refused elsewhere.
  assert.equal((await other.request('GET', new URL(nextUrl).pathname + new URL(nextUrl).search)).statusCode, 400);
  assert.equal((await client.request('GET', `/fhir/Patient/_history${new URL(nextUrl).search}`)).statusCode, 400);
});

test('history-type and history-system refuse bad input with an OperationOutcome', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  for (const query of ['_since=yesterday', '_since=2026-01-01T10:00:00', '_at=13', '_count=x', '_count=1&_count=2', '_colour=1', '_page=forged']) {
    for (const path of ['/fhir/_history', '/fhir/Observation/_history']) {
      const response = await client.request('GET', `${path}?${query}`);
      assert.equal(response.statusCode, 400, `${path}?${query}`);
      assert.equal(response.json().resourceType, 'OperationOutcome');
    }
  }
  assert.equal((await client.request('GET', '/fhir/_history?_colour=1', { headers: { prefer: 'handling=lenient' } })).statusCode, 200);
  assert.equal((await client.request('DELETE', '/fhir/_history')).statusCode, 405);
  assert.equal((await client.request('GET', '/fhir/DiagnosticReport/_history')).statusCode, 404);
  const clamped = await history(client, '/fhir/_history?_count=100000');
  assert.match(clamped.link[0]!.url, /_count=1000/);
});
