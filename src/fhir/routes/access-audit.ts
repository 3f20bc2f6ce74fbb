/**
 * Records each FHIR read, vread, history and search in the data access log (issue 26 point 14):
 * the API key and its owner, the caller's address, the site, the resources returned and the
 * patients they belong to. The record is queued, not awaited (src/domain/audit/data-access.ts).
 */
import type { Resource } from '@medplum/fhirtypes';
import type { FastifyRequest } from 'fastify';
import { dataAccessRecorder, type DataAccessInteraction } from '../../domain/audit/data-access.ts';
import { siteOf, type FhirContext } from './fhir-context.ts';

/** The patient a resource is about: itself, its subject, or (AllergyIntolerance) its patient. */
function patientOf(resource: Resource): string | undefined {
  if (resource.resourceType === 'Patient') return resource.id;
  const about = resource as { subject?: { reference?: unknown }; patient?: { reference?: unknown } };
  const reference = about.subject?.reference ?? about.patient?.reference;
  return typeof reference === 'string' && reference.startsWith('Patient/') ? reference.slice('Patient/'.length) : undefined;
}

export function auditFhirAccess(
  context: FhirContext,
  request: FastifyRequest,
  interaction: DataAccessInteraction,
  resourceType: string,
  resources: readonly Resource[],
  query?: string,
): void {
  const site = siteOf(request);
  const { actor } = site;
  const patients: string[] = [];
  for (const resource of resources) {
    const patient = patientOf(resource);
    if (patient !== undefined) patients.push(patient);
  }
  dataAccessRecorder(context.services.database).record(
    {
      siteId: site.siteId,
      occurredAt: new Date(),
      userId: actor.kind === 'api-key' || actor.kind === 'user' ? actor.userId : null,
      keyId: actor.kind === 'api-key' ? actor.keyId : null,
      remoteAddress: request.ip,
      surface: 'fhir',
      interaction,
      resourceType,
      ...(query !== undefined ? { query } : {}),
      resourceIds: resources.map((resource) => `${resource.resourceType}/${resource.id}${interaction === 'vread' || interaction === 'history' ? `/_history/${resource.meta?.versionId ?? ''}` : ''}`),
      patientIds: patients,
    },
    request.log,
  );
}
