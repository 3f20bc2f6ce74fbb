/**
 * Writing reports on a study: create a draft, save it again, complete (sign) it. A completed
 * report is frozen; these are what FHIR DiagnosticReport shows (completed: final).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { completeReport, createReport, updateDraft } from '../../domain/imaging/reports.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, reportSchema, uuidParam } from './schemas.ts';
import { reportView, siteUserEmails } from './worklist-routes.ts';

const tags = ['reports'];
const textField = { type: 'string', maxLength: 100_000 } as const;
const reportParams = { type: 'object', required: ['siteId', 'reportId'], properties: { siteId: uuidParam, reportId: uuidParam } } as const;

export async function registerReportRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.post(
    '/api/sites/:siteId/studies/:studyUid/reports',
    {
      schema: {
        summary: 'Write a report on a study (clinician)',
        description: 'status draft (default) keeps it editable; completed signs it with the signed-in user as author.',
        tags,
        params: { type: 'object', required: ['siteId', 'studyUid'], properties: { siteId: uuidParam, studyUid: { type: 'string', maxLength: 128 } } },
        body: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: textField, status: { type: 'string', enum: ['draft', 'completed'] } } },
        response: { 201: reportSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; studyUid: string }; Body: { text: string; status?: 'draft' | 'completed' } }>, reply) => {
      const { site, context } = await siteForArea(database, request, request.params.siteId, 'reportWriting');
      const report = await database.transaction((tx) =>
        createReport(tx, context, { studyInstanceUid: request.params.studyUid, text: request.body.text, ...(request.body.status ? { status: request.body.status } : {}) }),
      );
      return reply.code(201).send(reportView(report, await siteUserEmails(database, site.id, [report.authorUserId])));
    },
  );

  app.put(
    '/api/sites/:siteId/reports/:reportId',
    {
      schema: {
        summary: 'Save a draft report\'s text',
        description: 'version is the version the editor started from: a report changed meanwhile answers 412; a completed one 409.',
        tags,
        params: reportParams,
        body: { type: 'object', required: ['text', 'version'], additionalProperties: false, properties: { text: textField, version: { type: 'integer', minimum: 1 } } },
        response: { 200: reportSchema, ...errorResponses, 412: errorResponses[409] },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; reportId: string }; Body: { text: string; version: number } }>) => {
      const { site, context } = await siteForArea(database, request, request.params.siteId, 'reportWriting');
      const report = await database.transaction((tx) => updateDraft(tx, context, request.params.reportId, { text: request.body.text, expectedVersion: request.body.version }));
      return reportView(report, await siteUserEmails(database, site.id, [report.authorUserId]));
    },
  );

  app.post(
    '/api/sites/:siteId/reports/:reportId/complete',
    {
      schema: {
        summary: 'Complete (sign) a draft report',
        description: 'Records the signed-in clinician as author and the completion time; the text can no longer change.',
        tags,
        params: reportParams,
        body: { type: 'object', required: ['version'], additionalProperties: false, properties: { text: textField, version: { type: 'integer', minimum: 1 } } },
        response: { 200: reportSchema, ...errorResponses, 412: errorResponses[409] },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; reportId: string }; Body: { text?: string; version: number } }>) => {
      const { site, context } = await siteForArea(database, request, request.params.siteId, 'reportWriting');
      const report = await database.transaction((tx) =>
        completeReport(tx, context, request.params.reportId, { expectedVersion: request.body.version, ...(request.body.text !== undefined ? { text: request.body.text } : {}) }),
      );
      return reportView(report, await siteUserEmails(database, site.id, [report.authorUserId]));
    },
  );
}
