// Data lifecycle, site offboarding: a site is marked, then purged once its grace period has
// passed; afterwards no table of the catalogue holds a row of it, its DICOM folder is gone, the
// purge is audited, and another site filled the same way is untouched.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createSession } from '../../../src/admin/session/session-store.ts';
import { dicomwebSurface } from '../../../src/dicomweb/surface.ts';
import { dataAccessRecorder } from '../../../src/domain/audit/data-access.ts';
import { createIntegrationClient } from '../../../src/domain/clients/integration-clients.ts';
import { createDicomDestination } from '../../../src/domain/imaging/dicom-destinations.ts';
import { createReport } from '../../../src/domain/imaging/reports.ts';
import { createApiKey } from '../../../src/domain/keys/api-keys.ts';
import { runDataLifecycleOnce } from '../../../src/domain/retention/data-lifecycle-job.ts';
import { cancelSitePurge, markSiteForPurge, purgeSite } from '../../../src/domain/retention/site-offboarding.ts';
import { refreshStorageUsage } from '../../../src/domain/retention/storage-usage.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { createUser } from '../../../src/domain/users/users.ts';
import { fhirSurface } from '../../../src/fhir/surface.ts';
import { mppsSurface } from '../../../src/mpps/surface.ts';
import { createOrigin } from '../../../src/platform/http/origin.ts';
import type { Services } from '../../../src/platform/services.ts';
import { hl7Surface } from '../../../src/server/hl7-origin.ts';
import { fixture, multipartBody } from '../../dicomweb/support.ts';
import { message } from '../../hl7v2/support.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testServices } from '../../support/http.ts';
import { createTestSite } from '../../support/sites.ts';
import { uid } from '../imaging/fixtures.ts';

let db: TestDatabase;
let services: Services;
let origins: Record<'fhir' | 'hl7' | 'mpps' | 'dicomweb', FastifyInstance>;
before(async () => {
  db = await createTestDatabase();
  services = testServices(db.database);
  origins = {
    fhir: await createOrigin(fhirSurface, services),
    hl7: await createOrigin(hl7Surface, services),
    mpps: await createOrigin(mppsSurface, services),
    dicomweb: await createOrigin(dicomwebSurface, services),
  };
});
after(async () => {
  await Promise.all(Object.values(origins).map((origin) => origin.close()));
  await db.drop();
});

const operator = { kind: 'operator' } as const;
const folders = () => ({ dicomStorageDir: services.config.dicomStorageDir, exportDir: services.config.bulkExport.dir });

/** Some of everything a site holds, through the surfaces where there is one. */
async function fill(site: SiteContext, address: string): Promise<void> {
  const { user } = await createUser(db.database, { siteId: site.siteId, email: `u-${uid()}@example.test`, role: 'site-admin', password: 'correct horse battery staple' }, operator);
  const { key } = await createApiKey(db.database, { siteId: site.siteId, userId: user.id, label: 'k' }, operator);
  await createSession(db.database, user, { remoteAddress: '127.0.0.1' }, 1800);
  await createIntegrationClient(db.database, site.siteId, { name: 'lab', protocol: 'hl7-mllp', allowedIps: address }, operator);
  const headers = (type: string) => ({ 'x-api-key': key, 'content-type': type });
  const patient = await origins.fhir.inject({ method: 'POST', url: '/fhir/Patient', headers: headers('application/fhir+json'), payload: { resourceType: 'Patient', name: [{ family: 'Leaving' }] } });
  assert.equal(patient.statusCode, 201, patient.body);
  assert.equal((await origins.fhir.inject({ method: 'GET', url: `/fhir/Patient/${patient.json().id}`, headers: { 'x-api-key': key } })).statusCode, 200);
  await dataAccessRecorder(db.database).settled();
  const adt = message([`PID|1||MRN-${uid()}^^^HOSP^MR||Leaving^Ann||19800101|F`, 'PV1|1|I|WARD^1^1|||||||||||||||V-1']);
  assert.equal((await origins.hl7.inject({ method: 'POST', url: '/v2/ingest', headers: headers('text/plain'), payload: adt })).statusCode, 200);
  const stow = multipartBody([{ contentType: 'application/dicom', body: fixture('CT_small.dcm') }]);
  const stored = await origins.dicomweb.inject({ method: 'POST', url: '/studies', headers: { 'x-api-key': key, 'content-type': stow.contentType, accept: 'application/dicom+json' }, payload: stow.body });
  assert.equal(stored.statusCode, 200, stored.body);
  const step = { sop_instance_uid: uid(), study_uid: uid(), status: 'IN PROGRESS', modality: 'CT' };
  assert.equal((await origins.mpps.inject({ method: 'POST', url: '/ingest', headers: headers('application/json'), payload: JSON.stringify(step) })).statusCode, 201);
  const { rows } = await db.database.query<{ study_instance_uid: string }>('SELECT study_instance_uid FROM imaging_study WHERE site_id = $1', [site.siteId]);
  await createReport(db.database, site, { studyInstanceUid: rows[0]!.study_instance_uid, text: 'Normal.' });
  await createDicomDestination(db.database, site, { aeTitle: 'PACS', host: '127.0.0.1', port: 104 });
  const exported = await origins.fhir.inject({ method: 'GET', url: '/fhir/$export', headers: { 'x-api-key': key, accept: 'application/fhir+json', prefer: 'respond-async' } });
  assert.equal(exported.statusCode, 202, exported.body);
  // Written by a serving process's background counters, the refusal recorder and the admin app's
  // viewer: directly here, since these origins run without them.
  await db.database.query(
    `INSERT INTO traffic_minute (site_id, minute, sender_kind, sender, surface, measure, accepted, last_at)
     VALUES ($1, date_trunc('minute', now()), 'ae-title', 'MODALITY', 'dicom', 'association', 1, now())`,
    [site.siteId],
  );
  await db.database.query(`INSERT INTO refused_traffic (site_id, surface, kind, remote_address, reason) VALUES ($1, 'http', 'revoked-key', $2, 'a revoked key')`, [site.siteId, address]);
  await db.database.query(
    `INSERT INTO dicomweb_viewing_token (token_hash, session_id_hash, user_id, site_id, expires_at)
     SELECT sha256(convert_to(gen_random_uuid()::text, 'UTF8')), id_hash, user_id, $1, now() + interval '10 minutes' FROM admin_session WHERE user_id = $2`,
    [site.siteId, user.id],
  );
}

/** Rows of the site in every table with a site_id column, read from the catalogue. */
async function rowsPerTable(siteId: string): Promise<Record<string, number>> {
  const { rows: tables } = await db.database.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'site_id' AND NOT a.attisdropped
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const { rows } = await db.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}" WHERE site_id = $1`, [siteId]);
    counts[name] = rows[0]!.n;
  }
  const { rows: sessions } = await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM admin_session s JOIN app_user u ON u.id = s.user_id WHERE u.site_id = $1', [siteId]);
  counts.admin_session = sessions[0]!.n;
  const { rows: site } = await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM site WHERE id = $1', [siteId]);
  counts.site = site[0]!.n;
  return counts;
}

test('a marked site is purged after its grace period: no row of it in any table, its DICOM folder gone, audited; the other site untouched', { timeout: 120_000 }, async () => {
  const leaving = await createTestSite(db.database);
  const staying = await createTestSite(db.database);
  await fill(leaving, '127.0.0.1');
  await fill(staying, '127.0.0.2');
  await refreshStorageUsage(db.database);

  const before = await rowsPerTable(leaving.siteId);
  // Every table holds something of the site, so the check after the purge checks every table.
  assert.deepEqual(Object.entries(before).filter(([, n]) => n === 0).map(([table]) => table), [], 'tables the fill left empty');
  const staysBefore = await rowsPerTable(staying.siteId);
  assert.ok(existsSync(join(services.config.dicomStorageDir, leaving.siteId)));

  // Not marked, then marked but within the grace period: refused.
  await assert.rejects(purgeSite(db.database, leaving.siteId, folders(), operator), /not marked for offboarding/);
  const marked = await markSiteForPurge(db.database, leaving.siteId, 30, operator);
  assert.ok(marked.purgeAfter && marked.purgeAfter.getTime() > Date.now() + 29 * 86_400_000);
  await assert.rejects(purgeSite(db.database, leaving.siteId, folders(), operator), /grace period lasts until/);
  // Cancelling unmarks; the job purges nothing before the grace period ends.
  assert.equal((await cancelSitePurge(db.database, leaving.siteId, operator)).purgeAfter, null);
  await markSiteForPurge(db.database, leaving.siteId, 1, operator);
  assert.deepEqual((await runDataLifecycleOnce(db.database, { pauseMs: 0, folders: folders() }))!.sitesPurged, []);

  const report = await purgeSite(db.database, leaving.siteId, folders(), operator, { now: new Date(Date.now() + 2 * 86_400_000) });
  assert.ok(report.deleted.clinical_resource! > 0 && report.deleted.imaging_instance! > 0);

  const afterPurge = await rowsPerTable(leaving.siteId);
  assert.deepEqual(Object.entries(afterPurge).filter(([, n]) => n > 0), [], 'rows of the purged site left behind');
  assert.equal(existsSync(join(services.config.dicomStorageDir, leaving.siteId)), false);
  assert.deepEqual(await rowsPerTable(staying.siteId), staysBefore);
  assert.ok(existsSync(join(services.config.dicomStorageDir, staying.siteId)));
  const { rows: audit } = await db.database.query<{ site_id: string | null; details: { name: string } }>(
    "SELECT site_id, details FROM audit_event WHERE action = 'site.purged' AND target_id = $1",
    [leaving.siteId],
  );
  assert.equal(audit.length, 1);
  assert.equal(audit[0]!.site_id, null);
  assert.equal(audit[0]!.details.name, leaving.siteName);
});

test('the background job purges a site whose grace period has passed, rows pointing at the site under another name included', async () => {
  const site = await createTestSite(db.database);
  // A table added later that names its site otherwise than site_id (found by its foreign key).
  await db.database.query('CREATE TABLE IF NOT EXISTS site_note (about_site uuid NOT NULL REFERENCES site (id), note text)');
  await db.database.query("INSERT INTO site_note VALUES ($1, 'leaving')", [site.siteId]);
  await markSiteForPurge(db.database, site.siteId, 1, operator);
  await db.database.query("UPDATE site SET purge_after = now() - interval '1 minute' WHERE id = $1", [site.siteId]);
  const run = await runDataLifecycleOnce(db.database, { pauseMs: 0, folders: folders() });
  assert.deepEqual(run!.sitesPurged.map((purge) => purge.siteId), [site.siteId]);
  assert.equal((await rowsPerTable(site.siteId)).site, 0);
  assert.equal(run!.sitesPurged[0]!.deleted.site_note, 1);
  await db.database.query('DROP TABLE site_note');
});

test('a grace period outside 1 to 365 days is refused', async () => {
  const site = await createTestSite(db.database);
  for (const days of [0, 366, 2.5]) await assert.rejects(markSiteForPurge(db.database, site.siteId, days, operator), /grace period must be 1 to 365 days/);
});
