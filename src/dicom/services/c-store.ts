/**
 * C-STORE SCP (PS3.4 annex B, PS3.7 9.1.1). The dataset is stored by the imaging domain's
 * instance store (src/domain/imaging/instance-store.ts: durable file, then index, then answer);
 * this adapter checks the command and maps the store's outcome to DIMSE statuses: 0x0000, or
 * warning 0xB000 when some values are indexed otherwise than sent (failure-status.ts).
 */
import { beginInstance, type InstanceReceiver, type StoreOutcome } from '../../domain/imaging/instance-store.ts';
import type { DicomInstanceOutcome } from '../../platform/metrics/gateway-metrics.ts';
import type { AssociationContext } from '../association/association-context.ts';
import type { AcceptedContext } from '../association/negotiate.ts';
import { tag, type CommandSet } from '../dimse/command-set.ts';
import type { DimseResult } from '../dimse/dimse-result.ts';
import { status } from '../dimse/status.ts';
import { storedAnswer, storeFailure } from './failure-status.ts';

/** Receives one dataset; `finish` answers the request, `abandon` cleans up after an abort. */
export interface DatasetReceiver {
  write(fragment: Buffer): Promise<void>;
  finish(): Promise<DimseResult>;
  abandon(): Promise<void>;
}

/** Reads and drops a dataset that will not be stored, then gives a fixed answer. */
export function discardingReceiver(result: DimseResult): DatasetReceiver {
  return {
    write: async () => {},
    finish: async () => result,
    abandon: async () => {},
  };
}

export async function beginStore(association: AssociationContext, context: AcceptedContext, command: CommandSet): Promise<DatasetReceiver> {
  const sopClassUid = command.text(tag.affectedSopClassUid) ?? '';
  const sopInstanceUid = command.text(tag.affectedSopInstanceUid) ?? '';
  // PS3.7 9.1.1.1.2: the Affected SOP Class is the context's abstract syntax.
  if (context.service !== 'storage' || sopClassUid !== context.abstractSyntax) {
    return discardingReceiver({ status: status.sopClassNotSupported, errorComment: 'SOP class not negotiated on this context' });
  }
  const receiver: InstanceReceiver = await beginInstance(association, { sopInstanceUid, sopClassUid, transferSyntaxUid: context.transferSyntax });
  return {
    write: (fragment) => receiver.write(fragment),
    abandon: () => receiver.abandon(),
    finish: async () => {
      const outcome = await receiver.finish();
      association.metrics?.dicomInstance(metricOutcome[outcome.kind]);
      association.traffic?.count({ siteId: association.site.siteId, senderKind: 'ae-title', sender: association.callingAeTitle, surface: 'dicom', measure: 'instance', ok: metricOutcome[outcome.kind] === 'stored' || outcome.kind === 'duplicate-identical' });
      return answerOf(association, sopInstanceUid, outcome);
    },
  };
}

const metricOutcome: Record<StoreOutcome['kind'], DicomInstanceOutcome> = {
  stored: 'stored',
  'duplicate-identical': 'duplicate',
  'duplicate-different': 'refused',
  rejected: 'refused',
  oversized: 'refused',
  'no-space': 'refused',
  failed: 'failed',
};

/** The one mapping of the instance store's outcomes to C-STORE statuses (PS3.4 B.2.3). */
function answerOf(association: AssociationContext, sopInstanceUid: string, outcome: StoreOutcome): DimseResult {
  switch (outcome.kind) {
    case 'stored':
    case 'duplicate-identical':
      return storedAnswer(outcome.findings);
    case 'duplicate-different':
      return { status: status.duplicateSopInstance, errorComment: 'SOP Instance already stored with different content' };
    case 'rejected':
      return { status: outcome.reason === 'sop-class-mismatch' ? status.dataSetDoesNotMatchSopClass : status.cannotUnderstand, errorComment: outcome.comment };
    case 'oversized':
      return { status: status.outOfResources, errorComment: `Out of resources: data set over the ${outcome.limit}-byte limit` }; // LO: 64 characters
    case 'no-space':
      // PS3.4 B.2.3: 0xA7xx "Refused: Out of Resources" is the status C-STORE has for storage the
      // SCP cannot give; the comment says which limit, so an operator reading the modality's log knows.
      return { status: status.outOfResources, errorComment: 'Out of resources: storage is nearly full; retry later' };
    case 'failed': {
      const answer = storeFailure(outcome.error);
      if (answer.status === status.processingFailure) association.logger.error({ err: outcome.error, sopInstanceUid }, 'C-STORE failed');
      else association.logger.warn({ err: outcome.error, sopInstanceUid, status: answer.status }, 'C-STORE refused');
      return answer;
    }
  }
}
