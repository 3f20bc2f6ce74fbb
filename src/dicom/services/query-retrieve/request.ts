/**
 * The part of a C-FIND, C-GET or C-MOVE request every operation checks first: the SOP class on its
 * context, the identifier and its Query/Retrieve Level (PS3.4 C.4.1.1.3, C.6.1.1, C.6.2.1).
 */
import { matchingKeysByLevel, queryLevels, type MatchingKeys, type QueryLevel } from '../../../domain/imaging/query/imaging-query.ts';
import type { AcceptedContext } from '../../association/negotiate.ts';
import { tag, type CommandSet } from '../../dimse/command-set.ts';
import type { DimseResult } from '../../dimse/dimse-result.ts';
import { status } from '../../dimse/status.ts';
import { IdentifierError, readIdentifier, type Identifier } from './query-identifier.ts';
import { queryRetrieveModel, type QueryRetrieveOperation } from '../../../storage/dicom/uids.ts';

/** PS3.4 C.4.1.1.4 and C.4.2.1.5: the failure statuses of the query/retrieve operations. */
export const queryStatus = {
  pending: 0xff00,
  cancel: 0xfe00,
  outOfResources: 0xa700,
  unableToPerformSuboperations: 0xa702,
  moveDestinationUnknown: 0xa801,
  identifierDoesNotMatchSopClass: 0xa900,
  unableToProcess: 0xc000,
  subOperationsWithFailures: 0xb000,
} as const;

export interface QueryRequest {
  level: QueryLevel;
  identifier: Identifier;
  patientRoot: boolean;
}

const levelsByRoot = { patient: ['PATIENT', 'STUDY', 'SERIES', 'IMAGE'], study: ['STUDY', 'SERIES', 'IMAGE'] } as const;

/** The request, or the status refusing it. */
export function readQueryRequest(context: AcceptedContext, command: CommandSet, operation: QueryRetrieveOperation, bytes: Buffer): QueryRequest | DimseResult {
  const classUid = command.text(tag.affectedSopClassUid);
  const model = classUid === context.abstractSyntax ? queryRetrieveModel(classUid) : undefined;
  if (!model || model.operation !== operation) return { status: status.sopClassNotSupported, errorComment: 'SOP class not negotiated on this context' };
  let identifier: Identifier;
  try {
    identifier = readIdentifier(bytes, context.transferSyntax);
  } catch (error) {
    if (error instanceof IdentifierError) return { status: queryStatus.unableToProcess, errorComment: 'Identifier cannot be parsed' };
    throw error;
  }
  const level = identifier.get('QueryRetrieveLevel');
  if (!level) return { status: queryStatus.identifierDoesNotMatchSopClass, errorComment: 'QueryRetrieveLevel (0008,0052) missing' };
  const allowed: readonly string[] = model.patientRoot ? levelsByRoot.patient : levelsByRoot.study;
  if (!allowed.includes(level) || !(queryLevels as readonly string[]).includes(level)) {
    return { status: queryStatus.identifierDoesNotMatchSopClass, errorComment: `QueryRetrieveLevel ${level.slice(0, 16)} not supported` };
  }
  return { level: level as QueryLevel, identifier, patientRoot: model.patientRoot };
}

/** The matching keys of the identifier with a value (an empty one matches everything anyway). */
export function matchingKeysOf(identifier: Identifier): MatchingKeys {
  const keys: MatchingKeys = {};
  for (const level of queryLevels) {
    for (const keyword of matchingKeysByLevel[level]) {
      const value = identifier.get(keyword);
      if (value) keys[keyword] = value;
    }
  }
  return keys;
}

export function isQueryRequest(value: QueryRequest | DimseResult): value is QueryRequest {
  return 'level' in value;
}
