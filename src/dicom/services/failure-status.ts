import { isDomainError } from '../../domain/errors.ts';
import type { ValueFinding } from '../../domain/imaging/value-findings.ts';
import { isResourceFailure } from '../../domain/imaging/store-failure.ts';
import type { DimseResult } from '../dimse/dimse-result.ts';
import { status } from '../dimse/status.ts';

/**
 * A stored instance's answer: success, or warning 0xB000 when the index holds some of its values
 * otherwise than the dataset does or keeps a value over its VR's length (PS3.4 B.2.3, B.4.1.3; the
 * stored dataset itself is unchanged). The comment names the attributes; the log has the details.
 */
export function storedAnswer(findings: readonly ValueFinding[]): DimseResult {
  if (findings.length === 0) return { status: status.success };
  const attributes = [...new Set(findings.map((finding) => finding.attribute))];
  return { status: status.coercionOfDataElements, errorComment: listWithin(maxErrorComment, 'Non-conforming: ', attributes) };
}

/** PS3.7 C.4: Error Comment is an LO, 64 characters. */
const maxErrorComment = 64;

/** `prefix` and as many names as fit, then how many more there are ("A, B +3"). */
function listWithin(length: number, prefix: string, names: readonly string[]): string {
  let text = prefix;
  for (const [i, name] of names.entries()) {
    const rest = names.length - i - 1;
    const next = `${text}${i > 0 ? ', ' : ''}${name}`;
    if (next.length + (rest > 0 ? ` +${rest}`.length : 0) > length) return `${text} +${names.length - i}`;
    text = next;
  }
  return text;
}

/**
 * The one mapping of C-STORE failures to DIMSE statuses (PS3.4 B.2.3): temporary conditions
 * (database unavailable, disk full) are 0xA700 so the modality retries; a dataset the domain
 * refuses is 0xC000; anything unexpected is a processing failure, with no internals in the comment.
 */
export function storeFailure(error: unknown): DimseResult {
  if (isResourceFailure(error)) return { status: status.outOfResources, errorComment: 'Out of resources: retry later' };
  if (isDomainError(error, 'invalid')) return { status: status.cannotUnderstand, errorComment: error.message };
  return { status: status.processingFailure, errorComment: 'Processing failure' };
}
