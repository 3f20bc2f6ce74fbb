/**
 * Rendered resources (PS3.18 10.4.1.1.3) and thumbnails (10.4.1.1.4) as JPEG or PNG: an
 * instance's first frame or a named frame, and a thumbnail of a study, series or instance (a
 * study or series shows its representative instance, see representative-instance.ts). What cannot
 * be rendered (no pixel data, a syntax not decoded, over the size bounds, a corrupt file) is a
 * 406 saying why; a frame the instance does not have is a 404; busy renderers a 503.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { countRetrievable, retrievableInstances, type RetrievableInstance } from '../domain/imaging/query/retrievable.ts';
import { renderStoredInstance } from '../domain/imaging/rendering/render-stored-instance.ts';
import { CannotRenderError, type RenderedImage } from '../domain/imaging/rendering/render-options.ts';
import { representativeInstance } from '../domain/imaging/rendering/representative-instance.ts';
import { HttpProblem } from '../platform/http/http-problem.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { Services } from '../platform/services.ts';
import { auditDicomwebAccess } from './access-audit.ts';
import { renderOptionsOf } from './rendered-parameters.ts';
import { errorSchema } from './schemas.ts';
import { checkedUid } from './uids.ts';

type Params = { study: string; series?: string; instance?: string; frame?: string };
type Level = 'Study' | 'Series' | 'Instance';

const instancePath = '/studies/:study/series/:series/instances/:instance';

const renderedQuery = {
  type: 'object',
  properties: {
    window: { type: 'string', description: 'center,width[,function] — function linear (default), linear-exact or sigmoid; replaces the dataset\'s VOI' },
    viewport: { type: 'string', description: 'width,height: scaled to fit, aspect kept (at most 4096 each); thumbnails default to 256,256 without enlarging' },
    quality: { type: 'string', description: 'JPEG quality 1-100 (default 90)' },
    accept: { type: 'string', description: 'image/jpeg (default) or image/png, in place of the Accept header' },
    iccprofile: { type: 'string', description: 'no (the only value offered)' },
  },
  additionalProperties: true,
} as const;

const image = { content: { 'image/jpeg': { schema: { type: 'string', format: 'binary' } }, 'image/png': { schema: { type: 'string', format: 'binary' } } } };

function renderedResponses() {
  return {
    200: { description: 'The rendered image', ...image },
    400: errorSchema('A UID, frame number or query parameter is malformed'),
    401: errorSchema('Missing, unknown or revoked API key'),
    404: errorSchema("Not found in the key's site, or no such frame"),
    406: errorSchema('Accept names neither image/jpeg nor image/png, or the instance cannot be rendered (no pixel data, syntax not decoded, over the size bounds, corrupt)'),
    503: errorSchema('The renderers are busy or the database is unavailable: retry later'),
  };
}

const params = (level: Level, frame = false) => ({
  type: 'object',
  properties: {
    study: { type: 'string', description: 'Study Instance UID' },
    ...(level !== 'Study' ? { series: { type: 'string', description: 'Series Instance UID' } } : {}),
    ...(level === 'Instance' ? { instance: { type: 'string', description: 'SOP Instance UID' } } : {}),
    ...(frame ? { frame: { type: 'string', description: 'One frame number, from 1' } } : {}),
  },
});

export function registerRenderedRoutes(app: FastifyInstance, services: Services): void {
  const schema = (summary: string, description: string, level: Level, frame = false) => ({
    schema: { summary, description, tags: ['WADO-RS rendered'], params: params(level, frame), querystring: renderedQuery, response: renderedResponses() },
  });
  app.get<{ Params: Params }>(
    `${instancePath}/rendered`,
    schema('Rendered instance', 'The first frame as JPEG or PNG, windowed by the dataset\'s VOI unless `window` is given.', 'Instance'),
    async (request, reply) => sendRendering(services, request, reply, 'Instance', { frameNumber: 1, thumbnail: false }),
  );
  app.get<{ Params: Params }>(
    `${instancePath}/frames/:frame/rendered`,
    schema('Rendered frame', 'One frame as JPEG or PNG.', 'Instance', true),
    async (request, reply) => sendRendering(services, request, reply, 'Instance', { frameNumber: parseFrameNumber(request.params.frame ?? ''), thumbnail: false }),
  );
  for (const [level, path] of [['Study', '/studies/:study'], ['Series', '/studies/:study/series/:series'], ['Instance', instancePath]] as const) {
    app.get<{ Params: Params }>(
      `${path}/thumbnail`,
      schema(
        `Thumbnail of a${level === 'Instance' ? 'n instance' : ` ${level.toLowerCase()}`}`,
        level === 'Instance' ? 'The first frame, fitted to the viewport.' : `The middle instance of the ${level === 'Study' ? "study's first series with images" : 'series'}, fitted to the viewport.`,
        level,
      ),
      async (request, reply) => sendRendering(services, request, reply, level, { frameNumber: 1, thumbnail: true }),
    );
  }
  for (const path of ['/studies/:study/rendered', '/studies/:study/series/:series/rendered']) {
    app.get(path, { schema: { summary: 'Rendered study or series (not offered)', tags: ['WADO-RS rendered'], response: { 406: errorSchema('Not offered') } } }, async () => {
      throw new HttpProblem(406, 'not-acceptable', 'study and series renderings are not offered: ask for their /thumbnail, or render each instance');
    });
  }
}

function parseFrameNumber(text: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text)) throw new HttpProblem(400, 'invalid', 'a rendered frame is one frame number from 1');
  return Number(text);
}

async function sendRendering(
  services: Services,
  request: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
  level: Level,
  what: { frameNumber: number; thumbnail: boolean },
): Promise<FastifyReply> {
  const options = renderOptionsOf({ acceptHeader: request.headers.accept, query: request.query as Record<string, unknown>, ...what });
  const instance = await instanceToRender(services, request, level);
  let rendered: RenderedImage;
  try {
    rendered = await renderStoredInstance(services.config.dicomStorageDir, instance, options);
  } catch (error) {
    if (!(error instanceof CannotRenderError)) throw error;
    throw new HttpProblem(error.reason === 'no-such-frame' ? 404 : 406, error.reason === 'no-such-frame' ? 'not-found' : 'not-acceptable', `instance ${instance.sopInstanceUid} cannot be rendered: ${error.message}`);
  }
  await auditDicomwebAccess(services, request, { interaction: 'read', resourceType: 'Instance', resourceIds: [instance.sopInstanceUid], studyInstanceUids: [instance.studyInstanceUid] });
  // A stored instance never changes, but a study or series thumbnail follows what arrives.
  return reply
    .type(rendered.mediaType)
    .header('cache-control', `private, max-age=${level === 'Instance' ? 86400 : 300}`)
    .header('vary', 'Accept')
    .send(rendered.body);
}

async function instanceToRender(services: Services, request: FastifyRequest<{ Params: Params }>, level: Level): Promise<RetrievableInstance> {
  const site = siteContextOf(request);
  const studyInstanceUid = checkedUid(request.params.study, 'Study Instance UID');
  const seriesInstanceUid = level !== 'Study' ? checkedUid(request.params.series ?? '', 'Series Instance UID') : undefined;
  if (level === 'Instance') {
    const selection = { studyInstanceUids: studyInstanceUid, seriesInstanceUids: seriesInstanceUid!, sopInstanceUids: checkedUid(request.params.instance ?? '', 'SOP Instance UID') };
    for await (const instance of retrievableInstances(services.database, site, selection)) return instance;
    throw new HttpProblem(404, 'not-found', 'instance not found');
  }
  const chosen = await representativeInstance(services.database, site, { studyInstanceUid, ...(seriesInstanceUid ? { seriesInstanceUid } : {}) });
  if (chosen) return chosen;
  const held = await countRetrievable(services.database, site, { studyInstanceUids: studyInstanceUid, ...(seriesInstanceUid ? { seriesInstanceUids: seriesInstanceUid } : {}) });
  if (held > 0) throw new HttpProblem(406, 'not-acceptable', `the ${level.toLowerCase()} has no instance with images to show`);
  throw new HttpProblem(404, 'not-found', `${level.toLowerCase()} not found`);
}
