/**
 * QIDO-RS (PS3.18 10.6): search for studies, series and instances of the key's site, answered
 * as application/dicom+json. Matching keys are given by keyword or tag (PatientName or 00100010)
 * and matched as C-FIND would (PS3.4 C.2.2.2: wildcards, date and time ranges, UID lists), by
 * the imaging domain's query module. limit (at most 1000), offset, includefield (every indexed
 * attribute is always returned, so it is accepted and needs nothing more) and fuzzymatching
 * (PatientName then matches any name that starts with each given word) are understood.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { matchingKeysByLevel, maxImagingQueryResults, queryImaging, queryLevels, type MatchingKey, type MatchingKeys, type QueryLevel } from '../domain/imaging/query/imaging-query.ts';
import { HttpProblem } from '../platform/http/http-problem.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { Services } from '../platform/services.ts';
import { auditDicomwebAccess } from './access-audit.ts';
import { acceptDatasetList } from './media-types.ts';
import { nativeDicomXmlParts } from './native-dicom-xml.ts';
import { matchToDicomJson } from './qido-json.ts';
import { dicomJsonArray, errorSchema } from './schemas.ts';
import { checkedUid } from './uids.ts';

/** PS3.6 tags of the matching keys, for queries that name attributes by tag. */
const keywordByTag: Record<string, MatchingKey> = {
  '00100020': 'PatientID',
  '00100010': 'PatientName',
  '00100030': 'PatientBirthDate',
  '00100040': 'PatientSex',
  '0020000D': 'StudyInstanceUID',
  '00080020': 'StudyDate',
  '00080030': 'StudyTime',
  '00080050': 'AccessionNumber',
  '00081030': 'StudyDescription',
  '00200010': 'StudyID',
  '00080090': 'ReferringPhysicianName',
  '00080061': 'ModalitiesInStudy',
  '0020000E': 'SeriesInstanceUID',
  '00080060': 'Modality',
  '00200011': 'SeriesNumber',
  '0008103E': 'SeriesDescription',
  '00080018': 'SOPInstanceUID',
  '00080016': 'SOPClassUID',
  '00200013': 'InstanceNumber',
};
const knownKeywords = new Set<string>(Object.values(keywordByTag));
const controlParameters = new Set(['limit', 'offset', 'includefield', 'fuzzymatching']);
/**
 * Keys whose value may be a list (UIDs, PS3.4 C.2.2.2.2; ModalitiesInStudy), which QIDO-RS
 * clients separate by commas (PS3.18 8.3.4.1) as well as by backslashes. Neither a UID nor a code
 * string can hold a comma, so a comma is always a separator here.
 */
const listKeys: ReadonlySet<MatchingKey> = new Set(['StudyInstanceUID', 'SeriesInstanceUID', 'SOPInstanceUID', 'SOPClassUID', 'ModalitiesInStudy']);

type Params = { study?: string; series?: string };

const searches: { level: QueryLevel; path: string; resource: 'Study' | 'Series' | 'Instance' }[] = [
  { level: 'STUDY', path: '/studies', resource: 'Study' },
  { level: 'SERIES', path: '/series', resource: 'Series' },
  { level: 'SERIES', path: '/studies/:study/series', resource: 'Series' },
  { level: 'IMAGE', path: '/instances', resource: 'Instance' },
  { level: 'IMAGE', path: '/studies/:study/instances', resource: 'Instance' },
  { level: 'IMAGE', path: '/studies/:study/series/:series/instances', resource: 'Instance' },
];

export function registerQidoRoutes(app: FastifyInstance, services: Services): void {
  for (const { level, path, resource } of searches) {
    app.get<{ Params: Params; Querystring: Record<string, string | string[]> }>(
      path,
      {
        schema: {
          summary: `Search for ${resource === 'Study' ? 'studies' : resource === 'Series' ? 'series' : 'instances'} (QIDO-RS)`,
          description:
            'Matching keys by keyword or tag: PatientID, PatientName, PatientBirthDate, PatientSex, StudyInstanceUID, StudyDate, StudyTime, ' +
            'AccessionNumber, StudyDescription, ModalitiesInStudy, StudyID, ReferringPhysicianName, SeriesInstanceUID, Modality, SeriesNumber, SeriesDescription, SOPInstanceUID, ' +
            `SOPClassUID, InstanceNumber. limit (at most ${maxImagingQueryResults}), offset, includefield, fuzzymatching. An empty array when nothing matches.`,
          tags: ['QIDO-RS'],
          querystring: { type: 'object', additionalProperties: true },
          response: {
            200: { description: 'The matches', ...dicomJsonArray },
            400: errorSchema('A key or value is not understood'),
            401: errorSchema('Missing, unknown or revoked API key'),
            406: errorSchema('The Accept header does not accept application/dicom+json'),
            503: errorSchema('Database unavailable: retry later'),
          },
        },
        // Query values are DICOM strings: no coercion, repeated keys are refused below.
        validatorCompiler: () => () => true,
      },
      async (request, reply) => search(services, request, reply, level, resource),
    );
  }
}

async function search(
  services: Services,
  request: FastifyRequest<{ Params: Params; Querystring: Record<string, string | string[]> }>,
  reply: FastifyReply,
  level: QueryLevel,
  resource: 'Study' | 'Series' | 'Instance',
): Promise<FastifyReply> {
  const mediaType = acceptDatasetList(request.headers.accept);
  const keys: MatchingKeys = {};
  let limit: number | undefined;
  let offset: number | undefined;
  let fuzzy = false;
  for (const [name, raw] of Object.entries(request.query)) {
    if (Array.isArray(raw) && name !== 'includefield') throw new HttpProblem(400, 'invalid', `${name} is given more than once`);
    const text = Array.isArray(raw) ? raw.join(',') : raw;
    if (name === 'limit' || name === 'offset') {
      if (!/^[0-9]{1,9}$/.test(text)) throw new HttpProblem(400, 'invalid', `${name} must be a whole number`);
      if (name === 'limit') limit = Number(text);
      else offset = Number(text);
      continue;
    }
    if (name === 'fuzzymatching') {
      if (text !== 'true' && text !== 'false') throw new HttpProblem(400, 'invalid', 'fuzzymatching must be true or false');
      fuzzy = text === 'true';
      continue;
    }
    if (controlParameters.has(name)) continue;
    const keyword = keywordByTag[name.toUpperCase()] ?? (knownKeywords.has(name) ? (name as MatchingKey) : undefined);
    // PS3.4 C.2.2.2.3: an empty value (or `*`) is universal matching, which restricts nothing, so
    // any attribute may be given so (`ReferringPhysicianName=`, `StudyID=`: required keys of the
    // study level that this index does not hold, and that C-FIND answers empty too).
    if (!keyword && /^\**$/.test(text)) continue;
    if (!keyword) throw new HttpProblem(400, 'invalid', `${name} is not a matching key this origin supports`);
    keys[keyword] = listKeys.has(keyword) ? text.replace(/,/g, '\\') : text;
  }
  if (request.params.study !== undefined) keys.StudyInstanceUID = checkedUid(request.params.study, 'Study Instance UID');
  if (request.params.series !== undefined) keys.SeriesInstanceUID = checkedUid(request.params.series, 'Series Instance UID');
  if (fuzzy && keys.PatientName) keys.PatientName = fuzzyName(keys.PatientName);
  // The query applies the keys of its level and above only (and Modality on studies, as
  // ModalitiesInStudy): a lower one would be ignored, and the answer claim matches it never checked.
  if (level === 'STUDY' && keys.Modality !== undefined) keys.Modality = keys.Modality.replace(/,/g, '\\');
  const levelKeys = new Set<string>([...queryLevels.slice(0, queryLevels.indexOf(level) + 1).flatMap((at) => matchingKeysByLevel[at]), ...(level === 'STUDY' ? ['Modality'] : [])]);
  for (const keyword of Object.keys(keys)) {
    if (!levelKeys.has(keyword)) throw new HttpProblem(400, 'invalid', `${keyword} is not a matching key of ${resource === 'Study' ? 'studies' : resource === 'Series' ? 'series' : 'instances'}`);
  }
  const site = siteContextOf(request);
  const result = await queryImaging(services.database, site, { level, keys, ...(limit !== undefined ? { limit } : {}), ...(offset !== undefined ? { offset } : {}) });
  const baseUrl = `${request.protocol}://${request.headers.host ?? 'localhost'}`;
  const uids = result.matches.map((match) => (level === 'STUDY' ? match.studyInstanceUid : level === 'SERIES' ? match.seriesInstanceUid : match.sopInstanceUid) ?? '');
  await auditDicomwebAccess(services, request, {
    interaction: 'search',
    resourceType: resource,
    resourceIds: uids,
    studyInstanceUids: result.matches.map((match) => match.studyInstanceUid ?? ''),
    query: request.url.split('?', 2)[1] ?? '',
  });
  // PS3.18 10.6.3.2: more matches than returned is said with a Warning header.
  if (result.more) reply.header('warning', '299 clinical-gateway: "There are additional results that can be requested"');
  const datasets = result.matches.map((match) => matchToDicomJson(level, match, baseUrl));
  if (mediaType === 'application/dicom+xml') {
    const { contentType, body } = nativeDicomXmlParts(datasets);
    return reply.type(contentType).send(body);
  }
  return reply.type(mediaType).send(JSON.stringify(datasets));
}

/** Cheap fuzzy matching: each word of the name matches as a prefix (case is already ignored). */
function fuzzyName(value: string): string {
  if (/[*?]/.test(value)) return value;
  return `${value.split(/[\s^]+/).filter(Boolean).join('*')}*`;
}
