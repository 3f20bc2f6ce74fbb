/**
 * Patients for clinicians: a search by name, identifier or birth date, and one patient's chart
 * (demographics, identifiers, results, conditions, allergies, documents, studies and reports).
 * Site-scoped like the worklist: another site's patient is 404. Both are recorded in the data
 * access log.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { maxPatientSearchResults, readPatientChart, searchPatients } from '../../domain/patients/chart.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { auditAdminView } from '../data-access-audit.ts';
import { chartView, patientSummaryView } from './patient-views.ts';
import { errorResponses, uuidParam, worklistStudySchema } from './schemas.ts';
import { siteUserEmails } from './worklist-routes.ts';

const tags = ['patients'];
const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;

const patientSummarySchema = {
  type: 'object',
  properties: { id: str, name: nullableStr, birth_date: nullableStr, gender: nullableStr, identifier: nullableStr, active: { type: 'boolean' } },
} as const;

const listOf = (properties: Record<string, unknown>) => ({ type: 'array', items: { type: 'object', properties } });

const chartSchema = {
  type: 'object',
  properties: {
    patient: {
      type: 'object',
      properties: {
        ...patientSummarySchema.properties,
        identifiers: listOf({ value: nullableStr, system: nullableStr, type: nullableStr, use: nullableStr }),
        addresses: { type: 'array', items: str },
        telecom: { type: 'array', items: str },
        last_updated: nullableStr,
      },
    },
    observations: listOf({
      id: str, name: nullableStr, code: nullableStr, value: nullableStr, unit: nullableStr, reference_range: nullableStr,
      interpretation: listOf({ code: nullableStr, text: nullableStr }),
      status: str,
      effective: { ...nullableStr, description: 'FHIR dateTime as received: a date, or a time with its UTC offset' },
      issued: nullableStr,
    }),
    conditions: listOf({ id: str, name: nullableStr, clinical_status: nullableStr, onset: nullableStr, recorded: nullableStr }),
    allergies: listOf({ id: str, substance: nullableStr, clinical_status: nullableStr, criticality: nullableStr, reactions: { type: 'array', items: str }, recorded: nullableStr }),
    documents: listOf({ id: str, type: nullableStr, description: nullableStr, content_type: nullableStr, status: nullableStr, date: nullableStr }),
    studies: { type: 'array', items: worklistStudySchema },
    reports: listOf({
      id: str, study_instance_uid: str, study_description: nullableStr, status: str, text: str, author_email: nullableStr,
      updated_at: { type: 'string', format: 'date-time' }, completed_at: { type: ['string', 'null'], format: 'date-time' },
    }),
    truncated: { type: 'boolean', description: 'true when a list was cut at 500 entries' },
  },
} as const;

interface PatientQuery {
  name?: string;
  identifier?: string;
  birth_date?: string;
  limit?: number;
}

export async function registerPatientRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/patients',
    {
      schema: {
        summary: 'Find the site\'s patients',
        description: 'By part of a name, an identifier\'s exact value, or a birth date (yyyy-mm-dd); the conditions given must all hold. Sorted by name.',
        tags,
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            name: { type: 'string', maxLength: 200 },
            identifier: { type: 'string', maxLength: 200 },
            birth_date: { type: 'string', maxLength: 10, description: 'yyyy-mm-dd' },
            limit: { type: 'integer', minimum: 1, maximum: maxPatientSearchResults, default: 50 },
          },
        },
        response: { 200: { type: 'object', properties: { patients: { type: 'array', items: patientSummarySchema } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Querystring: PatientQuery }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'worklist');
      const q = request.query;
      const patients = await searchPatients(database, context, {
        limit: q.limit ?? 50,
        ...(q.name ? { name: q.name } : {}),
        ...(q.identifier ? { identifier: q.identifier } : {}),
        ...(q.birth_date ? { birthDate: q.birth_date } : {}),
      });
      const ids = patients.map((patient) => patient.id!);
      auditAdminView(database, request, context.siteId, { interaction: 'search', resourceType: 'Patient', resourceIds: ids, patientIds: ids });
      return { patients: patients.map(patientSummaryView) };
    },
  );

  app.get(
    '/api/sites/:siteId/patients/:patientId',
    {
      schema: {
        summary: 'One patient\'s chart',
        description: 'Demographics and identifiers from the patient record; results (Observations, from HL7 v2 ORU or FHIR), conditions, allergies, documents, imaging studies and their reports, each newest first.',
        tags,
        params: { type: 'object', required: ['siteId', 'patientId'], properties: { siteId: uuidParam, patientId: uuidParam } },
        response: { 200: chartSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; patientId: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'worklist');
      const chart = await readPatientChart(database, context, request.params.patientId);
      if (!chart) throw new HttpProblem(404, 'not-found', 'no such patient in this site');
      auditAdminView(database, request, context.siteId, { interaction: 'view', resourceType: 'Patient', resourceIds: [chart.patient.id!], patientIds: [chart.patient.id!] });
      const authors = await siteUserEmails(database, context.siteId, chart.reports.map((report) => report.authorUserId));
      return chartView(chart, authors);
    },
  );
}
