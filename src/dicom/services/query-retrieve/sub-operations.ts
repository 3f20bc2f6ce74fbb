/**
 * Counting the C-STORE sub-operations of a C-GET or C-MOVE (PS3.4 C.4.2.1.5, C.4.3.1.4): the
 * counts travel in every pending response and in the final one, and the final status follows
 * from them. The Failed SOP Instance UID List (0008,0058) of a final response is bounded.
 */
import { tag, type CommandValue } from '../../dimse/command-set.ts';
import type { DimseResult } from '../../dimse/dimse-result.ts';
import { isCompleted, status } from '../../dimse/status.ts';
import { queryStatus } from './request.ts';

const maxListedFailures = 200;

export class SubOperationCounts {
  completed = 0;
  failed = 0;
  warning = 0;
  readonly failedUids: string[] = [];
  readonly #total: number;

  constructor(total: number) {
    this.#total = total;
  }

  get remaining(): number {
    return Math.max(this.#total - this.completed - this.failed - this.warning, 0);
  }

  /** Counts a C-STORE response status (PS3.4 B.2.3: Bxxx warnings; the instance was stored). */
  record(sopInstanceUid: string, storeStatus: number | undefined): void {
    if (storeStatus === status.success) this.completed++;
    else if (storeStatus !== undefined && isCompleted(storeStatus)) this.warning++;
    else this.fail(sopInstanceUid);
  }

  fail(sopInstanceUid: string): void {
    this.failed++;
    if (this.failedUids.length < maxListedFailures) this.failedUids.push(sopInstanceUid);
  }

  /** The counts as command elements; remaining only while pending or when cancelled (C.4.2.1.5). */
  elements(withRemaining: boolean): CommandValue[] {
    const elements: CommandValue[] = [
      { tag: tag.completedSuboperations, vr: 'US', value: Math.min(this.completed, 0xffff) },
      { tag: tag.failedSuboperations, vr: 'US', value: Math.min(this.failed, 0xffff) },
      { tag: tag.warningSuboperations, vr: 'US', value: Math.min(this.warning, 0xffff) },
    ];
    if (withRemaining) elements.push({ tag: tag.remainingSuboperations, vr: 'US', value: Math.min(this.remaining, 0xffff) });
    return elements;
  }

  /** Success, all failed (0xA702), or completed with failures or warnings (0xB000). */
  finalResult(): DimseResult {
    if (this.failed === 0 && this.warning === 0) return { status: status.success };
    if (this.completed === 0 && this.warning === 0) return { status: queryStatus.unableToPerformSuboperations, errorComment: 'Unable to perform sub-operations' };
    return { status: queryStatus.subOperationsWithFailures, errorComment: 'Sub-operations complete with failures or warnings' };
  }
}
