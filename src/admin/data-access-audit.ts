/**
 * Records the administration app's clinical views (worklist, study with its reports, message log,
 * message text, patient search and patient chart) in the data access log (issue 26 point 14): the signed-in user, their address,
 * the site, what was shown and which patients it concerned.
 */
import type { FastifyRequest } from 'fastify';
import { dataAccessRecorder, type DataAccessInteraction } from '../domain/audit/data-access.ts';
import type { Database } from '../storage/database.ts';
import { sessionOf } from './session/authenticate.ts';

export interface AdminView {
  interaction: Extract<DataAccessInteraction, 'view' | 'search'>;
  resourceType: 'Study' | 'Message' | 'Patient';
  resourceIds: readonly string[];
  patientIds: readonly (string | null)[];
  query?: string;
}

export function auditAdminView(database: Database, request: FastifyRequest, siteId: string, view: AdminView): void {
  const query = view.query ?? (view.interaction === 'search' ? request.url.split('?', 2)[1] : undefined);
  dataAccessRecorder(database).record(
    {
      siteId,
      occurredAt: new Date(),
      userId: sessionOf(request).user.id,
      keyId: null,
      remoteAddress: request.ip,
      surface: 'admin',
      interaction: view.interaction,
      resourceType: view.resourceType,
      ...(query ? { query } : {}),
      resourceIds: view.resourceIds,
      patientIds: view.patientIds.filter((id): id is string => id !== null),
    },
    request.log,
  );
}
