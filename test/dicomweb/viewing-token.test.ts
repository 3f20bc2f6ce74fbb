import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { as, createTestUser, signIn, type Signed } from '../admin/support.ts';
import { fixture, multipartBody, siteWithKey, stow, useDicomwebOrigin } from './support.ts';

const origin = useDicomwebOrigin();
const adminUrl = 'http://127.0.0.1:18084';
let admin: FastifyInstance;

const ct = { study: '1.3.6.1.4.1.5962.1.2.1.20040119072730.12322', instance: '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322' };

before(async () => {
  // The admin origin is reached in-process; the DICOMweb origin listens, and the admin origin
  // names it to the browser and is the one origin the DICOMweb origin allows.
  // Waits for the DICOMweb origin of useDicomwebOrigin to listen (its own before hook).
  while (!origin.services || !origin.url) await new Promise((resolve) => setTimeout(resolve, 20));
  origin.services.config.dicomwebPublicUrl = origin.url;
  origin.services.config.dicomwebCorsOrigins = [adminUrl];
  admin = await createOrigin(adminSurface, origin.services);
});
after(async () => admin?.close());

async function requestToken(signed: Signed, siteId: string): Promise<{ status: number; body: Record<string, string> }> {
  const response = await admin.inject(as(signed, { method: 'POST', url: `/api/sites/${siteId}/dicomweb-tokens`, headers: { origin: 'http://localhost' } }));
  return { status: response.statusCode, body: response.json() };
}

function read(token: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${origin.url}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
}

async function clinicianWithStudy(): Promise<{ siteId: string; signed: Signed; token: string }> {
  const { site, key } = await siteWithKey(origin);
  assert.equal((await stow(origin, key, [fixture('CT_small.dcm')])).status, 200);
  const signed = await signIn(admin, (await createTestUser(origin.db.database, site, 'clinician')).email);
  const issued = await requestToken(signed, site.siteId);
  assert.equal(issued.status, 201, JSON.stringify(issued.body));
  return { siteId: site.siteId, signed, token: issued.body.token! };
}

test('a signed-in clinician gets a short-lived token that reads the site\'s studies over QIDO-RS and WADO-RS, audited as the user', async () => {
  const { siteId, signed, token } = await clinicianWithStudy();
  const issued = await requestToken(signed, siteId);
  assert.match(issued.body.token!, /^cgv_[A-Za-z0-9_-]{43}$/);
  assert.equal(issued.body.dicomweb_url, origin.url);
  const lifetime = Date.parse(issued.body.expires_at!) - Date.now();
  assert.ok(lifetime > 0 && lifetime <= 10 * 60 * 1000, `expires in ${lifetime} ms`);
  const { rows } = await origin.db.database.query('SELECT count(*)::int AS n FROM dicomweb_viewing_token WHERE token_hash = $1', [Buffer.from(issued.body.token!)]);
  assert.equal(rows[0].n, 0, 'the token itself is not stored');

  const studies = await read(token, '/studies');
  assert.equal(studies.status, 200);
  assert.deepEqual(((await studies.json()) as Record<string, { Value: string[] }>[]).map((study) => study['0020000D']!.Value[0]), [ct.study]);
  const metadata = await read(token, `/studies/${ct.study}/metadata`, { accept: 'application/dicom+json' });
  assert.equal(metadata.status, 200);
  const instance = ((await metadata.json()) as Record<string, { Value: string[] }>[])[0]!;
  const frames = await read(token, `/studies/${ct.study}/series/${instance['0020000E']!.Value[0]}/instances/${ct.instance}/frames/1`, { accept: 'multipart/related; type="application/octet-stream"; transfer-syntax=*' });
  assert.equal(frames.status, 200);

  let logged: Record<string, any>[] = [];
  for (let attempt = 0; attempt < 100 && !logged.some((row) => row.interaction === 'read'); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    logged = (await origin.db.database.query("SELECT interaction, user_id, key_id FROM data_access_audit WHERE site_id = $1 AND surface = 'dicomweb'", [siteId])).rows;
  }
  assert.ok(logged.some((row) => row.interaction === 'read' && row.user_id === signed.userId && row.key_id === null), JSON.stringify(logged));
  assert.ok(logged.some((row) => row.interaction === 'search' && row.user_id === signed.userId));
});

test('a token never stores: STOW-RS with a bearer token is refused and nothing is stored', async () => {
  const { siteId, token } = await clinicianWithStudy();
  const { body, contentType } = multipartBody([{ contentType: 'application/dicom', body: fixture('MR_small.dcm') }]);
  const response = await fetch(`${origin.url}/studies`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });
  assert.equal(response.status, 403);
  assert.match(response.headers.get('www-authenticate') ?? '', /insufficient_scope/);
  const { rows } = await origin.db.database.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [siteId]);
  assert.equal(rows[0].n, 1);
});

test("another site's user gets no token for the site (404) and their own token finds none of its studies (404, empty search)", async () => {
  const owner = await clinicianWithStudy();
  const otherSite = await createTestSite(origin.db.database);
  const stranger = await signIn(admin, (await createTestUser(origin.db.database, otherSite, 'clinician')).email);
  assert.equal((await requestToken(stranger, owner.siteId)).status, 404);
  const own = await requestToken(stranger, otherSite.siteId);
  assert.equal(own.status, 201);
  assert.equal((await read(own.body.token!, `/studies/${ct.study}/metadata`)).status, 404);
  assert.equal((await read(own.body.token!, `/studies/${ct.study}`)).status, 404);
  assert.deepEqual(await (await read(own.body.token!, '/studies')).json(), []);
});

test('a missing, malformed, unknown, expired or revoked token is 401 with a Bearer challenge', async () => {
  const { signed, token } = await clinicianWithStudy();
  for (const authorization of ['Bearer nonsense', `Bearer cgv_${'A'.repeat(43)}`, 'Basic dXNlcjpwYXNz', 'Bearer']) {
    const response = await fetch(`${origin.url}/studies`, { headers: { authorization } });
    assert.equal(response.status, 401, authorization);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer /, authorization);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'unauthenticated');
  }
  assert.equal((await fetch(`${origin.url}/studies`)).status, 401, 'no credential at all');

  // Expired.
  const { rows } = await origin.db.database.query<{ token_hash: Buffer }>(
    "UPDATE dicomweb_viewing_token SET expires_at = now() - interval '1 second' WHERE token_hash = (SELECT token_hash FROM dicomweb_viewing_token ORDER BY created_at DESC LIMIT 1) RETURNING token_hash",
  );
  assert.equal(rows.length, 1);
  assert.equal((await read(token, '/studies')).status, 401);

  // Revoked by signing out: every token of the session goes with it.
  const fresh = (await requestToken(signed, (await origin.db.database.query('SELECT site_id FROM app_user WHERE id = $1', [signed.userId])).rows[0].site_id)).body.token!;
  assert.equal((await read(fresh, '/studies')).status, 200);
  assert.equal((await admin.inject(as(signed, { method: 'DELETE', url: '/api/session', headers: { origin: 'http://localhost' } }))).statusCode, 204);
  assert.equal((await read(fresh, '/studies')).status, 401);
});

test("a token stops working once its admin session is idle past CG_ADMIN_SESSION_IDLE_SECONDS, as the session itself does", async () => {
  const { signed, token } = await clinicianWithStudy();
  const idleSeconds = origin.services!.config.adminSession.idleSeconds;
  const idleFor = async (seconds: number) => {
    const { rowCount } = await origin.db.database.query(
      `UPDATE admin_session SET last_seen_at = now() - make_interval(secs => $1)
       WHERE id_hash = (SELECT session_id_hash FROM dicomweb_viewing_token ORDER BY created_at DESC LIMIT 1)`,
      [seconds],
    );
    assert.equal(rowCount, 1);
  };
  await idleFor(idleSeconds - 60);
  assert.equal((await read(token, '/studies')).status, 200, 'a session used within the limit keeps its tokens');
  await idleFor(idleSeconds + 1);
  const response = await read(token, '/studies');
  assert.equal(response.status, 401);
  assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer .*invalid_token/);
  assert.equal((await admin.inject(as(signed, { url: '/api/session' }))).json().user, null, 'the session itself has ended by the same rule');
});

test('a token is only issued to a signed-in user, on a same-origin request with the CSRF token', async () => {
  const { siteId, signed } = await clinicianWithStudy();
  assert.equal((await admin.inject({ method: 'POST', url: `/api/sites/${siteId}/dicomweb-tokens` })).statusCode, 401);
  const noCsrf = await admin.inject({ method: 'POST', url: `/api/sites/${siteId}/dicomweb-tokens`, headers: { cookie: signed.cookie } });
  assert.equal(noCsrf.statusCode, 403);
});

test('CORS: the admin origin may read the DICOMweb origin with the token; other origins get no CORS headers', async () => {
  const preflight = await fetch(`${origin.url}/studies`, { method: 'OPTIONS', headers: { origin: adminUrl, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), adminUrl);
  assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/);
  assert.equal(preflight.headers.get('access-control-allow-credentials'), null);
  assert.doesNotMatch(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
  const evil = await fetch(`${origin.url}/studies`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
  assert.equal(evil.headers.get('access-control-allow-origin'), null);
  const { token } = await clinicianWithStudy();
  const simple = await read(token, '/studies', { origin: adminUrl });
  assert.equal(simple.headers.get('access-control-allow-origin'), adminUrl);
});

test("the admin app's Content Security Policy lets the page reach the DICOMweb origin and run the decoders", async () => {
  const csp = String((await admin.inject({ url: '/' })).headers['content-security-policy']);
  assert.match(csp, new RegExp(`connect-src 'self' ${origin.url}(;|$)`));
  assert.match(csp, new RegExp(`img-src 'self' data: blob: ${origin.url}(;|$)`));
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
  assert.match(csp, /worker-src 'self' blob:/);
});

test('a service without the DICOMweb origin hands out no viewing token (404)', async () => {
  const { site } = await siteWithKey(origin);
  const services = testServices(origin.db.database, { CG_DICOMWEB_PORT: '' });
  const partial = await createOrigin(adminSurface, services);
  try {
    const signed = await signIn(partial, (await createTestUser(origin.db.database, site, 'clinician')).email);
    const response = await partial.inject(as(signed, { method: 'POST', url: `/api/sites/${site.siteId}/dicomweb-tokens`, headers: { origin: 'http://localhost' } }));
    assert.equal(response.statusCode, 404);
    assert.match(response.json().error.message, /does not serve the DICOMweb origin/);
  } finally {
    await partial.close();
  }
});
