import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { encodePart10Header } from '../../src/storage/dicom/dataset/part10-header.ts';
import { datasetOf, dicomFixture, dumpElements, metaTransferSyntax, storescu } from '../dicom/support/dicom-harness.ts';
import { XMLParser } from 'fast-xml-parser';
import { fixture, multipartBody, parseMultipart, siteWithKey, stow, useDicomwebOrigin } from './support.ts';

const origin = useDicomwebOrigin();
const execFileAsync = promisify(execFile);

const ct = { study: '1.3.6.1.4.1.5962.1.2.1.20040119072730.12322', instance: '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322' };
const mr = { study: '1.3.6.1.4.1.5962.1.2.4.20040826185059.5457', instance: '1.3.6.1.4.1.5962.1.1.4.1.1.20040826185059.5457' };

async function get(key: string, path: string, accept?: string): Promise<{ status: number; type: string; body: Buffer }> {
  const response = await fetch(`${origin.url}${path}`, { headers: { 'x-api-key': key, ...(accept ? { accept } : {}) } });
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: Buffer.from(await response.arrayBuffer()) };
}

async function seriesOf(siteId: string, sopInstanceUid: string): Promise<{ series: string; storagePath: string }> {
  const { rows } = await origin.db.database.query('SELECT series_instance_uid, storage_path FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2', [siteId, sopInstanceUid]);
  return { series: rows[0].series_instance_uid, storagePath: rows[0].storage_path };
}

test('STOW-RS stores Part-10 files through the C-STORE path; WADO-RS sends the stored files byte for byte, the datasets as sent', async () => {
  const { site, key } = await siteWithKey(origin);
  const response = await stow(origin, key, [fixture('CT_small.dcm'), fixture('MR_small.dcm')]);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/dicom\+json/);
  const result = (await response.json()) as Record<string, { vr: string; Value?: Record<string, { Value: unknown[] }>[] }>;
  assert.equal(result['00081199']!.Value!.length, 2);
  assert.equal(result['00081198']!.Value, undefined);
  assert.deepEqual(result['00081199']!.Value!.map((item) => item['00081155']!.Value[0]).sort(), [ct.instance, mr.instance].sort());

  // Idempotent: the same files again are success, nothing duplicated.
  assert.equal((await stow(origin, key, [fixture('CT_small.dcm')])).status, 200);
  const { rows } = await origin.db.database.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0].n, 2);

  const { series, storagePath } = await seriesOf(site.siteId, ct.instance);
  const stored = await readFile(resolveStoredInstance(origin.services.config.dicomStorageDir, storagePath));
  for (const path of [`/studies/${ct.study}`, `/studies/${ct.study}/series/${series}`, `/studies/${ct.study}/series/${series}/instances/${ct.instance}`]) {
    const answer = await get(key, path, 'multipart/related; type="application/dicom"; transfer-syntax=*');
    assert.equal(answer.status, 200, path);
    assert.match(answer.type, /^multipart\/related; type="application\/dicom"; boundary=/);
    const parts = parseMultipart(answer.body, answer.type);
    assert.equal(parts.length, 1);
    assert.equal(parts[0]!.headers['content-type'], 'application/dicom; transfer-syntax=1.2.840.10008.1.2.1');
    assert.ok(parts[0]!.body.equals(stored), 'the part is the stored file');
    assert.ok(datasetOf(parts[0]!.body).equals(datasetOf(fixture('CT_small.dcm'))), 'the dataset is the one sent');
  }
  // No Accept at all: the same.
  assert.equal((await get(key, `/studies/${ct.study}`)).status, 200);
});

test('WADO-RS asked for Explicit VR Little Endian converts instances stored in implicit VR, big endian or deflated; a compressed one is a 406', async () => {
  const { key } = await siteWithKey(origin);
  const files = ['MR_small_implicit.dcm', 'image_dfl.dcm', 'rtplan.dcm', 'JPGExtended.dcm'];
  assert.equal((await stow(origin, key, files.map(fixture))).status, 200);
  const explicit = 'multipart/related; type="application/dicom"; transfer-syntax=1.2.840.10008.1.2.1';
  const work = await mkdtemp(join(tmpdir(), 'cg-wado-converted-'));
  try {
    for (const [file, study] of [
      ['MR_small_implicit.dcm', mr.study],
      ['image_dfl.dcm', '1.3.6.1.4.1.5962.1.2.0.977067310.6001.0'],
      ['rtplan.dcm', '1.22.333.4.555555.6.7777777777777777777777777777'],
    ] as const) {
      const answer = await get(key, `/studies/${study}`, explicit);
      assert.equal(answer.status, 200, `${file}: ${answer.body.toString().slice(0, 200)}`);
      const [part] = parseMultipart(answer.body, answer.type);
      assert.equal(part!.headers['content-type'], 'application/dicom; transfer-syntax=1.2.840.10008.1.2.1');
      const received = join(work, file);
      await writeFile(received, part!.body);
      assert.equal(await metaTransferSyntax(received), '1.2.840.10008.1.2.1', file);
      assert.deepEqual(await dumpElements(received), await dumpElements(dicomFixture(file)), `${file}: the same content`);
    }
    // Implicit VR asked for: the explicit VR CT converts the other way.
    const { body: ctBody, contentType } = multipartBody([{ contentType: 'application/dicom', body: fixture('CT_small.dcm') }]);
    await fetch(`${origin.url}/studies`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': contentType }, body: ctBody });
    const implicit = await get(key, `/studies/${ct.study}`, 'multipart/related; type="application/dicom"; transfer-syntax=1.2.840.10008.1.2');
    assert.equal(implicit.status, 200);
    const [ctPart] = parseMultipart(implicit.body, implicit.type);
    await writeFile(join(work, 'ct.dcm'), ctPart!.body);
    assert.deepEqual(await dumpElements(join(work, 'ct.dcm')), await dumpElements(dicomFixture('CT_small.dcm')));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  // JPEG is not decoded: another syntax is a 406; as stored (or *) it is sent.
  assert.equal((await get(key, '/studies/1.3.6.1.4.1.5962.1.2.8.20040826185059.5457', explicit)).status, 406);
  assert.equal((await get(key, '/studies/1.3.6.1.4.1.5962.1.2.8.20040826185059.5457', 'multipart/related; type="application/dicom"; transfer-syntax=*')).status, 200);
});

test('an instance stored by C-STORE and sent again over STOW-RS is the same instance; different bytes under its UID are refused (409, 0x0111)', async () => {
  const { site, key } = await siteWithKey(origin);
  const sent = await storescu(origin.listener.port, site.aeTitle, [dicomFixture('MR_small.dcm')]);
  assert.equal(sent.code, 0, sent.stderr);
  // dcmtk re-encodes what it sends, so the same bytes are those the listener stored.
  const { storagePath } = await seriesOf(site.siteId, mr.instance);
  const stored = await readFile(resolveStoredInstance(origin.services.config.dicomStorageDir, storagePath));
  assert.equal((await stow(origin, key, [stored])).status, 200);
  const { rows } = await origin.db.database.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0].n, 1);
  const changed = Buffer.from(stored);
  changed[changed.length - 1] ^= 0xff; // a pixel value differs
  const refused = await stow(origin, key, [changed]);
  assert.equal(refused.status, 409);
  const body = (await refused.json()) as Record<string, { Value?: Record<string, { Value: unknown[] }>[] }>;
  assert.equal(body['00081198']!.Value![0]!['00081197']!.Value[0], 0x0111);
  assert.equal(body['00081198']!.Value![0]!['00081155']!.Value[0], mr.instance);
});

test('STOW-RS answers the Native DICOM Model XML to a user agent that accepts only application/dicom+xml', async () => {
  const { key } = await siteWithKey(origin);
  const { body, contentType } = multipartBody([{ contentType: 'application/dicom', body: fixture('CT_small.dcm') }]);
  const post = (accept: string) => fetch(`${origin.url}/studies`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': contentType, accept }, body });
  const stored = await post('application/dicom+xml');
  assert.equal(stored.status, 200);
  assert.match(stored.headers.get('content-type') ?? '', /^application\/dicom\+xml/);
  const xml = new XMLParser({ ignoreAttributes: false }).parse(await stored.text()) as { NativeDicomModel: { DicomAttribute: Record<string, unknown>[] } };
  const byTag = new Map(xml.NativeDicomModel.DicomAttribute.map((attribute) => [attribute['@_tag'], attribute]));
  assert.equal((byTag.get('00081190') as { Value: { '#text': string } }).Value['#text'], `${origin.url}/studies/${ct.study}`);
  const referenced = byTag.get('00081199') as { '@_vr': string; '@_keyword': string; Item: { DicomAttribute: Record<string, unknown>[] } };
  assert.equal(referenced['@_vr'], 'SQ');
  assert.equal(referenced['@_keyword'], 'ReferencedSOPSequence');
  const sop = referenced.Item.DicomAttribute.find((attribute) => attribute['@_tag'] === '00081155') as { Value: { '#text': string } };
  assert.equal(sop.Value['#text'], ct.instance);
  // JSON stays the answer to any Accept that takes it, and to one that takes neither.
  for (const accept of ['application/dicom+json', 'application/dicom+json, application/dicom+xml', '*/*', 'text/html']) {
    assert.match((await post(accept)).headers.get('content-type') ?? '', /^application\/dicom\+json/, accept);
  }
});

test('metadata is DICOM JSON without Pixel Data; frames come uncompressed as octet-stream and compressed in their own media type', async () => {
  const { site, key } = await siteWithKey(origin);
  assert.equal((await stow(origin, key, [fixture('CT_small.dcm'), fixture('SC_rgb_rle_2frame.dcm')])).status, 200);
  const { series } = await seriesOf(site.siteId, ct.instance);
  for (const path of [`/studies/${ct.study}/metadata`, `/studies/${ct.study}/series/${series}/metadata`, `/studies/${ct.study}/series/${series}/instances/${ct.instance}/metadata`]) {
    const answer = await get(key, path, 'application/dicom+json');
    assert.equal(answer.status, 200, path);
    assert.match(answer.type, /^application\/dicom\+json/);
    const [dataset] = JSON.parse(answer.body.toString()) as Record<string, { vr: string; Value?: unknown[] }>[];
    assert.deepEqual(dataset!['00100010'], { vr: 'PN', Value: [{ Alphabetic: 'CompressedSamples^CT1' }] });
    assert.deepEqual(dataset!['00280010'], { vr: 'US', Value: [128] });
    // PS3.18 F.2.5: empty elements carry no Value (not [""] nor [null]).
    assert.deepEqual(dataset!['00080050'], { vr: 'SH' });
    assert.deepEqual(dataset!['00100030'], { vr: 'DA' });
    assert.equal(dataset!['7FE00010'], undefined);
    assert.equal(dataset!['00080018']!.Value![0], ct.instance);
  }
  const frame = await get(key, `/studies/${ct.study}/series/${series}/instances/${ct.instance}/frames/1`, 'multipart/related; type="application/octet-stream"');
  assert.equal(frame.status, 200);
  const [part] = parseMultipart(frame.body, frame.type);
  assert.equal(part!.headers['content-type'], 'application/octet-stream');
  assert.equal(part!.body.length, 128 * 128 * 2);
  assert.ok(fixture('CT_small.dcm').includes(part!.body), 'the frame is the stored pixel data');
  assert.equal((await get(key, `/studies/${ct.study}/series/${series}/instances/${ct.instance}/frames/2`)).status, 404);

  const rle = { study: '1.2.826.0.1.3680043.8.498.12406831542731051035295345080039845114', instance: '1.2.826.0.1.3680043.8.498.49043964482360854182530167603505525116' };
  const rleSeries = (await seriesOf(site.siteId, rle.instance)).series;
  const frames = await get(key, `/studies/${rle.study}/series/${rleSeries}/instances/${rle.instance}/frames/1,2`, 'multipart/related; type="image/dicom-rle"');
  assert.equal(frames.status, 200);
  const rleParts = parseMultipart(frames.body, frames.type);
  assert.equal(rleParts.length, 2);
  assert.equal(rleParts[0]!.headers['content-type'], 'image/dicom-rle; transfer-syntax=1.2.840.10008.1.2.5');
  // Asking for uncompressed frames of an RLE instance: not transcoded, 406.
  assert.equal((await get(key, `/studies/${rle.study}/series/${rleSeries}/instances/${rle.instance}/frames/1`, 'multipart/related; type="application/octet-stream"')).status, 406);
  // What dicomweb-client and Cornerstone ask by default: octet-stream in any syntax. The stored
  // frames, each part naming its syntax (as dcm4chee-arc and Orthanc answer).
  const anySyntax = await get(key, `/studies/${rle.study}/series/${rleSeries}/instances/${rle.instance}/frames/1,2`, 'multipart/related; type="application/octet-stream"; transfer-syntax=*');
  assert.equal(anySyntax.status, 200);
  assert.match(anySyntax.type, /^multipart\/related; type="application\/octet-stream"; boundary=/);
  const anyParts = parseMultipart(anySyntax.body, anySyntax.type);
  assert.deepEqual(anyParts.map((part) => part.headers['content-type']), Array(2).fill('application/octet-stream; transfer-syntax=1.2.840.10008.1.2.5'));
  assert.ok(anyParts.every((part, index) => part.body.equals(rleParts[index]!.body)), 'the same frames as image/dicom-rle');
  const storedSyntax = await get(key, `/studies/${rle.study}/series/${rleSeries}/instances/${rle.instance}/frames/1`, 'multipart/related; type="application/octet-stream"; transfer-syntax=1.2.840.10008.1.2.5');
  assert.equal(storedSyntax.status, 200);
  // Another syntax than the stored one, in either form: not transcoded.
  assert.equal((await get(key, `/studies/${rle.study}/series/${rleSeries}/instances/${rle.instance}/frames/1`, 'multipart/related; type="application/octet-stream"; transfer-syntax=1.2.840.10008.1.2.4.50')).status, 406);
  assert.equal((await get(key, `/studies/${rle.study}/series/${rleSeries}/instances/${rle.instance}/frames/1`, 'multipart/related; type="image/dicom-rle"; transfer-syntax=1.2.840.10008.1.2.4.50')).status, 406);
});

test('frames of a big endian instance come little endian, and of a deflated one inflated, as application/octet-stream', async () => {
  const { site, key } = await siteWithKey(origin);
  assert.equal((await stow(origin, key, [fixture('MR_small_bigendian.dcm'), fixture('image_dfl.dcm')])).status, 200);
  const frameOf = async (study: string, instance: string) => {
    const { series } = await seriesOf(site.siteId, instance);
    const answer = await get(key, `/studies/${study}/series/${series}/instances/${instance}/frames/1`, 'multipart/related; type="application/octet-stream"; transfer-syntax=1.2.840.10008.1.2.1');
    assert.equal(answer.status, 200, answer.body.toString());
    const [part] = parseMultipart(answer.body, answer.type);
    assert.equal(part!.headers['content-type'], 'application/octet-stream');
    return part!.body;
  };
  // The same pixels as the little endian copy of the same image.
  const mrFrame = await frameOf(mr.study, mr.instance);
  assert.equal(mrFrame.length, 64 * 64 * 2);
  assert.ok(fixture('MR_small.dcm').includes(mrFrame), 'the little endian pixel data');
  const deflated = await frameOf('1.3.6.1.4.1.5962.1.2.0.977067310.6001.0', '1.3.6.1.4.1.5962.1.1.0.0.0.977067309.6001.0');
  assert.equal(deflated.length, 512 * 512);
  assert.ok(deflated.some((byte) => byte !== 0), 'inflated pixels, not zeros');
});

test('frames of a High-Throughput JPEG 2000 instance come as image/jphc', async () => {
  const { site, key } = await siteWithKey(origin);
  // The JPEG 2000 sample's dataset under a meta header naming HTJ2K: frames are sent, not decoded.
  const sample = fixture('JPEG2000.dcm');
  const instance = '1.3.6.1.4.1.5962.1.1.8.1.3.20040826185059.5457';
  const htj2k = Buffer.concat([encodePart10Header({ sopClassUid: '1.2.840.10008.5.1.4.1.1.7', sopInstanceUid: instance, transferSyntaxUid: '1.2.840.10008.1.2.4.201', sourceAeTitle: '' }), datasetOf(sample)]);
  assert.equal((await stow(origin, key, [htj2k])).status, 200);
  const { series } = await seriesOf(site.siteId, instance);
  for (const accept of ['multipart/related; type="image/jphc"', undefined]) {
    const answer = await get(key, `/studies/1.3.6.1.4.1.5962.1.2.8.20040826185059.5457/series/${series}/instances/${instance}/frames/1`, accept);
    assert.equal(answer.status, 200, answer.body.toString());
    const [part] = parseMultipart(answer.body, answer.type);
    assert.equal(part!.headers['content-type'], 'image/jphc; transfer-syntax=1.2.840.10008.1.2.4.201');
  }
});

test('QIDO-RS finds studies, series and instances with matching, limit and offset; searches and retrievals are in the data access log', async () => {
  const { site, key } = await siteWithKey(origin);
  assert.equal((await stow(origin, key, [fixture('CT_small.dcm'), fixture('MR_small.dcm')])).status, 200);
  const studies = JSON.parse((await get(key, '/studies?PatientName=compressed*&includefield=all', 'application/dicom+json')).body.toString()) as Record<string, { Value?: unknown[] }>[];
  assert.equal(studies.length, 2);
  const ctOnly = JSON.parse((await get(key, '/studies?ModalitiesInStudy=CT')).body.toString()) as Record<string, { Value?: unknown[] }>[];
  assert.deepEqual(ctOnly.map((study) => study['0020000D']!.Value![0]), [ct.study]);
  assert.match(String(ctOnly[0]!['00081190']!.Value![0]), new RegExp(`/studies/${ct.study.replace(/\./g, '\\.')}$`));
  const byTag = JSON.parse((await get(key, `/studies?0020000D=${mr.study}`)).body.toString()) as unknown[];
  assert.equal(byTag.length, 1);
  // Lists separated by commas (PS3.18 8.3.4.1) as well as by backslashes.
  for (const query of [`StudyInstanceUID=${mr.study},${ct.study}`, `StudyInstanceUID=${mr.study}%5C${ct.study}`, 'ModalitiesInStudy=MR,CT', 'ModalitiesInStudy=MR%5CCT']) {
    const listed = await get(key, `/studies?${query}`);
    assert.equal(listed.status, 200, query);
    assert.equal((JSON.parse(listed.body.toString()) as unknown[]).length, 2, query);
  }
  const fuzzy = JSON.parse((await get(key, '/studies?PatientName=compressedsamples&fuzzymatching=true')).body.toString()) as unknown[];
  assert.equal(fuzzy.length, 2);
  // Universal matching on keys the index does not hold (required study-level keys of PS3.18): no
  // restriction, as in C-FIND; a value to match on them is still refused.
  const universal = await get(key, '/studies?PatientName=compressed*&ReferringPhysicianName=&StudyID=*&00200010=');
  assert.equal(universal.status, 200, universal.body.toString());
  assert.equal((JSON.parse(universal.body.toString()) as unknown[]).length, 2);
  // Study ID and Referring Physician's Name are indexed: matched, and returned as stored.
  const byStudyId = JSON.parse((await get(key, '/studies?StudyID=1CT1')).body.toString()) as Record<string, { Value?: unknown[] }>[];
  assert.deepEqual(byStudyId.map((study) => [study['0020000D']!.Value![0], study['00200010']!.Value![0]]), [[ct.study, '1CT1']]);
  assert.deepEqual(JSON.parse((await get(key, '/studies?ReferringPhysicianName=SMITH')).body.toString()), []);
  // Modality on studies asks for the studies with a series of it; a key of a lower level is a
  // 400, never ignored (which would answer every study as a match).
  const byModality = JSON.parse((await get(key, '/studies?Modality=CT')).body.toString()) as Record<string, { Value?: unknown[] }>[];
  assert.deepEqual(byModality.map((study) => study['0020000D']!.Value![0]), [ct.study]);
  for (const query of ['/studies?SeriesDescription=x', '/studies?SOPClassUID=1.2.3', `/studies/${ct.study}/series?InstanceNumber=1`, '/series?00200013=1']) {
    const refused = await get(key, query);
    assert.equal(refused.status, 400, query);
    assert.match(refused.body.toString(), /is not a matching key of (studies|series)/, query);
  }
  const page = await fetch(`${origin.url}/studies?limit=1&offset=0`, { headers: { 'x-api-key': key } });
  assert.equal(((await page.json()) as unknown[]).length, 1);
  assert.match(page.headers.get('warning') ?? '', /additional results/);
  const series = JSON.parse((await get(key, `/studies/${ct.study}/series`)).body.toString()) as Record<string, { Value?: unknown[] }>[];
  assert.equal(series.length, 1);
  assert.equal(series[0]!['00080060']!.Value![0], 'CT');
  const allSeries = JSON.parse((await get(key, '/series?Modality=MR')).body.toString()) as unknown[];
  assert.equal(allSeries.length, 1);
  const seriesUid = String(series[0]!['0020000E']!.Value![0]);
  const instances = JSON.parse((await get(key, `/studies/${ct.study}/series/${seriesUid}/instances`)).body.toString()) as Record<string, { Value?: unknown[] }>[];
  assert.equal(instances[0]!['00080018']!.Value![0], ct.instance);
  assert.equal((JSON.parse((await get(key, `/instances?SOPInstanceUID=${mr.instance}`)).body.toString()) as unknown[]).length, 1);
  assert.equal((JSON.parse((await get(key, `/studies/${ct.study}/instances`)).body.toString()) as unknown[]).length, 1);
  assert.deepEqual(JSON.parse((await get(key, '/studies?PatientID=NOBODY')).body.toString()), []);
  assert.equal((await get(key, `/studies/${ct.study}`)).status, 200);

  // The log is written off the request path: wait for the records to land.
  let logged: Record<string, any>[] = [];
  for (let attempt = 0; attempt < 100 && !logged.some((row) => row.interaction === 'read'); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    logged = (await origin.db.database.query("SELECT interaction, resource_type, resource_ids FROM data_access_audit WHERE site_id = $1 AND surface = 'dicomweb'", [site.siteId])).rows;
  }
  assert.ok(logged.some((row) => row.interaction === 'search' && row.resource_type === 'Study' && row.resource_ids.includes(ct.study)));
  assert.ok(logged.some((row) => row.interaction === 'read' && row.resource_type === 'Study' && row.resource_ids.includes(ct.study)));
});

test("QIDO-RS matches and returns the Referring Physician's Name as stored", async () => {
  const { key } = await siteWithKey(origin);
  const referred = await mkdtemp(join(tmpdir(), 'cg-referring-'));
  try {
    const copy = join(referred, 'ct.dcm');
    await writeFile(copy, fixture('CT_small.dcm'));
    await execFileAsync('dcmodify', ['-nb', '-gst', '-gse', '-gin', '-i', '(0008,0090)=Welby^Marcus', copy]);
    assert.equal((await stow(origin, key, [await readFile(copy)])).status, 200);
  } finally {
    await rm(referred, { recursive: true, force: true });
  }
  const byReferring = JSON.parse((await get(key, '/studies?ReferringPhysicianName=welby*&includefield=00080090')).body.toString()) as Record<string, { Value?: unknown[] }>[];
  assert.equal(byReferring.length, 1);
  assert.deepEqual(byReferring[0]!['00080090']!.Value, [{ Alphabetic: 'Welby^Marcus' }]);
});

test("another site's studies are 404 to WADO-RS and invisible to QIDO-RS", async () => {
  const owner = await siteWithKey(origin);
  const other = await siteWithKey(origin);
  assert.equal((await stow(origin, owner.key, [fixture('CT_small.dcm')])).status, 200);
  const { series } = await seriesOf(owner.site.siteId, ct.instance);
  for (const path of [`/studies/${ct.study}`, `/studies/${ct.study}/metadata`, `/studies/${ct.study}/series/${series}/instances/${ct.instance}`, `/studies/${ct.study}/series/${series}/instances/${ct.instance}/frames/1`]) {
    assert.equal((await get(other.key, path)).status, 404, path);
  }
  assert.deepEqual(JSON.parse((await get(other.key, `/studies?StudyInstanceUID=${ct.study}`)).body.toString()), []);
  assert.equal((await get('', `/studies/${ct.study}`)).status, 401);
});

test('WADO-RS answers written past the framework keep its headers, and HEAD gets them without a body', async () => {
  const { key } = await siteWithKey(origin);
  assert.equal((await stow(origin, key, [fixture('CT_small.dcm')])).status, 200);
  const got = await fetch(`${origin.url}/studies/${ct.study}`, { headers: { 'x-api-key': key } });
  assert.equal(got.status, 200);
  assert.match(got.headers.get('x-request-id') ?? '', /.+/);
  assert.match(got.headers.get('content-type') ?? '', /^multipart\/related; type="application\/dicom"; boundary=/);
  assert.ok((await got.arrayBuffer()).byteLength > 0);
  const head = await fetch(`${origin.url}/studies/${ct.study}`, { method: 'HEAD', headers: { 'x-api-key': key } });
  assert.equal(head.status, 200);
  assert.match(head.headers.get('content-type') ?? '', /^multipart\/related; type="application\/dicom"; boundary=/);
  assert.equal((await head.arrayBuffer()).byteLength, 0);
  const missing = await fetch(`${origin.url}/studies/1.2.3.4.5`, { method: 'HEAD', headers: { 'x-api-key': key } });
  assert.equal(missing.status, 404);
});
