/**
 * The STOW-RS response dataset (PS3.18 10.5.3, PS3.18 Table 10.5.3-1): Retrieve URL of the study,
 * Referenced SOP Sequence for what is stored, Failed SOP Sequence with a Failure Reason (PS3.4
 * B.2.3 status codes, as C-STORE would answer) for the rest.
 */
import { isDomainError } from '../domain/errors.ts';
import type { StoreOutcome } from '../domain/imaging/instance-store.ts';
import { isResourceFailure } from '../domain/imaging/store-failure.ts';
import type { DicomJson } from './dicom-json.ts';

export const failureReason = {
  processingFailure: 0x0110,
  duplicateSopInstance: 0x0111,
  outOfResources: 0xa700,
  doesNotMatch: 0xa900,
  cannotUnderstand: 0xc000,
} as const;
/** PS3.4 B.2.3 warning: coercion of data elements (values indexed otherwise than sent). */
const coercionWarning = 0xb000;

export interface StowItem {
  sopClassUid: string;
  sopInstanceUid: string;
  outcome: StoreOutcome;
}

export function failureReasonOf(outcome: StoreOutcome): number | undefined {
  switch (outcome.kind) {
    case 'stored':
    case 'duplicate-identical':
      return undefined;
    case 'duplicate-different':
      return failureReason.duplicateSopInstance;
    case 'rejected':
      return outcome.reason === 'invalid' ? failureReason.cannotUnderstand : failureReason.doesNotMatch;
    case 'oversized':
    case 'no-space':
      return failureReason.outOfResources;
    case 'failed':
      if (isResourceFailure(outcome.error)) return failureReason.outOfResources;
      return isDomainError(outcome.error, 'invalid') ? failureReason.cannotUnderstand : failureReason.processingFailure;
  }
}

const ui = (value: string) => ({ vr: 'UI', Value: [value] });

export function stowResponse(items: readonly StowItem[], baseUrl: string, study: string | undefined): { status: number; body: DicomJson } {
  const referenced: DicomJson[] = [];
  const failed: DicomJson[] = [];
  const studies = new Set<string>();
  for (const { sopClassUid, sopInstanceUid, outcome } of items) {
    const reason = failureReasonOf(outcome);
    if (reason === undefined && (outcome.kind === 'stored' || outcome.kind === 'duplicate-identical')) {
      studies.add(outcome.studyInstanceUid);
      referenced.push({
        '00081150': ui(sopClassUid),
        '00081155': ui(sopInstanceUid),
        '00081190': { vr: 'UR', Value: [`${baseUrl}/studies/${outcome.studyInstanceUid}/series/${outcome.seriesInstanceUid}/instances/${sopInstanceUid}`] },
        ...(outcome.findings.length > 0 ? { '00081196': { vr: 'US', Value: [coercionWarning] } } : {}),
      });
    } else {
      failed.push({
        ...(sopClassUid ? { '00081150': ui(sopClassUid) } : { '00081150': { vr: 'UI' } }),
        ...(sopInstanceUid ? { '00081155': ui(sopInstanceUid) } : { '00081155': { vr: 'UI' } }),
        '00081197': { vr: 'US', Value: [reason ?? failureReason.processingFailure] },
      });
    }
  }
  const retrieveStudy = study ?? (studies.size === 1 ? [...studies][0] : undefined);
  const body: DicomJson = {
    ...(retrieveStudy && referenced.length > 0 ? { '00081190': { vr: 'UR', Value: [`${baseUrl}/studies/${retrieveStudy}`] } } : {}),
    '00081198': failed.length > 0 ? { vr: 'SQ', Value: failed } : { vr: 'SQ' },
    '00081199': referenced.length > 0 ? { vr: 'SQ', Value: referenced } : { vr: 'SQ' },
  };
  // PS3.18 10.5.3: 200 all stored; 202 some stored, some failed; 409 none stored. When every
  // failure is one that passes (out of resources), 503 tells the sender to retry the whole.
  const allTransient = failed.length > 0 && failed.every((item) => (item['00081197']!.Value as number[])[0] === failureReason.outOfResources);
  const status = failed.length === 0 ? 200 : referenced.length > 0 ? 202 : allTransient ? 503 : 409;
  return { status, body };
}
