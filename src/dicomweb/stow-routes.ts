/**
 * STOW-RS (PS3.18 10.5): POST /studies and /studies/{uid} with a multipart/related body of
 * application/dicom parts, each a Part-10 file. Each part is stored through the imaging domain's
 * instance store, the same path as C-STORE: same index, same durability (file and folder fsynced,
 * index committed, then the answer), same duplicate rule. The body streams to disk part by part,
 * bounded by CG_DICOMWEB_MAX_STOW_SIZE in all and CG_DICOM_MAX_INSTANCE_SIZE per instance.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { beginInstance, refusingReceiver, type InstanceReceiver, type InstanceStoreContext, type StoreOutcome } from '../domain/imaging/instance-store.ts';
import { HttpProblem } from '../platform/http/http-problem.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { Services } from '../platform/services.ts';
import type { StorageLayout } from '../storage/dicom/layout.ts';
import type { StoreLimits } from '../storage/dicom/store-limits.ts';
import { boundaryOf, readMultipart } from './multipart-reader.ts';
import { DatasetIdentityReader } from './dataset-identity.ts';
import { maxMetaBytes, readPart10Meta, type Part10Meta } from './part10-meta.ts';
import { parseAccept, stowResponseType } from './media-types.ts';
import { nativeDicomXml } from './native-dicom-xml.ts';
import { dicomJsonArray, errorSchema } from './schemas.ts';
import { stowResponse, type StowItem } from './stow-response.ts';
import { checkedUid } from './uids.ts';

export interface StowStorage {
  layout: StorageLayout;
  storeLimits: StoreLimits;
  maxBodyBytes: number;
}

export function registerStowRoutes(app: FastifyInstance, services: Services, storage: StowStorage): void {
  // The body is read by the handler as it streams (never buffered by Fastify).
  app.addContentTypeParser('multipart/related', (_request, _payload, done) => done(null));
  const schema = (withStudy: boolean) => ({
    summary: withStudy ? 'Store instances of one study (STOW-RS)' : 'Store instances (STOW-RS)',
    description:
      'multipart/related; type="application/dicom": each part a Part-10 file. Answers the PS3.18 response dataset as application/dicom+json: ' +
      '200 all stored (or already stored with identical bytes), 202 some failed, 409 none stored, 503 none stored for lack of resources (retry). ' +
      `The body is bounded by CG_DICOMWEB_MAX_STOW_SIZE (413).`,
    tags: ['STOW-RS'],
    ...(withStudy ? { params: { type: 'object', properties: { study: { type: 'string', description: 'Study Instance UID' } } } } : {}),
    response: {
      200: { description: 'Every instance stored', ...dicomJsonArray.items },
      202: { description: 'Some instances stored, some failed', ...dicomJsonArray.items },
      400: errorSchema('Malformed multipart body or UID'),
      401: errorSchema('Missing, unknown or revoked API key'),
      409: { description: 'No instance stored', ...dicomJsonArray.items },
      413: errorSchema('Body larger than CG_DICOMWEB_MAX_STOW_SIZE'),
      415: errorSchema('Not multipart/related; type="application/dicom"'),
      503: { description: 'Nothing stored for lack of resources, or database unavailable: retry later', ...dicomJsonArray.items },
    },
  });
  const handler = async (request: FastifyRequest<{ Params: { study?: string } }>, reply: import('fastify').FastifyReply) => {
    const study = request.params.study === undefined ? undefined : checkedUid(request.params.study, 'Study Instance UID');
    const contentType = request.headers['content-type'] ?? '';
    const [type] = parseAccept(contentType);
    if (type?.type !== 'multipart/related' || (type.parameters.type ?? 'application/dicom').toLowerCase() !== 'application/dicom') {
      throw new HttpProblem(415, 'unsupported-media-type', 'STOW-RS takes multipart/related; type="application/dicom" (Part-10 files)');
    }
    const boundary = boundaryOf(contentType);
    const responseType = stowResponseType(request.headers.accept);
    const declared = Number(request.headers['content-length'] ?? Number.NaN);
    if (declared > storage.maxBodyBytes) throw new HttpProblem(413, 'too-large', `the body is over the ${storage.maxBodyBytes}-byte limit (CG_DICOMWEB_MAX_STOW_SIZE)`);
    const context: InstanceStoreContext = {
      site: siteContextOf(request),
      database: services.database,
      logger: request.log as unknown as InstanceStoreContext['logger'],
      layout: storage.layout,
      storeLimits: storage.storeLimits,
      callingAeTitle: '',
      remoteAddress: request.ip,
    };
    // Taken before the body is read: once the request stream has ended and been destroyed, Fastify's
    // request.protocol (read from its socket) is undefined on a kept-alive connection.
    const baseUrl = `${request.protocol}://${request.headers.host ?? 'localhost'}`;
    const items = await storeParts(context, bounded(request.raw, storage.maxBodyBytes), boundary, study);
    if (items.length === 0) throw new HttpProblem(400, 'invalid', 'the multipart body has no parts');
    const { status, body } = stowResponse(items, baseUrl, study);
    request.log.info({ reqId: request.id, parts: items.length, status }, 'STOW-RS request stored');
    // Nothing stored, every failure one that passes (disk, database): when to try again.
    if (status === 503) reply.header('retry-after', '30');
    return reply.code(status).type(responseType).send(responseType === 'application/dicom+xml' ? nativeDicomXml(body) : JSON.stringify(body));
  };
  app.post('/studies', { schema: schema(false) }, handler);
  app.post('/studies/:study', { schema: schema(true) }, handler);
}

async function* bounded(body: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  let received = 0;
  for await (const chunk of body) {
    received += chunk.length;
    if (received > maxBytes) throw new HttpProblem(413, 'too-large', `the body is over the ${maxBytes}-byte limit (CG_DICOMWEB_MAX_STOW_SIZE)`);
    yield chunk;
  }
}

interface PartInProgress {
  /** The part's bytes until storing begins: the meta group and the dataset's first bytes. */
  head: Buffer;
  meta?: Part10Meta;
  identity?: DatasetIdentityReader;
  receiver?: InstanceReceiver;
  item?: StowItem;
}

/**
 * One part at a time: its meta header and the dataset's own UIDs read, then its dataset streamed
 * into the instance store.
 */
async function storeParts(context: InstanceStoreContext, body: AsyncIterable<Buffer>, boundary: string, study: string | undefined): Promise<StowItem[]> {
  const items: StowItem[] = [];
  let part: PartInProgress | undefined;
  try {
    for await (const event of readMultipart(body, boundary)) {
      if (event.kind === 'part') {
        const type = parseAccept(event.headers['content-type'] ?? 'application/dicom')[0]?.type;
        part = { head: Buffer.alloc(0) };
        if (type !== 'application/dicom') {
          part.receiver = refusingReceiver({ kind: 'rejected', reason: 'invalid', comment: `a part of type ${type} is not application/dicom` });
          part.item = { sopClassUid: '', sopInstanceUid: '', outcome: { kind: 'rejected', reason: 'invalid', comment: '' } };
        }
      } else if (event.kind === 'data' && part) {
        if (part.receiver) {
          await part.receiver.write(event.chunk);
          continue;
        }
        part.head = Buffer.concat([part.head, event.chunk]);
        if (!part.meta) {
          const meta = readPart10Meta(part.head);
          if (meta === 'incomplete') {
            if (part.head.length > maxMetaBytes + 144) part.receiver = refuse(part, 'the part is not a DICOM Part-10 file');
            continue;
          }
          if ('error' in meta) {
            part.receiver = refuse(part, meta.error);
            continue;
          }
          part.meta = meta;
          part.identity = new DatasetIdentityReader(meta.transferSyntaxUid);
          part.identity.push(part.head.subarray(meta.datasetOffset));
        } else {
          part.identity!.push(event.chunk);
        }
        if (part.identity!.settled) part.receiver = await beginPart(context, part, study);
      } else if (event.kind === 'end-part' && part) {
        if (!part.receiver && part.meta) {
          part.identity!.end();
          part.receiver = await beginPart(context, part, study);
        }
        const receiver = part.receiver ?? refuse(part, 'the part is not a DICOM Part-10 file (too short)');
        const outcome: StoreOutcome = await receiver.finish();
        items.push({ ...part.item!, outcome });
        if (outcome.kind === 'rejected') context.logger.warn({ sopInstanceUid: part.item!.sopInstanceUid, reason: outcome.comment }, 'STOW-RS part refused');
        part = undefined;
      }
    }
  } catch (error) {
    await part?.receiver?.abandon();
    throw error;
  }
  return items;
}

/** Storing begins under the dataset's own UIDs, the meta's where the dataset's could not be read. */
async function beginPart(context: InstanceStoreContext, part: PartInProgress, study: string | undefined): Promise<InstanceReceiver> {
  const meta = part.meta!;
  const found = part.identity!.identity();
  const sopInstanceUid = found.sopInstanceUid ?? meta.sopInstanceUid;
  const sopClassUid = found.sopClassUid ?? meta.sopClassUid;
  if (sopInstanceUid !== meta.sopInstanceUid || sopClassUid !== meta.sopClassUid) {
    context.logger.warn(
      { sopInstanceUid, sopClassUid, mediaStorageSopInstanceUid: meta.sopInstanceUid, mediaStorageSopClassUid: meta.sopClassUid },
      "STOW-RS part: the file meta information names other UIDs than the dataset; stored under the dataset's, with a meta header of its own",
    );
  }
  part.item = { sopClassUid, sopInstanceUid, outcome: { kind: 'rejected', reason: 'invalid', comment: '' } };
  const receiver = await beginInstance(context, { sopClassUid, sopInstanceUid, transferSyntaxUid: meta.transferSyntaxUid, ...(study !== undefined ? { expectedStudyInstanceUid: study } : {}) });
  await receiver.write(part.head.subarray(meta.datasetOffset));
  return receiver;
}

function refuse(part: { item?: StowItem }, comment: string): InstanceReceiver {
  part.item = { sopClassUid: '', sopInstanceUid: '', outcome: { kind: 'rejected', reason: 'invalid', comment } };
  return refusingReceiver({ kind: 'rejected', reason: 'invalid', comment });
}
