import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { datasetOf } from '../dicom/support/dicom-harness.ts';
import { fixture, siteWithKey, useDicomwebOrigin } from './support.ts';

// dicomweb-client (the library OHIF uses) runs on XMLHttpRequest; xhr2 gives Node one.
const require = createRequire(import.meta.url);
(globalThis as { XMLHttpRequest?: unknown }).XMLHttpRequest = require('xhr2');
const { api } = require('dicomweb-client') as { api: { DICOMwebClient: new (options: Record<string, unknown>) => Record<string, (options?: Record<string, unknown>) => Promise<any>> } };

const origin = useDicomwebOrigin();
const ct = { study: '1.3.6.1.4.1.5962.1.2.1.20040119072730.12322', instance: '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322' };

test('dicomweb-client stores over STOW-RS, searches over QIDO-RS and retrieves over WADO-RS', async () => {
  const { key } = await siteWithKey(origin);
  const client = new api.DICOMwebClient({ url: origin.url, headers: { 'X-API-Key': key } });
  const file = fixture('CT_small.dcm');
  await client.storeInstances!({ datasets: [file.buffer.slice(file.byteOffset, file.byteOffset + file.length)] });

  const studies = (await client.searchForStudies!({ queryParams: { PatientName: 'Compressed*' } })) as Record<string, { Value: unknown[] }>[];
  assert.equal(studies.length, 1);
  assert.equal(studies[0]!['0020000D']!.Value[0], ct.study);
  const series = (await client.searchForSeries!({ studyInstanceUID: ct.study })) as Record<string, { Value: unknown[] }>[];
  const seriesInstanceUID = String(series[0]!['0020000E']!.Value[0]);
  const instances = (await client.searchForInstances!({ studyInstanceUID: ct.study, seriesInstanceUID })) as Record<string, { Value: unknown[] }>[];
  assert.equal(instances[0]!['00080018']!.Value[0], ct.instance);

  const metadata = (await client.retrieveStudyMetadata!({ studyInstanceUID: ct.study })) as Record<string, { Value: unknown[] }>[];
  assert.equal(metadata[0]!['00080018']!.Value[0], ct.instance);
  const instance = (await client.retrieveInstance!({ studyInstanceUID: ct.study, seriesInstanceUID, sopInstanceUID: ct.instance })) as ArrayBuffer;
  assert.ok(datasetOf(Buffer.from(instance)).equals(datasetOf(file)), 'the retrieved dataset is the one stored');
  const study = (await client.retrieveStudy!({ studyInstanceUID: ct.study })) as ArrayBuffer[];
  assert.equal(study.length, 1);
  const frames = (await client.retrieveInstanceFrames!({ studyInstanceUID: ct.study, seriesInstanceUID, sopInstanceUID: ct.instance, frameNumbers: [1] })) as ArrayBuffer[];
  assert.equal(frames[0]!.byteLength, 128 * 128 * 2);
});
