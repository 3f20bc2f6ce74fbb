/**
 * Records each QIDO-RS search and WADO-RS retrieval in the data access log, like FHIR reads: the
 * API key and its owner, the caller's address, the site, what was returned (study, series or
 * instance UIDs) and the patients those studies are linked to. Queued, not awaited.
 */
import type { FastifyRequest } from 'fastify';
import { dataAccessRecorder } from '../domain/audit/data-access.ts';
import { patientIdsOfStudies } from '../domain/imaging/study-patient-ids.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { Services } from '../platform/services.ts';

export interface DicomwebAccess {
  interaction: 'read' | 'search';
  resourceType: 'Study' | 'Series' | 'Instance';
  resourceIds: readonly string[];
  studyInstanceUids: readonly string[];
  query?: string;
}

export async function auditDicomwebAccess(services: Services, request: FastifyRequest, access: DicomwebAccess): Promise<void> {
  const site = siteContextOf(request);
  const { actor } = site;
  const patientIds = await patientIdsOfStudies(services.database, site, [...new Set(access.studyInstanceUids)]);
  dataAccessRecorder(services.database).record(
    {
      siteId: site.siteId,
      occurredAt: new Date(),
      userId: actor.kind === 'api-key' || actor.kind === 'user' ? actor.userId : null,
      keyId: actor.kind === 'api-key' ? actor.keyId : null,
      remoteAddress: request.ip,
      surface: 'dicomweb',
      interaction: access.interaction,
      resourceType: access.resourceType,
      ...(access.query !== undefined ? { query: access.query } : {}),
      resourceIds: access.resourceIds,
      patientIds,
    },
    request.log,
  );
}
