/**
 * C-GET and C-MOVE SCP (PS3.4 C.4.2, C.4.3): the instances the identifier names are sent one by
 * one as C-STORE sub-operations, on the same association (C-GET) or on one this service opens to
 * the registered destination (C-MOVE). A pending response after each gives the counts; a C-CANCEL
 * stops before the next sub-operation (final 0xFE00). Files go exactly as stored, or an
 * uncompressed one converted to a little endian syntax when that is what the peer's context for
 * its SOP class takes (src/storage/dicom/converted-dataset.ts); a sub-operation with neither fails, counted.
 */
import { isDomainError } from '../../../domain/errors.ts';
import { findDicomDestination } from '../../../domain/imaging/dicom-destinations.ts';
import { countRetrievable, retrievableInstances, type RetrievableInstance, type RetrieveSelection } from '../../../domain/imaging/query/retrievable.ts';
import type { AssociationContext } from '../../association/association-context.ts';
import type { AcceptedContext } from '../../association/negotiate.ts';
import type { OperationChannel } from '../../association/operation-channel.ts';
import { tag, type CommandSet } from '../../dimse/command-set.ts';
import { AssociationFailed, OutgoingAssociation } from '../../scu/outgoing-association.ts';
import { isResourceFailure } from '../../../domain/imaging/store-failure.ts';
import { isQueryRequest, queryStatus, readQueryRequest, type QueryRequest } from './request.ts';
import { OperationResponder } from './responder.ts';
import { canBeSentAs, syntaxesToPropose } from '../../../storage/dicom/converted-dataset.ts';
import { openStoredDataset, sendStoreRequest, type StoredDataset } from './stored-dataset.ts';
import { SubOperationCounts } from './sub-operations.ts';

/** Where sub-operations go: answers each with the C-STORE response status, undefined if not sent. */
interface SubOperationTarget {
  store(instance: RetrievableInstance, dataset: StoredDataset, messageId: number): Promise<number | undefined>;
  close(): Promise<void>;
}

/** For the associations C-MOVE opens: connection, answer and each C-STORE response. */
const destinationTimeoutMs = 30_000;
/** The most distinct SOP class / transfer syntax pairs a C-MOVE proposes (PS3.8: 128 contexts). */
const maxMoveContexts = 128;

export async function runRetrieve(
  association: AssociationContext,
  channel: OperationChannel,
  context: AcceptedContext,
  command: CommandSet,
  bytes: Buffer,
  operation: 'get' | 'move',
): Promise<void> {
  const responder = new OperationResponder(channel, context, command);
  const request = readQueryRequest(context, command, operation, bytes);
  if (!isQueryRequest(request)) return responder.send(request);
  const selection = selectionOf(request);
  if (!selection) return responder.send({ status: queryStatus.identifierDoesNotMatchSopClass, errorComment: `No unique key for level ${request.level}` });

  let total: number;
  try {
    total = await countRetrievable(association.database, association.site, selection);
  } catch (error) {
    if (isDomainError(error, 'invalid')) return responder.send({ status: queryStatus.identifierDoesNotMatchSopClass, errorComment: error.message.slice(0, 64) });
    association.logger.error({ err: error }, 'retrieve failed');
    return responder.send({ status: isResourceFailure(error) ? queryStatus.outOfResources : queryStatus.unableToProcess, errorComment: 'Unable to process' });
  }
  const counts = new SubOperationCounts(total);
  let target: SubOperationTarget;
  if (operation === 'get') {
    target = sameAssociation(channel);
  } else {
    const destinationAe = command.text(tag.moveDestination) ?? '';
    const destination = destinationAe ? await findDicomDestination(association.database, association.site, destinationAe) : undefined;
    if (!destination) {
      association.logger.warn({ moveDestination: destinationAe }, 'C-MOVE refused: destination not registered for this site');
      return responder.send({ status: queryStatus.moveDestinationUnknown, errorComment: 'Move destination unknown' });
    }
    if (total === 0) return responder.send({ status: 0 }, undefined, counts.elements(false));
    try {
      target = await openDestination(association, command, selection, destination);
    } catch (error) {
      if (!(error instanceof AssociationFailed)) throw error;
      association.logger.warn({ moveDestination: destination.aeTitle, reason: error.message }, 'C-MOVE destination unreachable');
      counts.failed = total;
      return responder.send({ status: queryStatus.unableToPerformSuboperations, errorComment: 'Move destination unreachable' }, undefined, counts.elements(false));
    }
  }

  let messageId = 0;
  let cancelled = false;
  try {
    for await (const instance of retrievableInstances(association.database, association.site, selection)) {
      if (channel.signal.aborted) {
        cancelled = true;
        break;
      }
      const dataset = await openStoredDataset(association.layout.absolute(instance.storagePath));
      if (!dataset) {
        association.logger.error({ sopInstanceUid: instance.sopInstanceUid }, 'stored file missing or unreadable');
        counts.fail(instance.sopInstanceUid);
      } else {
        messageId = (messageId % 0xffff) + 1;
        counts.record(instance.sopInstanceUid, await target.store(instance, dataset, messageId));
      }
      await responder.send({ status: queryStatus.pending }, undefined, counts.elements(true));
    }
  } finally {
    await target.close();
  }
  association.logger.info({ operation, completed: counts.completed, failed: counts.failed, warning: counts.warning, cancelled }, `C-${operation.toUpperCase()} finished`);
  // The Failed SOP Instance UID List (0008,0058) is not sent as a data set of the final response:
  // dcmtk's getscu and movescu do not read one, and then find it in the way of their release.
  // The failures are counted, and logged with their UIDs.
  if (counts.failedUids.length > 0) association.logger.warn({ operation, failedSopInstanceUids: counts.failedUids }, 'sub-operations failed');
  if (cancelled) return responder.send({ status: queryStatus.cancel, errorComment: 'Cancelled' }, undefined, counts.elements(true));
  return responder.send(counts.finalResult(), undefined, counts.elements(false));
}

/** PS3.4 C.4.2.2.1: a retrieve names the unique keys of its level (and may name those above). */
function selectionOf(request: QueryRequest): RetrieveSelection | undefined {
  const study = request.identifier.get('StudyInstanceUID');
  const series = request.identifier.get('SeriesInstanceUID');
  const instances = request.identifier.get('SOPInstanceUID');
  const selection: RetrieveSelection = {};
  if (study) selection.studyInstanceUids = study;
  if (series && request.level !== 'STUDY') selection.seriesInstanceUids = series;
  if (instances && request.level === 'IMAGE') selection.sopInstanceUids = instances;
  const unique = { PATIENT: undefined, STUDY: study, SERIES: series, IMAGE: instances }[request.level];
  return unique ? selection : undefined;
}

/** C-GET: sub-operations on the requestor's own association, on a context it accepted the SCP role for. */
function sameAssociation(channel: OperationChannel): SubOperationTarget {
  return {
    async store(instance, dataset, messageId) {
      const candidates = [...channel.contexts.values()].filter((candidate) => candidate.requestorIsScp && candidate.abstractSyntax === instance.sopClassUid);
      // As stored if a context takes it so, else converted to a little endian syntax.
      const context =
        candidates.find((candidate) => candidate.transferSyntax === instance.transferSyntaxUid) ??
        candidates.find((candidate) => canBeSentAs(instance.transferSyntaxUid, candidate.transferSyntax));
      if (!context) return undefined;
      await sendStoreRequest(channel.write, channel.peerMaxPduLength, { contextId: context.id, messageId, sopClassUid: instance.sopClassUid, sopInstanceUid: instance.sopInstanceUid }, dataset, context.transferSyntax);
      return (await channel.nextStoreResponse()).uint16(tag.status);
    },
    close: async () => {},
  };
}

/** C-MOVE: one association to the destination, proposing each SOP class in the syntaxes stored (uncompressed ones, the little endian syntaxes after them). */
async function openDestination(
  association: AssociationContext,
  command: CommandSet,
  selection: RetrieveSelection,
  destination: { aeTitle: string; host: string; port: number },
): Promise<SubOperationTarget> {
  const pairs = new Map<string, { abstractSyntax: string; transferSyntax: string }>();
  for await (const instance of retrievableInstances(association.database, association.site, selection)) {
    const key = `${instance.sopClassUid} ${instance.transferSyntaxUid}`;
    if (!pairs.has(key) && pairs.size < maxMoveContexts) pairs.set(key, { abstractSyntax: instance.sopClassUid, transferSyntax: instance.transferSyntaxUid });
  }
  const contexts = [...pairs.values()].map((pair, index) => ({
    id: index * 2 + 1,
    abstractSyntax: pair.abstractSyntax,
    storedSyntax: pair.transferSyntax,
    transferSyntaxes: syntaxesToPropose(pair.transferSyntax),
  }));
  const outgoing = await OutgoingAssociation.open({
    host: destination.host,
    port: destination.port,
    callingAeTitle: association.site.aeTitle,
    calledAeTitle: destination.aeTitle,
    contexts,
    timeoutMs: destinationTimeoutMs,
    maxPduLength: 256 * 1024,
  });
  const originator = { aeTitle: association.callingAeTitle, messageId: command.uint16(tag.messageId) ?? 0 };
  return {
    async store(instance, dataset, messageId) {
      const context = contexts.find((candidate) => candidate.abstractSyntax === instance.sopClassUid && candidate.storedSyntax === instance.transferSyntaxUid);
      const accepted = context && outgoing.accepted.get(context.id);
      if (!context || !accepted || !canBeSentAs(instance.transferSyntaxUid, accepted)) return undefined;
      try {
        await sendStoreRequest((pdu) => outgoing.write(pdu), outgoing.peerMaxPduLength, { contextId: context.id, messageId, sopClassUid: instance.sopClassUid, sopInstanceUid: instance.sopInstanceUid, moveOriginator: originator }, dataset, accepted);
        return (await outgoing.nextCommand()).uint16(tag.status);
      } catch (error) {
        if (error instanceof AssociationFailed) return undefined;
        throw error;
      }
    },
    close: () => outgoing.release(),
  };
}

