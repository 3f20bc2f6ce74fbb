/**
 * Modality Performed Procedure Step SCP over DIMSE (PS3.4 annex F): N-CREATE starts a step,
 * N-SET updates it. Both go through the same domain state machine as the HTTP intake.
 */
import { randomUUID } from 'node:crypto';
import { isDomainError } from '../../domain/errors.ts';
import { isLenientDicomUid } from '../../domain/imaging/dicom-values.ts';
import { isProcedureStepStatus, readProcedureStep, recordProcedureStep, type ProcedureStepInput } from '../../domain/imaging/procedure-steps.ts';
import type { AssociationContext } from '../association/association-context.ts';
import type { AcceptedContext } from '../association/negotiate.ts';
import { tag, type CommandSet } from '../dimse/command-set.ts';
import type { DimseResult } from '../dimse/dimse-result.ts';
import { status } from '../dimse/status.ts';
import { readSmallDataset } from '../../storage/dicom/dataset/small-dataset.ts';
import { mppsSopClass } from '../../storage/dicom/uids.ts';
import { isResourceFailure } from '../../domain/imaging/store-failure.ts';
import { readMppsAttributes, type MppsAttributes } from './mpps-attributes.ts';

type Mode = 'create' | 'update';

/** PS3.5 B.2: a UID the SCP assigns when N-CREATE leaves the instance UID to it (PS3.7 10.1.5.1.4). */
function newUid(): string {
  return `2.25.${BigInt(`0x${randomUUID().replace(/-/g, '')}`).toString()}`;
}

export async function handleMpps(
  association: AssociationContext,
  context: AcceptedContext,
  command: CommandSet,
  mode: Mode,
  dataset: Buffer | undefined,
): Promise<DimseResult> {
  const classUid = command.text(mode === 'create' ? tag.affectedSopClassUid : tag.requestedSopClassUid);
  if (context.service !== 'mpps' || classUid !== mppsSopClass) {
    return { status: status.sopClassNotSupported, errorComment: 'SOP class not negotiated on this context' };
  }
  let instanceUid = command.text(mode === 'create' ? tag.affectedSopInstanceUid : tag.requestedSopInstanceUid);
  if (mode === 'create' && !instanceUid) instanceUid = newUid();
  if (!instanceUid || !isLenientDicomUid(instanceUid)) {
    return { status: status.invalidAttributeValue, errorComment: 'SOP Instance UID is missing or invalid' };
  }
  const answer = (result: DimseResult): DimseResult => ({ ...result, affectedSopInstanceUid: instanceUid });
  if (!dataset) return answer({ status: status.missingAttribute, errorComment: 'No attribute list' });

  let attributes: MppsAttributes;
  try {
    attributes = readMppsAttributes(readSmallDataset(dataset, context.transferSyntax, mppsSopClass), association.site.timeZone);
  } catch {
    return answer({ status: status.processingFailure, errorComment: 'Attribute list cannot be parsed' });
  }
  if (attributes.problems.length > 0) return answer({ status: status.invalidAttributeValue, errorComment: attributes.problems[0]! });

  try {
    const result = await association.database.transaction(async (tx) => {
      let studyInstanceUid = attributes.studyInstanceUid;
      let stepStatus = attributes.status;
      if (mode === 'update') {
        // PS3.4 F.7.2.2: N-SET carries only what changes; the rest is the stored step's.
        const existing = await readProcedureStep(tx, association.site, instanceUid);
        if (!existing) return { status: status.noSuchSopInstance, errorComment: 'No such Performed Procedure Step' } as DimseResult;
        studyInstanceUid ??= existing.studyInstanceUid;
        stepStatus ??= existing.status;
      }
      if (stepStatus === undefined) return { status: status.missingAttribute, errorComment: 'Performed Procedure Step Status (0040,0252) missing' };
      if (!isProcedureStepStatus(stepStatus)) return { status: status.invalidAttributeValue, errorComment: 'Performed Procedure Step Status is invalid' };
      // PS3.4 F.7.2.1.2: a step is created IN PROGRESS.
      if (mode === 'create' && stepStatus !== 'IN PROGRESS') return { status: status.invalidAttributeValue, errorComment: 'N-CREATE status must be IN PROGRESS' };
      if (studyInstanceUid === undefined) {
        return { status: status.missingAttribute, errorComment: 'Scheduled Step Attributes Sequence > Study Instance UID missing' };
      }
      const input: ProcedureStepInput = { sopInstanceUid: instanceUid, studyInstanceUid, status: stepStatus };
      if (attributes.modality !== undefined) input.modality = attributes.modality;
      if (attributes.stationAeTitle !== undefined) input.stationAeTitle = attributes.stationAeTitle;
      if (attributes.startedAt !== undefined) input.startedAt = attributes.startedAt;
      if (attributes.endedAt !== undefined) input.endedAt = attributes.endedAt;
      if (attributes.procedureCode !== undefined) input.procedureCode = attributes.procedureCode;
      await recordProcedureStep(tx, association.site, input, { mode });
      association.logger.info({ mppsInstanceUid: instanceUid, status: stepStatus, studyInstanceUid }, mode === 'create' ? 'MPPS created' : 'MPPS updated');
      return { status: status.success } as DimseResult;
    });
    return answer(result);
  } catch (error) {
    return answer(mppsFailure(error, mode, association));
  }
}

/** Domain refusals to N-CREATE / N-SET statuses (PS3.7 C.5, PS3.4 F.7.2.1.2 and F.7.2.2.2). */
function mppsFailure(error: unknown, mode: Mode, association: AssociationContext): DimseResult {
  // PS3.7 C.5.13: Resource limitation, the N-service's "retry later".
  if (isResourceFailure(error)) return { status: status.resourceLimitation, errorComment: 'Resource limitation: retry later' };
  if (isDomainError(error, 'invalid')) return { status: status.invalidAttributeValue, errorComment: error.message };
  if (isDomainError(error, 'not-found')) return { status: status.noSuchSopInstance, errorComment: 'No such Performed Procedure Step' };
  if (isDomainError(error, 'conflict')) {
    return mode === 'create'
      ? { status: status.duplicateSopInstance, errorComment: 'Performed Procedure Step already exists' }
      : { status: status.processingFailure, errorComment: 'Performed Procedure Step may no longer be updated' };
  }
  association.logger.error({ err: error }, 'MPPS request failed');
  return { status: status.processingFailure, errorComment: 'Processing failure' };
}
