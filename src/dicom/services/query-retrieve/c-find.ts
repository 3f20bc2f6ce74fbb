/**
 * C-FIND SCP (PS3.4 C.4.1): one pending response (0xFF00) per match with its identifier, then a
 * final success; a C-CANCEL ends it with 0xFE00 (PS3.4 C.4.1.2.3). A query with more matches than
 * maxImagingQueryResults answers those, then "Refused: Out of Resources" (0xA700) saying so: a
 * silently cut list would look complete.
 */
import { isDomainError } from '../../../domain/errors.ts';
import { maxImagingQueryResults, queryImaging, type ImagingMatch, type QueryLevel } from '../../../domain/imaging/query/imaging-query.ts';
import type { AssociationContext } from '../../association/association-context.ts';
import type { AcceptedContext } from '../../association/negotiate.ts';
import type { OperationChannel } from '../../association/operation-channel.ts';
import type { CommandSet } from '../../dimse/command-set.ts';
import { status } from '../../dimse/status.ts';
import { writeIdentifier, type IdentifierKey } from './query-identifier.ts';
import { isResourceFailure } from '../../../domain/imaging/store-failure.ts';
import { isQueryRequest, matchingKeysOf, queryStatus, readQueryRequest, type QueryRequest } from './request.ts';
import { OperationResponder } from './responder.ts';

const levelRank: Record<QueryLevel, number> = { PATIENT: 0, STUDY: 1, SERIES: 2, IMAGE: 3 };

/** The level each answerable key belongs to, and how a match gives its value. */
const answers: Partial<Record<IdentifierKey, { level: QueryLevel; value: (match: ImagingMatch, aeTitle: string) => string | number | null | undefined }>> = {
  PatientName: { level: 'PATIENT', value: (m) => m.patientName },
  PatientID: { level: 'PATIENT', value: (m) => m.patientId },
  PatientBirthDate: { level: 'PATIENT', value: (m) => m.patientBirthDate },
  PatientSex: { level: 'PATIENT', value: (m) => m.patientSex },
  NumberOfPatientRelatedStudies: { level: 'PATIENT', value: (m) => m.numberOfPatientRelatedStudies },
  StudyInstanceUID: { level: 'STUDY', value: (m) => m.studyInstanceUid },
  StudyDate: { level: 'STUDY', value: (m) => m.studyDate },
  StudyTime: { level: 'STUDY', value: (m) => m.studyTime },
  AccessionNumber: { level: 'STUDY', value: (m) => m.accessionNumber },
  StudyDescription: { level: 'STUDY', value: (m) => m.studyDescription },
  ModalitiesInStudy: { level: 'STUDY', value: (m) => m.modalitiesInStudy?.join('\\') },
  StudyID: { level: 'STUDY', value: (m) => m.studyId },
  ReferringPhysicianName: { level: 'STUDY', value: (m) => m.referringPhysicianName },
  NumberOfStudyRelatedSeries: { level: 'STUDY', value: (m) => m.numberOfStudyRelatedSeries },
  NumberOfStudyRelatedInstances: { level: 'STUDY', value: (m) => m.numberOfStudyRelatedInstances },
  SeriesInstanceUID: { level: 'SERIES', value: (m) => m.seriesInstanceUid },
  Modality: { level: 'SERIES', value: (m) => m.modality },
  SeriesNumber: { level: 'SERIES', value: (m) => m.seriesNumber },
  SeriesDescription: { level: 'SERIES', value: (m) => m.seriesDescription },
  NumberOfSeriesRelatedInstances: { level: 'SERIES', value: (m) => m.numberOfSeriesRelatedInstances },
  SOPInstanceUID: { level: 'IMAGE', value: (m) => m.sopInstanceUid },
  SOPClassUID: { level: 'IMAGE', value: (m) => m.sopClassUid },
  InstanceNumber: { level: 'IMAGE', value: (m) => m.instanceNumber },
  AvailableTransferSyntaxUID: { level: 'IMAGE', value: (m) => m.transferSyntaxUid },
  RetrieveAETitle: { level: 'PATIENT', value: (_m, aeTitle) => aeTitle },
  InstanceAvailability: { level: 'PATIENT', value: () => 'ONLINE' },
};

/** PS3.4 C.4.1.1.3.2 / C.6.2.1: each level's unique key is always answered, with the level's above. */
const uniqueKeys: Record<QueryLevel, IdentifierKey> = { PATIENT: 'PatientID', STUDY: 'StudyInstanceUID', SERIES: 'SeriesInstanceUID', IMAGE: 'SOPInstanceUID' };

export async function runFind(association: AssociationContext, channel: OperationChannel, context: AcceptedContext, command: CommandSet, bytes: Buffer): Promise<void> {
  const responder = new OperationResponder(channel, context, command);
  const request = readQueryRequest(context, command, 'find', bytes);
  if (!isQueryRequest(request)) return responder.send(request);
  let result;
  try {
    result = await queryImaging(association.database, association.site, { level: request.level, keys: matchingKeysOf(request.identifier) });
  } catch (error) {
    if (isDomainError(error, 'invalid')) return responder.send({ status: queryStatus.identifierDoesNotMatchSopClass, errorComment: error.message.slice(0, 64) });
    association.logger.error({ err: error }, 'C-FIND failed');
    return responder.send(isResourceFailure(error) ? { status: queryStatus.outOfResources, errorComment: 'Out of resources: retry later' } : { status: queryStatus.unableToProcess, errorComment: 'Unable to process' });
  }
  const requested = answerKeys(request);
  for (const match of result.matches) {
    if (channel.signal.aborted) return responder.send({ status: queryStatus.cancel, errorComment: 'Cancelled' });
    const values = requested.map((keyword): [IdentifierKey, string] => {
      const value = keyword === 'QueryRetrieveLevel' ? request.level : answers[keyword]!.value(match, association.site.aeTitle);
      return [keyword, value === null || value === undefined ? '' : String(value)];
    });
    await responder.send({ status: queryStatus.pending }, writeIdentifier(values, context.transferSyntax));
  }
  if (channel.signal.aborted) return responder.send({ status: queryStatus.cancel, errorComment: 'Cancelled' });
  association.logger.info({ level: request.level, matches: result.matches.length, more: result.more }, 'C-FIND answered');
  if (result.more) return responder.send({ status: queryStatus.outOfResources, errorComment: `More than ${maxImagingQueryResults} matches: narrow the query` });
  return responder.send({ status: status.success });
}

/** The keys each answer carries: those asked for at or above the level, the unique keys, the level. */
function answerKeys(request: QueryRequest): IdentifierKey[] {
  const rank = levelRank[request.level];
  const keys = new Set<IdentifierKey>(['QueryRetrieveLevel']);
  for (const [level, key] of Object.entries(uniqueKeys) as [QueryLevel, IdentifierKey][]) {
    if (levelRank[level] <= rank && (level !== 'PATIENT' || request.patientRoot)) keys.add(key);
  }
  for (const keyword of request.identifier.keys()) {
    const answer = answers[keyword];
    if (answer && levelRank[answer.level] <= rank) keys.add(keyword);
  }
  return [...keys];
}
