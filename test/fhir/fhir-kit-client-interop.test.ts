import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from 'fhir-kit-client';
import { createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { patientBody, useFhirServiceProcess } from './fhir-test-origin.ts';

// Issue 22, "done means": an independent client (fhir-kit-client) posts a transaction Bundle and
// runs a Bulk Data export of what it wrote, end to end against `clinical-gateway serve` (its own
// export worker claims the job; nothing of the test runs it).
const running = useFhirServiceProcess();

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const responseOf = (result: unknown) => (result as { __response: Response }).__response;

test('fhir-kit-client posts a transaction, then exports the patient compartment it wrote and downloads it', async () => {
  const site = await createTestSite(running.db.database);
  const key = await createTestApiKey(running.db.database, site);
  const service = await running.start({ CG_DATA_DIR: mkdtempSync(join(tmpdir(), 'cg-kit-interop-')), CG_WORKERS: '1' });
  const client = new Client({ baseUrl: `http://127.0.0.1:${service.ports.fhir}/fhir`, customHeaders: { 'X-API-Key': key } });

  const patientUrl = `urn:uuid:${randomUUID()}`;
  const codes = ['718-7', '2951-2', '2823-3'];
  const answer = (await client.transaction({
    body: {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        { request: { method: 'GET', url: 'Observation?code=http://loinc.org|718-7' } },
        ...codes.map((code) => ({
          resource: { resourceType: 'Observation', status: 'final', code: { coding: [{ system: 'http://loinc.org', code }] }, subject: { reference: patientUrl } },
          request: { method: 'POST', url: 'Observation' },
        })),
        { fullUrl: patientUrl, resource: patientBody('KIT-INTEROP-1'), request: { method: 'POST', url: 'Patient', ifNoneExist: 'identifier=urn:mrn|KIT-INTEROP-1' } },
      ],
    } as never,
  })) as Any;
  assert.equal(answer.type, 'transaction-response');
  const patientId = answer.entry[4].resource.id as string;
  assert.deepEqual(answer.entry.slice(1).map((entry: Any) => entry.response.status), ['201 Created', '201 Created', '201 Created', '201 Created']);
  assert.equal(answer.entry[0].resource.total, 1, 'the read of the transaction saw its write');

  const kickOff = await client.request('Patient/$export?_type=Patient,Observation', { options: { headers: { Prefer: 'respond-async', Accept: 'application/fhir+json' } } });
  assert.equal(responseOf(kickOff).status, 202);
  const statusUrl = responseOf(kickOff).headers.get('content-location')!;
  let manifest: Any | undefined;
  for (let attempt = 0; attempt < 600 && !manifest; attempt++) {
    const polled = (await client.request(statusUrl)) as Any;
    if (responseOf(polled).status === 200) manifest = polled;
    else {
      assert.equal(responseOf(polled).status, 202);
      assert.ok(responseOf(polled).headers.get('x-progress'));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  assert.ok(manifest, 'the service\'s worker completed the export');
  const exported: Any[] = [];
  for (const file of manifest.output as Any[]) {
    const response = await fetch(file.url, { headers: { 'X-API-Key': key, Accept: 'application/fhir+ndjson' } });
    assert.equal(response.status, 200);
    exported.push(...(await response.text()).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Any));
  }
  assert.deepEqual(exported.filter((resource) => resource.resourceType === 'Patient').map((resource) => resource.id), [patientId]);
  const observations = exported.filter((resource) => resource.resourceType === 'Observation');
  assert.deepEqual(observations.map((resource) => resource.code.coding[0].code).sort(), [...codes].sort());
  assert.ok(observations.every((resource) => resource.subject.reference === `Patient/${patientId}`), 'the urn:uuid references were rewritten before they were exported');

  const deleted = await client.request(statusUrl, { method: 'DELETE' });
  assert.equal(responseOf(deleted).status, 202);
  await assert.rejects(client.request(statusUrl), (error: Any) => error.response?.status === 404);
});
