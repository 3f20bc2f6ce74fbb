import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixture, multipartBody, siteWithKey, stow, useDicomwebOrigin } from './support.ts';

// A STOW-RS body over 200 KB is refused; each fixture below is far smaller.
const origin = useDicomwebOrigin({ CG_DICOMWEB_MAX_STOW_SIZE: '200000' });
const ct = { study: '1.3.6.1.4.1.5962.1.2.1.20040119072730.12322', instance: '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322' };

function post(key: string, body: Buffer | string, contentType: string, path = '/studies'): Promise<Response> {
  return fetch(`${origin.url}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': contentType }, body });
}

test('an Accept the resource cannot be answered in is a 406 with a clear message', async () => {
  const { key } = await siteWithKey(origin);
  assert.equal((await stow(origin, key, [fixture('CT_small.dcm')])).status, 200);
  const cases = [
    [`/studies/${ct.study}`, 'application/json'],
    [`/studies/${ct.study}`, 'multipart/related; type="image/jpeg"'],
    [`/studies/${ct.study}`, 'multipart/related; type="application/dicom"; transfer-syntax=1.2.840.10008.1.2.4.50'],
    [`/studies/${ct.study}/metadata`, 'multipart/related; type="application/dicom"'],
    ['/studies', 'text/html'],
  ];
  for (const [path, accept] of cases) {
    const response = await fetch(`${origin.url}${path}`, { headers: { 'x-api-key': key, accept: accept! } });
    assert.equal(response.status, 406, `${path} ${accept}`);
    const body = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'not-acceptable');
  }
  const rendered = await fetch(`${origin.url}/studies/${ct.study}/rendered`, { headers: { 'x-api-key': key } });
  assert.equal(rendered.status, 406);
  assert.match(((await rendered.json()) as { error: { message: string } }).error.message, /study and series renderings are not offered/);
});

test('malformed UIDs, frame lists and query keys are 400s', async () => {
  const { key } = await siteWithKey(origin);
  for (const path of ['/studies/1.2.abc', '/studies/01.2/metadata', `/studies/${'1.'.repeat(40)}1`, '/studies/1.2/series/x/instances', '/studies/1.2/series/1.3/instances/1.4/frames/0', '/studies?limit=-1', '/studies?Unknown=1', '/studies?fuzzymatching=maybe', '/studies?StudyDate=notadate']) {
    const response = await fetch(`${origin.url}${path}`, { headers: { 'x-api-key': key } });
    assert.equal(response.status, 400, path);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'invalid', path);
  }
  assert.equal((await post(key, fixture('CT_small.dcm'), 'multipart/related; type="application/dicom"; boundary=b', '/studies/1.2.x')).status, 400);
});

test('STOW-RS refuses bodies it cannot read: no boundary, wrong type, unterminated, over the limit; nothing is stored', async () => {
  const { site, key } = await siteWithKey(origin);
  const noBoundary = await post(key, 'x', 'multipart/related; type="application/dicom"');
  assert.equal(noBoundary.status, 400);
  assert.match(((await noBoundary.json()) as { error: { message: string } }).error.message, /boundary/);
  assert.equal((await post(key, fixture('CT_small.dcm'), 'application/dicom')).status, 415);
  assert.equal((await post(key, '{}', 'multipart/related; type="application/dicom+json"; boundary=b')).status, 415);
  const { body, contentType } = multipartBody([{ contentType: 'application/dicom', body: fixture('CT_small.dcm') }]);
  const unterminated = await post(key, body.subarray(0, body.length - 30), contentType);
  assert.equal(unterminated.status, 400);
  const big = multipartBody([{ contentType: 'application/dicom', body: Buffer.concat([fixture('CT_small.dcm'), Buffer.alloc(300_000)]) }]);
  const tooLarge = await post(key, big.body, big.contentType);
  assert.equal(tooLarge.status, 413);
  const { rows } = await origin.db.database.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0].n, 0);
});

test('a part that is not DICOM fails alone: 202 with the good part stored and the bad one in the Failed SOP Sequence; only bad parts: 409', async () => {
  const { key } = await siteWithKey(origin);
  const mixed = multipartBody([
    { contentType: 'application/dicom', body: fixture('CT_small.dcm') },
    { contentType: 'application/dicom', body: Buffer.from('this is not a DICOM file at all, not even close to one. '.repeat(4)) },
    { contentType: 'text/plain', body: Buffer.from('hello') },
  ]);
  const partial = await post(key, mixed.body, mixed.contentType);
  assert.equal(partial.status, 202);
  const body = (await partial.json()) as Record<string, { Value?: Record<string, { Value?: unknown[] }>[] }>;
  assert.equal(body['00081199']!.Value!.length, 1);
  assert.equal(body['00081198']!.Value!.length, 2);
  assert.deepEqual(body['00081198']!.Value!.map((item) => item['00081197']!.Value![0]), [0xc000, 0xc000]);

  const truncated = fixture('MR_small.dcm').subarray(0, 5000);
  const onlyBad = multipartBody([{ contentType: 'application/dicom', body: truncated }]);
  const refused = await post(key, onlyBad.body, onlyBad.contentType);
  assert.equal(refused.status, 409);

  // Stored under /studies/{uid}: an instance of another study fails (0xA900).
  const wrongStudy = await stow(origin, key, [fixture('MR_small.dcm')], `/studies/${ct.study}`);
  assert.equal(wrongStudy.status, 409);
  const failed = (await wrongStudy.json()) as Record<string, { Value?: Record<string, { Value?: unknown[] }>[] }>;
  assert.equal(failed['00081198']!.Value![0]!['00081197']!.Value![0], 0xa900);
});
