/**
 * WADO-RS (PS3.18 10.4): studies, series and instances as multipart/related application/dicom,
 * each part the stored Part-10 file byte for byte (the listener writes a Part-10 header of its
 * own before the dataset exactly as received; that file is what is sent), or, when the Accept
 * names Explicit or Implicit VR Little Endian, an uncompressed instance stored otherwise converted
 * to it; their metadata as DICOM JSON; frames. Rendered resources and thumbnails:
 * rendered-routes.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { retrievableInstances, type RetrievableInstance, type RetrieveSelection } from '../domain/imaging/query/retrievable.ts';
import { HttpProblem } from '../platform/http/http-problem.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { Services } from '../platform/services.ts';
import { canBeSentAs, convertedPart10File } from '../storage/dicom/converted-dataset.ts';
import type { StoredFileCache } from '../storage/dicom/stored-file-cache.ts';
import { auditDicomwebAccess } from './access-audit.ts';
import { readInstanceMetadata, type DicomJson } from './dicom-json.ts';
import { acceptFrames } from './frame-accept.ts';
import { parseFrameList, readFrames } from './frames.ts';
import { acceptDatasetList, acceptMultipart } from './media-types.ts';
import { nativeDicomXmlParts } from './native-dicom-xml.ts';
import { multipartContentType, multipartStream, newBoundary, type OutgoingPart } from './multipart-writer.ts';
import { wadoResponses } from './schemas.ts';
import { storedFilePath } from './stored-file.ts';
import { sendStoredParts, type StoredPart } from './stored-parts-sender.ts';
import { checkedUid } from './uids.ts';

type Params = { study: string; series?: string; instance?: string };
type Level = 'Study' | 'Series' | 'Instance';

const levels: { level: Level; path: string }[] = [
  { level: 'Study', path: '/studies/:study' },
  { level: 'Series', path: '/studies/:study/series/:series' },
  { level: 'Instance', path: '/studies/:study/series/:series/instances/:instance' },
];

const uidParams = (level: Level) => ({
  type: 'object',
  properties: {
    study: { type: 'string', description: 'Study Instance UID' },
    ...(level !== 'Study' ? { series: { type: 'string', description: 'Series Instance UID' } } : {}),
    ...(level === 'Instance' ? { instance: { type: 'string', description: 'SOP Instance UID' } } : {}),
  },
});

/** `fileCache`: the process's recently retrieved instances (src/storage/dicom/stored-file-cache.ts). */
export function registerWadoRoutes(app: FastifyInstance, services: Services, fileCache?: StoredFileCache): void {
  for (const { level, path } of levels) {
    app.get<{ Params: Params }>(
      path,
      {
        schema: {
          summary: `Retrieve a${level === 'Instance' ? 'n instance' : ` ${level.toLowerCase()}`} (WADO-RS)`,
          description:
            'multipart/related; type="application/dicom": each part a Part-10 file exactly as stored, in the transfer syntax it was received in ' +
            '(Accept transfer-syntax "*" or the stored one); an uncompressed instance is converted when 1.2.840.10008.1.2.1 or 1.2.840.10008.1.2 is asked; ' +
            'compressed ones are never transcoded.',
          tags: ['WADO-RS'],
          params: uidParams(level),
          response: wadoResponses('multipart/related; type="application/dicom"'),
        },
      },
      async (request, reply) => retrieveInstances(services, request, reply, level, fileCache),
    );
    app.get<{ Params: Params }>(
      `${path}/metadata`,
      {
        schema: {
          summary: `Metadata of a${level === 'Instance' ? 'n instance' : ` ${level.toLowerCase()}`} (WADO-RS)`,
          description: 'application/dicom+json: an array with one DICOM JSON dataset per instance; Pixel Data and binary values over 64 KiB are left out.',
          tags: ['WADO-RS'],
          params: uidParams(level),
          response: wadoResponses('application/dicom+json'),
        },
      },
      async (request, reply) => retrieveMetadata(services, request, reply, level),
    );
  }
  app.get<{ Params: Params & { frames: string } }>(
    '/studies/:study/series/:series/instances/:instance/frames/:frames',
    {
      schema: {
        summary: 'Frames of an instance (WADO-RS)',
        description:
          'multipart/related: uncompressed frames as application/octet-stream, compressed ones in the stored transfer syntax\'s media type ' +
          '(image/jpeg, image/jls, image/jp2, image/jphc, image/dicom-rle), or as application/octet-stream when asked with transfer-syntax=* (or the stored one), ' +
          'the syntax named on each part. Never transcoded. Instances over 64 MiB: 406.',
        tags: ['WADO-RS'],
        params: { ...uidParams('Instance'), properties: { ...uidParams('Instance').properties, frames: { type: 'string', description: 'Comma-separated frame numbers from 1' } } },
        response: wadoResponses('multipart/related; type="application/octet-stream"'),
      },
    },
    async (request, reply) => {
      const frameNumbers = parseFrameList(request.params.frames);
      const [instance] = await selectedInstances(services, request, 'Instance', 1);
      const { mediaType, frames } = await readFrames(storedFilePath(services.config, instance!.storagePath), instance!.sizeBytes, instance!.transferSyntaxUid, frameNumbers);
      const form = acceptFrames(request.headers.accept, mediaType, instance!.transferSyntaxUid);
      await auditSelection(services, request, 'Instance', selectionOf(request, 'Instance'));
      const boundary = newBoundary();
      const parts = (async function* (): AsyncGenerator<OutgoingPart> {
        for (const frame of frames) yield { contentType: form.partContentType, body: () => [frame] };
      })();
      return reply.type(multipartContentType(form.mediaType, boundary)).send(multipartStream(boundary, parts));
    },
  );
}

function selectionOf(request: FastifyRequest<{ Params: Params }>, level: Level): RetrieveSelection {
  const { study, series, instance } = request.params;
  return {
    studyInstanceUids: checkedUid(study, 'Study Instance UID'),
    ...(level !== 'Study' ? { seriesInstanceUids: checkedUid(series ?? '', 'Series Instance UID') } : {}),
    ...(level === 'Instance' ? { sopInstanceUids: checkedUid(instance ?? '', 'SOP Instance UID') } : {}),
  };
}

/** The first `max` instances of the selection, or 404 when it names none of the key's site. */
async function selectedInstances(services: Services, request: FastifyRequest<{ Params: Params }>, level: Level, max: number): Promise<RetrievableInstance[]> {
  const found: RetrievableInstance[] = [];
  for await (const instance of retrievableInstances(services.database, siteContextOf(request), selectionOf(request, level))) {
    found.push(instance);
    if (found.length >= max) break;
  }
  if (found.length === 0) throw new HttpProblem(404, 'not-found', `${level.toLowerCase()} not found`);
  return found;
}

async function retrieveInstances(services: Services, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, level: Level, fileCache: StoredFileCache | undefined): Promise<FastifyReply> {
  const { transferSyntax } = acceptMultipart(request.headers.accept, ['application/dicom'], 'multipart/related; type="application/dicom"');
  const site = siteContextOf(request);
  const selection = selectionOf(request, level);
  // The first instance is read before answering: none is a 404, and no separate count is needed.
  const instances = retrievableInstances(services.database, site, selection);
  const first = await instances.next();
  if (first.done) throw new HttpProblem(404, 'not-found', `${level.toLowerCase()} not found`);
  if (transferSyntax !== '*') {
    // Every instance must be stored in the asked syntax, or be an uncompressed one that converts to
    // it (Explicit or Implicit VR Little Endian: PS3.18 8.7.3.5.2 makes the first the default).
    for await (const instance of retrievableInstances(services.database, site, selection)) {
      if (!canBeSentAs(instance.transferSyntaxUid, transferSyntax)) {
        throw new HttpProblem(406, 'not-acceptable', `instance ${instance.sopInstanceUid} is stored in transfer syntax ${instance.transferSyntaxUid} and is not transcoded to ${transferSyntax}: ask for transfer-syntax=* or that one`);
      }
    }
  }
  await auditSelection(services, request, level, selection);
  const boundary = newBoundary();
  // Written to the socket here rather than through reply.send(stream): see stored-parts-sender.ts.
  reply.hijack();
  const response = reply.raw;
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
  response.writeHead(200, { 'content-type': multipartContentType('application/dicom', boundary) });
  if (request.method === 'HEAD') {
    response.end();
    return reply;
  }
  const { config } = services;
  const parts = (async function* (): AsyncGenerator<StoredPart> {
    for (let next: IteratorResult<RetrievableInstance> = first; !next.done; next = await instances.next()) {
      const instance = next.value;
      const path = storedFilePath(config, instance.storagePath);
      const sentAs = transferSyntax === '*' ? instance.transferSyntaxUid : transferSyntax;
      yield {
        headers:
          `Content-Type: application/dicom; transfer-syntax=${sentAs}\r\n` +
          `Content-Location: /studies/${instance.studyInstanceUid}/series/${instance.seriesInstanceUid}/instances/${instance.sopInstanceUid}\r\n`,
        path,
        sizeBytes: instance.sizeBytes,
        instanceId: instance.id,
        ...(sentAs !== instance.transferSyntaxUid ? { converted: convertedPart10File(path, instance, instance.transferSyntaxUid, sentAs) } : {}),
      };
    }
  })();
  const failed = await sendStoredParts(response, boundary, parts, fileCache);
  if (failed) request.log.error({ err: failed, reqId: request.id }, 'WADO-RS answer ended before it was complete');
  return reply;
}

async function retrieveMetadata(services: Services, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, level: Level): Promise<FastifyReply> {
  const mediaType = acceptDatasetList(request.headers.accept);
  const site = siteContextOf(request);
  const selection = selectionOf(request, level);
  const datasets: DicomJson[] = [];
  let found = 0;
  for await (const instance of retrievableInstances(services.database, site, selection)) {
    const metadata = await readInstanceMetadata(storedFilePath(services.config, instance.storagePath));
    if (metadata) datasets.push(metadata);
    found++;
  }
  if (found === 0) throw new HttpProblem(404, 'not-found', `${level.toLowerCase()} not found`);
  await auditSelection(services, request, level, selection);
  if (mediaType === 'application/dicom+xml') {
    const { contentType, body } = nativeDicomXmlParts(datasets);
    return reply.type(contentType).send(body);
  }
  return reply.type(mediaType).send(JSON.stringify(datasets));
}

async function auditSelection(services: Services, request: FastifyRequest<{ Params: Params }>, level: Level, selection: RetrieveSelection): Promise<void> {
  const uid = level === 'Study' ? selection.studyInstanceUids! : level === 'Series' ? selection.seriesInstanceUids! : selection.sopInstanceUids!;
  await auditDicomwebAccess(services, request, { interaction: 'read', resourceType: level, resourceIds: [uid], studyInstanceUids: [selection.studyInstanceUids!] });
}
