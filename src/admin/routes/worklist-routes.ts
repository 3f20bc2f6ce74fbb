/** The site's worklist and one study's page: series, procedure steps and reports. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { procedureStepJson } from '../../domain/imaging/procedure-step-json.ts';
import type { ImagingReport } from '../../domain/imaging/report-queries.ts';
import { getStudy, listWorklist, maxWorklistPageSize, type WorklistFilter, type WorklistStudy } from '../../domain/imaging/worklist.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { auditAdminView } from '../data-access-audit.ts';
import type { Services } from '../../platform/services.ts';
import type { Queryable } from '../../storage/database.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, reportSchema, uuidParam, worklistStudySchema } from './schemas.ts';

const tags = ['worklist'];

interface WorklistQuery {
  from?: string;
  to?: string;
  modality?: string;
  patient?: string;
  step_status?: string;
  report_status?: string;
  limit?: number;
  offset?: number;
}

export function studyView(study: WorklistStudy) {
  return {
    study_instance_uid: study.studyInstanceUid,
    patient_id: study.patientId,
    dicom_patient_id: study.dicomPatientId,
    patient_name: study.patientDisplayName ?? study.patientName,
    patient_birth_date: study.patientBirthDate,
    patient_sex: study.patientSex,
    study_date: study.studyDate,
    study_time: study.studyTime,
    study_started_at: study.studyStartedAt,
    accession_number: study.accessionNumber,
    study_description: study.studyDescription,
    modalities: study.modalities,
    series_count: study.seriesCount,
    instance_count: study.instanceCount,
    size_bytes: study.sizeBytes,
    step_status: study.stepStatus,
    report_status: study.reportStatus,
    first_received_at: study.firstReceivedAt,
    last_received_at: study.lastReceivedAt,
  };
}

export function reportView(report: ImagingReport, emails: Map<string, string>) {
  return {
    id: report.id,
    study_instance_uid: report.studyInstanceUid,
    status: report.status,
    text: report.text,
    author_user_id: report.authorUserId,
    author_email: report.authorUserId ? (emails.get(report.authorUserId) ?? null) : null,
    created_at: report.createdAt,
    updated_at: report.updatedAt,
    completed_at: report.completedAt,
    version: report.version,
  };
}

/** E-mail addresses of this site's users, for showing report authors. */
export async function siteUserEmails(db: Queryable, siteId: string, ids: (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; email: string }>('SELECT id, email FROM app_user WHERE site_id = $1 AND id = ANY ($2::uuid[])', [siteId, wanted]);
  return new Map(rows.map((row) => [row.id, row.email]));
}

export async function registerWorklistRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/studies',
    {
      schema: {
        summary: 'The site\'s worklist',
        description: 'Studies received over DICOM, newest first, with counts, procedure-step status and report status.',
        tags,
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            from: { type: 'string', maxLength: 10, description: 'study date from (yyyy-mm-dd), inclusive' },
            to: { type: 'string', maxLength: 10, description: 'study date to (yyyy-mm-dd), inclusive' },
            modality: { type: 'string', maxLength: 16 },
            patient: { type: 'string', maxLength: 200, description: 'patient id, DICOM PatientID, or part of the name' },
            step_status: { type: 'string', enum: ['IN PROGRESS', 'COMPLETED', 'DISCONTINUED', 'none'] },
            report_status: { type: 'string', enum: ['draft', 'completed', 'none'] },
            limit: { type: 'integer', minimum: 1, maximum: maxWorklistPageSize, default: 25 },
            offset: { type: 'integer', minimum: 0, maximum: 10_000_000, default: 0 },
          },
        },
        response: { 200: { type: 'object', properties: { studies: { type: 'array', items: worklistStudySchema }, total: { type: 'integer' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Querystring: WorklistQuery }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'worklist');
      const q = request.query;
      const filter: WorklistFilter = {
        limit: q.limit ?? 25,
        offset: q.offset ?? 0,
        ...(q.from ? { from: q.from } : {}),
        ...(q.to ? { to: q.to } : {}),
        ...(q.modality ? { modality: q.modality } : {}),
        ...(q.patient ? { patient: q.patient } : {}),
        ...(q.step_status ? { stepStatus: q.step_status as WorklistFilter['stepStatus'] } : {}),
        ...(q.report_status ? { reportStatus: q.report_status as WorklistFilter['reportStatus'] } : {}),
      };
      const page = await listWorklist(database, context, filter);
      auditAdminView(database, request, context.siteId, { interaction: 'search', resourceType: 'Study', resourceIds: page.studies.map((study) => study.studyInstanceUid), patientIds: page.studies.map((study) => study.patientId) });
      return { studies: page.studies.map(studyView), total: page.total };
    },
  );

  app.get(
    '/api/sites/:siteId/studies/:studyUid',
    {
      schema: {
        summary: 'One study: patient, series, procedure steps and reports',
        tags,
        params: { type: 'object', required: ['siteId', 'studyUid'], properties: { siteId: uuidParam, studyUid: { type: 'string', maxLength: 128 } } },
        response: {
          200: {
            type: 'object',
            properties: {
              ...worklistStudySchema.properties,
              series: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    series_instance_uid: { type: 'string' },
                    modality: { type: ['string', 'null'] },
                    series_number: { type: ['integer', 'null'] },
                    series_description: { type: ['string', 'null'] },
                    instance_count: { type: 'integer' },
                    size_bytes: { type: 'integer' },
                  },
                },
              },
              procedure_steps: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    sop_instance_uid: { type: 'string' },
                    status: { type: 'string' },
                    modality: { type: ['string', 'null'] },
                    station_ae_title: { type: ['string', 'null'] },
                    started_at: { type: ['string', 'null'], format: 'date-time' },
                    ended_at: { type: ['string', 'null'], format: 'date-time' },
                    procedure: { type: ['string', 'null'] },
                    source: { type: 'string' },
                    updated_at: { type: 'string', format: 'date-time' },
                  },
                },
              },
              reports: { type: 'array', items: reportSchema },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; studyUid: string } }>) => {
      const { site, context } = await siteForArea(database, request, request.params.siteId, 'worklist');
      const study = await getStudy(database, context, request.params.studyUid);
      if (!study) throw new HttpProblem(404, 'not-found', 'no such study in this site');
      auditAdminView(database, request, site.id, { interaction: 'view', resourceType: 'Study', resourceIds: [study.studyInstanceUid], patientIds: [study.patientId] });
      const emails = await siteUserEmails(database, site.id, study.reports.map((r) => r.authorUserId));
      return {
        ...studyView(study),
        series: study.series.map((s) => ({
          series_instance_uid: s.seriesInstanceUid,
          modality: s.modality,
          series_number: s.seriesNumber,
          series_description: s.seriesDescription,
          instance_count: s.instanceCount,
          size_bytes: s.sizeBytes,
        })),
        procedure_steps: study.procedureSteps.map(procedureStepJson),
        reports: study.reports.map((r) => reportView(r, emails)),
      };
    },
  );
}
