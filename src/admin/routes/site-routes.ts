/** Sites: list, create (service admin), read and edit settings (name, AE title, policies). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createSite, findSiteById, listSites, updateSite } from '../../domain/sites/sites.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import { actorOf, canSeeSite, siteForArea } from '../access.ts';
import { sessionOf } from '../session/authenticate.ts';
import { errorResponses, siteSchema, timeZoneField, uuidParam } from './schemas.ts';
import { siteJson } from '../../domain/sites/site-json.ts';
import { registerSiteUsageRoute } from './site-usage-routes.ts';

const tags = ['sites'];
const siteParams = { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } } as const;
const siteFields = {
  name: { type: 'string', maxLength: 200, description: '1 to 200 characters, unique (case-insensitive)' },
  ae_title: { type: 'string', maxLength: 64, description: 'DICOM AE title (PS3.5 VR AE): 1 to 16 ASCII characters, no backslash; unique' },
  patient_put_creates: { type: 'boolean', description: 'FHIR PUT /Patient/{id} with a body without id creates a patient' },
  mllp_allow_any_ip: { type: 'boolean', description: 'integration clients may list "*" as an allowed IP (only a service admin changes it)' },
  time_zone: timeZoneField('the site\'s senders (an integration client\'s own zone overrides it)'),
  data_access_retention_days: { type: 'integer', minimum: 1, maximum: 36500, description: 'days the data access log keeps its rows (default 2190, six years; only a service admin changes it)' },
  message_body_retention_days: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 36500,
    description: 'days the message log keeps raw message bodies (the entry and its acknowledgement stay); null: for ever (the default)',
  },
  export_retention_hours: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 8760,
    description: 'hours the site\'s Bulk Data export files are kept after the export finished; null: the service-wide CG_EXPORT_RETENTION_HOURS (the default)',
  },
  refused_traffic_retention_days: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 3650,
    description: 'days the site\'s refused-traffic records are kept; null: the service default, 30 days',
  },
} as const;

interface SiteBody {
  name?: string;
  ae_title?: string;
  patient_put_creates?: boolean;
  mllp_allow_any_ip?: boolean;
  time_zone?: string | null;
  data_access_retention_days?: number;
  message_body_retention_days?: number | null;
  export_retention_hours?: number | null;
  refused_traffic_retention_days?: number | null;
}

/** The retention fields of a site body, as the domain's input (absent ones left out). */
function retentionInput(body: SiteBody) {
  return {
    ...(body.message_body_retention_days !== undefined ? { messageBodyRetentionDays: body.message_body_retention_days } : {}),
    ...(body.export_retention_hours !== undefined ? { exportRetentionHours: body.export_retention_hours } : {}),
    ...(body.refused_traffic_retention_days !== undefined ? { refusedTrafficRetentionDays: body.refused_traffic_retention_days } : {}),
  };
}

export async function registerSiteRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;
  registerSiteUsageRoute(app, services);

  app.get(
    '/api/sites',
    { schema: { summary: 'Sites the signed-in user may see', description: 'Every site for a service admin; the own site for everyone else.', tags, response: { 200: { type: 'object', properties: { sites: { type: 'array', items: siteSchema } } }, ...errorResponses } } },
    async (request) => {
      const { user } = sessionOf(request);
      if (user.role === 'service-admin') return { sites: (await listSites(database)).map(siteJson) };
      const own = user.siteId ? await findSiteById(database, user.siteId) : undefined;
      return { sites: own ? [siteJson(own)] : [] };
    },
  );

  app.post(
    '/api/sites',
    {
      schema: {
        summary: 'Create a site (service admin)',
        tags,
        body: { type: 'object', required: ['name', 'ae_title'], additionalProperties: false, properties: siteFields },
        response: { 201: siteSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Body: SiteBody & { name: string; ae_title: string } }>, reply) => {
      if (sessionOf(request).user.role !== 'service-admin') throw new HttpProblem(403, 'forbidden', 'only a service admin creates sites');
      const body = request.body;
      const site = await database.transaction((tx) =>
        createSite(
          tx,
          {
            name: body.name,
            aeTitle: body.ae_title,
            ...(body.patient_put_creates !== undefined ? { patientPutCreates: body.patient_put_creates } : {}),
            ...(body.mllp_allow_any_ip !== undefined ? { mllpAllowAnyIp: body.mllp_allow_any_ip } : {}),
            ...(body.time_zone !== undefined ? { timeZone: body.time_zone } : {}),
            ...(body.data_access_retention_days !== undefined ? { dataAccessRetentionDays: body.data_access_retention_days } : {}),
            ...retentionInput(body),
          },
          actorOf(request),
        ),
      );
      return reply.code(201).send(siteJson(site));
    },
  );

  app.get(
    '/api/sites/:siteId',
    { schema: { summary: 'One site', tags, params: siteParams, response: { 200: siteSchema, ...errorResponses } } },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const site = canSeeSite(request, request.params.siteId) ? await findSiteById(database, request.params.siteId) : undefined;
      if (!site) throw new HttpProblem(404, 'not-found', 'no such site');
      return siteJson(site);
    },
  );

  app.patch(
    '/api/sites/:siteId',
    {
      schema: {
        summary: 'Change a site\'s name, AE title, policies or time zone (service admin, or the site\'s admin)',
        tags,
        params: siteParams,
        body: { type: 'object', additionalProperties: false, properties: siteFields },
        response: { 200: siteSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Body: SiteBody }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'siteSettings');
      const body = request.body;
      // Letting a site's clients admit any address decides whose feeds it could receive: a
      // service-wide decision (issue 26 point 1). Resending the current value is harmless.
      if (body.mllp_allow_any_ip !== undefined && body.mllp_allow_any_ip !== site.policies.mllpAllowAnyIp && sessionOf(request).user.role !== 'service-admin') {
        throw new HttpProblem(403, 'forbidden', 'only a service administrator changes the "any IP" policy for integration clients');
      }
      // A site's own administrators must not be able to shorten the record of their own reads.
      if (body.data_access_retention_days !== undefined && body.data_access_retention_days !== site.dataAccessRetentionDays && sessionOf(request).user.role !== 'service-admin') {
        throw new HttpProblem(403, 'forbidden', 'only a service administrator changes how long the data access log is kept');
      }
      const updated = await database.transaction((tx) =>
        updateSite(
          tx,
          site.id,
          {
            ...(body.name !== undefined ? { name: body.name } : {}),
            ...(body.ae_title !== undefined ? { aeTitle: body.ae_title } : {}),
            ...(body.patient_put_creates !== undefined ? { patientPutCreates: body.patient_put_creates } : {}),
            ...(body.mllp_allow_any_ip !== undefined ? { mllpAllowAnyIp: body.mllp_allow_any_ip } : {}),
            ...(body.time_zone !== undefined ? { timeZone: body.time_zone } : {}),
            ...(body.data_access_retention_days !== undefined ? { dataAccessRetentionDays: body.data_access_retention_days } : {}),
            ...retentionInput(body),
          },
          actorOf(request),
        ),
      );
      return siteJson(updated);
    },
  );
}
