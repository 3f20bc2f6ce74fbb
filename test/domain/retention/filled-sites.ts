// A test database with the FHIR, HL7, MPPS and DICOMweb origins, and a fill that gives a site some
// of everything it can hold, through the surfaces where there is one (site offboarding and export).
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createSession } from '../../../src/admin/session/session-store.ts';
import { dicomwebSurface } from '../../../src/dicomweb/surface.ts';
import { dataAccessRecorder } from '../../../src/domain/audit/data-access.ts';
import { createIntegrationClient } from '../../../src/domain/clients/integration-clients.ts';
import { createDicomDestination } from '../../../src/domain/imaging/dicom-destinations.ts';
import { createReport } from '../../../src/domain/imaging/reports.ts';
import { createApiKey } from '../../../src/domain/keys/api-keys.ts';
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
import { uid } from '../imaging/fixtures.ts';

const operator = { kind: 'operator' } as const;

export interface FilledSites {
  db: TestDatabase;
  services: Services;
  /** Some of everything a site holds; `address` is the allowed address of its integration client. */
  fill(site: SiteContext, address: string): Promise<void>;
}

/** Registers the test file's before and after hooks; the fields are set once `before` ran. */
export function useFilledSites(): FilledSites {
  let origins: Record<'fhir' | 'hl7' | 'mpps' | 'dicomweb', FastifyInstance>;
  const filled = {} as FilledSites;
  before(async () => {
    filled.db = await createTestDatabase();
    filled.services = testServices(filled.db.database);
    origins = {
      fhir: await createOrigin(fhirSurface, filled.services),
      hl7: await createOrigin(hl7Surface, filled.services),
      mpps: await createOrigin(mppsSurface, filled.services),
      dicomweb: await createOrigin(dicomwebSurface, filled.services),
    };
  });
  after(async () => {
    await Promise.all(Object.values(origins).map((origin) => origin.close()));
    await filled.db.drop();
  });
  filled.fill = async (site, address) => {
    const { db } = filled;
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
  };
  return filled;
}
