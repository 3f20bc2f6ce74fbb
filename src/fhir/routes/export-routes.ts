/**
 * FHIR Bulk Data export (Bulk Data Access IG v2.0.0, export.html): the kick-off at
 * [base]/$export and [base]/Patient/$export, the status URL a client polls (and DELETEs to
 * cancel), and the NDJSON files of the manifest. Everything is inside the key's site: another
 * site's job, status or file is a 404, exactly like one that does not exist.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { jobFolder, removeJobFiles } from '../../domain/bulk-export/export-files.ts';
import { deleteExport, queueExport, readExport, type ExportJob, type ExportLevel } from '../../domain/bulk-export/export-jobs.ts';
import { DomainError } from '../../domain/errors.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { assertJsonBody } from '../http/content-negotiation.ts';
import { baseUrl, sendJson } from '../http/resource-response.ts';
import { informationOutcome } from '../outcome.ts';
import { ndjsonType, parametersPairs, parseExportParameters } from '../export/export-parameters.ts';
import { registerMethodNotAllowed } from './method-not-allowed.ts';
import { preference, queryPairs, siteOf, type FhirContext } from './fhir-context.ts';
import { fhirRoute, resourceResponses } from './route-options.ts';

/** Seconds a client is asked to wait between two status requests while the job runs. */
const pollAfterSeconds = 2;
/** Seconds a client is asked to wait when the site already runs its allowed number of jobs. */
const busyRetryAfterSeconds = 60;
/** A kick-off's Parameters resource names a few types and an instant. */
const maxParametersBytes = 64 * 1024;

const kickOffHeaders = {
  type: 'object',
  properties: {
    prefer: { type: 'string', description: 'Required: respond-async (export.html#headers). handling=lenient ignores parameters the server does not apply.' },
    accept: { type: 'string', description: 'application/fhir+json (the type of an OperationOutcome on failure)' },
  },
};
const kickOffQuery = {
  type: 'object',
  properties: {
    _outputFormat: { type: 'string', description: 'application/fhir+ndjson (the default), application/ndjson or ndjson' },
    _since: { type: 'string', description: 'A FHIR instant: only resources updated after it' },
    _type: { type: 'string', description: 'Comma-separated resource types (default: every type the server serves)' },
  },
};
const accepted = { 202: { description: 'Accepted: the status URL is in Content-Location', type: 'null' } };
const statusParams = { type: 'object', properties: { id: { type: 'string', description: 'The export job id' } }, required: ['id'] } as const;

export function registerExportRoutes(app: FastifyInstance, context: FhirContext): void {
  const settings = context.services.config.bulkExport;

  const kickOff = (level: ExportLevel) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (!respondAsync(request)) {
      throw new HttpProblem(400, 'invalid', '$export is asynchronous: send the header Prefer: respond-async (Bulk Data Access IG, export.html#headers)');
    }
    let pairs = queryPairs(request);
    if (request.method === 'POST') {
      assertJsonBody(request);
      pairs = [...pairs.filter(([name]) => name === '_format' || name === '_pretty'), ...parametersPairs(request.body)];
    }
    const parameters = parseExportParameters(pairs, preference(request, 'handling') === 'lenient');
    const site = siteOf(request);
    const job = await queueExport(
      context.services.database,
      site,
      {
        level,
        resourceTypes: parameters.resourceTypes,
        since: parameters.since,
        outputFormat: parameters.outputFormat,
        requestUrl: `${request.protocol}://${request.host}${request.url}`,
        requestedFrom: request.ip,
      },
      settings.jobsPerSite,
    );
    if (!job) {
      throw new HttpProblem(429, 'throttled', `this site already has ${settings.jobsPerSite} export${settings.jobsPerSite === 1 ? '' : 's'} queued or running; retry when one has finished, or cancel one`, {
        headers: { 'retry-after': String(busyRetryAfterSeconds) },
      });
    }
    reply.header('content-location', statusUrl(request, job.id));
    if (parameters.ignored.length === 0) return reply.code(202).send();
    return sendJson(reply, 202, informationOutcome(parameters.ignored.map((name) => ({ severity: 'warning', code: 'not-supported', diagnostics: `${name} was ignored (Prefer: handling=lenient)` }))));
  };

  const kickOffSchema = (level: ExportLevel, method: 'GET' | 'POST') => ({
    summary: level === 'system' ? 'Bulk Data export of the whole site (kick-off)' : 'Bulk Data export of the patient compartment (kick-off)',
    description: 'Bulk Data Access IG v2.0.0 export kick-off. Answers 202 with the status URL in Content-Location; 429 when the site already has its allowed number of exports queued or running.',
    tags: ['Bulk Data'],
    headers: kickOffHeaders,
    ...(method === 'GET' ? { querystring: kickOffQuery } : { body: { type: 'object', description: 'A Parameters resource (_type, _since, _outputFormat)', additionalProperties: true } }),
    response: { ...accepted, ...resourceResponses('OperationOutcome', 400) },
  });
  for (const [url, level] of [['/fhir/$export', 'system'], ['/fhir/Patient/$export', 'patient']] as const) {
    app.get(url, fhirRoute(kickOffSchema(level, 'GET')), kickOff(level));
    app.post(url, fhirRoute(kickOffSchema(level, 'POST'), { bodyLimit: maxParametersBytes }), kickOff(level));
    registerMethodNotAllowed(app, url, ['GET', 'POST'], 'Bulk Data');
  }
  registerMethodNotAllowed(app, '/fhir/$export-status/:id', ['GET', 'DELETE'], 'Bulk Data');
  registerMethodNotAllowed(app, '/fhir/$export-file/:id/:index', ['GET'], 'Bulk Data');

  app.get<{ Params: { id: string } }>(
    '/fhir/$export-status/:id',
    fhirRoute({
      summary: 'Bulk Data export status: 202 while it runs (X-Progress, Retry-After), 200 with the manifest when complete',
      tags: ['Bulk Data'],
      params: statusParams,
      response: { ...accepted, ...resourceResponses('The manifest: transactionTime, request, requiresAccessToken, output, error (application/json)', 200) },
    }),
    async (request, reply) => {
      const job = await liveJob(context, request, request.params.id);
      switch (job.state) {
        case 'queued':
        case 'running':
          return reply
            .code(202)
            .header('x-progress', job.state === 'queued' ? 'queued' : `running: ${job.progressCount} resources written`)
            .header('retry-after', String(pollAfterSeconds))
            .send();
        case 'failed':
          throw new HttpProblem(500, 'internal', job.error ?? 'the export failed');
        case 'completed':
          if (job.expiresAt) reply.header('expires', job.expiresAt.toUTCString());
          return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(manifestOf(request, job)));
        default:
          throw new DomainError('not-found', 'no such export');
      }
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/fhir/$export-status/:id',
    fhirRoute({ summary: 'Cancel a Bulk Data export, or delete a finished one with its files', tags: ['Bulk Data'], params: statusParams, response: { 202: { description: 'Accepted: the export and its files are deleted', type: 'object', additionalProperties: true }, ...resourceResponses('OperationOutcome', 202) } }),
    async (request, reply) => {
      const site = siteOf(request);
      if (!(await deleteExport(context.services.database, site.siteId, request.params.id))) throw notFound();
      // A worker still writing notices at its next batch (its lease is gone) and removes its own files; the clean-up removes any left.
      await removeJobFiles(settings.dir, site.siteId, request.params.id);
      return sendJson(reply, 202, informationOutcome([{ severity: 'information', code: 'informational', diagnostics: 'the export was cancelled and its files deleted' }]));
    },
  );

  app.get<{ Params: { id: string; index: string } }>(
    '/fhir/$export-file/:id/:index',
    {
      schema: {
        summary: 'Download one NDJSON file of a completed Bulk Data export (application/fhir+ndjson)',
        tags: ['Bulk Data'],
        params: { type: 'object', properties: { id: { type: 'string' }, index: { type: 'string', description: 'The file number in the manifest' } }, required: ['id', 'index'] },
        response: { ...resourceResponses('OperationOutcome', 404), 200: { description: 'NDJSON: one resource per line (application/fhir+ndjson)', type: 'string' } },
      },
      validatorCompiler: () => () => true,
      preHandler: async (request) => assertNdjsonAcceptable(request),
    },
    async (request, reply) => {
      const job = await liveJob(context, request, request.params.id);
      const index = /^[1-9]\d{0,5}$/.test(request.params.index) ? Number(request.params.index) - 1 : -1;
      const file = job.state === 'completed' ? job.output[index] : undefined;
      if (!file) throw notFound();
      const stream = createReadStream(join(jobFolder(settings.dir, job.siteId, job.id), file.file));
      // The file may have been deleted by a DELETE or the clean-up since the row was read.
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', () => reject(notFound()));
      });
      return reply.code(200).type(ndjsonType).header('content-length', String(file.bytes)).send(stream);
    },
  );
}

function respondAsync(request: FastifyRequest): boolean {
  const header = request.headers.prefer;
  const values = Array.isArray(header) ? header.join(',') : (header ?? '');
  return values.split(/[,;]/).some((part) => part.trim().toLowerCase() === 'respond-async');
}

function notFound(): DomainError {
  return new DomainError('not-found', 'no such export (it may have been cancelled or have expired)');
}

/** The site's job, unless it has expired (an expired job is gone, whether cleaned up yet or not). */
async function liveJob(context: FhirContext, request: FastifyRequest, id: string): Promise<ExportJob> {
  const job = await readExport(context.services.database, siteOf(request).siteId, id);
  if (!job || (job.expiresAt && job.expiresAt.getTime() <= Date.now())) throw notFound();
  return job;
}

function statusUrl(request: FastifyRequest, id: string): string {
  return `${baseUrl(request)}/$export-status/${id}`;
}

/** export.html#response---complete-status */
function manifestOf(request: FastifyRequest, job: ExportJob) {
  return {
    transactionTime: (job.transactionTime ?? job.createdAt).toISOString(),
    request: job.requestUrl,
    requiresAccessToken: true,
    output: job.output.map((file, index) => ({ type: file.type, url: `${baseUrl(request)}/$export-file/${job.id}/${index + 1}`, count: file.count })),
    error: [],
  };
}

/** The file request's Accept is optional; when sent it must allow NDJSON (export.html#file-request). */
function assertNdjsonAcceptable(request: FastifyRequest): void {
  const accept = request.headers.accept;
  if (accept === undefined || accept.trim() === '') return;
  const ok = accept.split(',').some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (parameters.some((parameter) => parameter === 'q=0' || /^q=0(\.0*)?$/.test(parameter))) return false;
    return ['*/*', 'application/*', 'application/fhir+ndjson', 'application/ndjson'].includes(type ?? '');
  });
  if (!ok) throw new HttpProblem(406, 'not-acceptable', `cannot produce any of ${JSON.stringify(accept)}: export files are ${ndjsonType}`);
}
