import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from 'fhir-kit-client';
import { fhirClient, patientBody } from './fhir-test-origin.ts';
import { useExportOrigin } from './bulk-export-support.ts';

// An independent client runs a Bulk Data export end to end against a listening origin. No Bulk
// Data client library is published on the npm registry that works without a SMART authorization
// server, so this uses fhir-kit-client's raw request API (kick-off, poll, download, delete), which
// exposes the response's status and headers as the IG's flow needs them.
const origin = useExportOrigin({}, { listen: true });

type Any = Record<string, any>;
const responseOf = (result: unknown) => (result as { __response: Response }).__response;

test('fhir-kit-client: $export kick-off, status polling, manifest, NDJSON download and DELETE', async () => {
  const { key } = await fhirClient(origin.app, origin.db.database);
  const client = new Client({ baseUrl: origin.baseUrl, customHeaders: { 'X-API-Key': key } });
  const patient = (await client.create({ resourceType: 'Patient', body: patientBody('KIT-EXPORT-1') as never })) as Any;
  await client.create({ resourceType: 'Observation', body: { resourceType: 'Observation', status: 'final', code: { text: 'Hb' }, subject: { reference: `Patient/${patient.id}` } } as never });
  await client.create({ resourceType: 'Observation', body: { resourceType: 'Observation', status: 'final', code: { text: 'K' }, subject: { reference: `Patient/${patient.id}` } } as never });

  const kickOff = await client.request('$export?_type=Patient,Observation', { options: { headers: { Prefer: 'respond-async', Accept: 'application/fhir+json' } } });
  assert.equal(responseOf(kickOff).status, 202);
  const statusUrl = responseOf(kickOff).headers.get('content-location')!;

  const pending = await client.request(statusUrl);
  assert.equal(responseOf(pending).status, 202);
  assert.ok(responseOf(pending).headers.get('x-progress'));
  await origin.runPendingExports();
  const manifest = (await client.request(statusUrl)) as Any;
  assert.equal(responseOf(manifest).status, 200);
  assert.equal(manifest.requiresAccessToken, true);
  const counts = Object.fromEntries(manifest.output.map((file: Any) => [file.type, file.count]));
  assert.deepEqual(counts, { Patient: 1, Observation: 2 });

  for (const file of manifest.output as Any[]) {
    let text: string;
    try {
      // A one-line file is itself JSON, which the client parses.
      text = JSON.stringify(await client.request(file.url, { options: { headers: { Accept: 'application/fhir+ndjson' } } }));
    } catch (error) {
      // Several lines are not one JSON document: the client reports the text with the 200 status.
      const response = (error as { response?: { status: number; data: string } }).response;
      assert.equal(response?.status, 200);
      text = response.data;
    }
    const lines = text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Any);
    assert.equal(lines.length, file.count);
    assert.ok(lines.every((resource) => resource.resourceType === file.type));
  }

  const deleted = await client.request(statusUrl, { method: 'DELETE' });
  assert.equal(responseOf(deleted).status, 202);
  await assert.rejects(client.request(statusUrl), (error: Any) => error.response?.status === 404);
});
