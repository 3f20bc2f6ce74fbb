/**
 * Stores one received DICOM instance, whatever surface it came in on (C-STORE on the DICOM
 * listener, STOW-RS on the DICOMweb origin). The dataset streams to a temporary Part-10 file;
 * once complete it is checked, linked into place and indexed in one transaction, which commits
 * only after the file and its folder entry are fsynced (DESIGN.md section 2: acknowledge only
 * what is durable). The outcome is neutral: each surface maps it to its own statuses.
 */
import type { Logger } from 'pino';
import type { Database, TransactionAhead } from '../../storage/database.ts';
import { isTransientDatabaseError } from '../../storage/errors.ts';
import { IncomingFile } from '../../storage/dicom/incoming-file.ts';
import type { StorageLayout } from '../../storage/dicom/layout.ts';
import type { StoreLimits } from '../../storage/dicom/store-limits.ts';
import type { SiteContext } from '../site-context.ts';
import { isLenientDicomUid } from './dicom-values.ts';
import { indexCommits } from './index-commits.ts';
import { claimInstance } from './index-instance.ts';
import type { ReceivedInstance } from './received-instance.ts';
import { lockStoredPath } from './stored-path-lock.ts';
import type { ValueFinding } from './value-findings.ts';

/** What storing needs from the surface that received the instance. */
export interface InstanceStoreContext {
  site: SiteContext;
  database: Database;
  logger: Logger;
  layout: StorageLayout;
  storeLimits: StoreLimits;
  /** The calling AE title (DIMSE), or blank (HTTP). */
  callingAeTitle: string;
  remoteAddress: string;
}

/** The instance as announced before its dataset arrives. */
export interface AnnouncedInstance {
  sopInstanceUid: string;
  /** The SOP class the sender announced, when it did (C-STORE's Affected SOP Class). */
  sopClassUid: string;
  transferSyntaxUid: string;
  /** The study the instance must belong to (STOW-RS to /studies/{uid}); refused otherwise. */
  expectedStudyInstanceUid?: string;
}

/** `invalid`: malformed, or UIDs missing or inconsistent; the others name the mismatch. */
export type RejectReason = 'invalid' | 'sop-class-mismatch' | 'study-mismatch';

export type StoreOutcome =
  | { kind: 'stored' | 'duplicate-identical'; findings: ValueFinding[]; studyInstanceUid: string; seriesInstanceUid: string; sopClassUid: string }
  | { kind: 'duplicate-different' }
  | { kind: 'rejected'; reason: RejectReason; comment: string }
  | { kind: 'oversized'; limit: number }
  /** Free disk space below the floor: retry later. */
  | { kind: 'no-space' }
  /** Anything thrown: transient (database, disk) or not; the surface's failure mapper decides. */
  | { kind: 'failed'; error: unknown };

/** Receives one dataset; `finish` stores it, `abandon` cleans up after an abort. */
export interface InstanceReceiver {
  write(fragment: Buffer): Promise<void>;
  finish(): Promise<StoreOutcome>;
  abandon(): Promise<void>;
}

/**
 * A transfer larger or slower than this gives back the connection its transaction began on, so a
 * pooled connection is never held idle through a long transfer or a stalled sender.
 */
const holdTransactionAhead = { bytes: 1024 * 1024, ms: 250 };

/** A receiver that drops the dataset and gives a fixed outcome. */
export function refusingReceiver(outcome: StoreOutcome): InstanceReceiver {
  return { write: async () => {}, finish: async () => outcome, abandon: async () => {} };
}

export async function beginInstance(context: InstanceStoreContext, announced: AnnouncedInstance): Promise<InstanceReceiver> {
  const { sopInstanceUid, sopClassUid } = announced;
  if (!isLenientDicomUid(sopInstanceUid)) return refusingReceiver({ kind: 'rejected', reason: 'invalid', comment: 'SOP Instance UID is not a UID' });
  if (await context.storeLimits.belowFreeSpaceFloor().catch(() => false)) {
    // The service-wide floor is logged by its guard on entering and leaving, not per instance.
    if (!context.storeLimits.belowServiceFloor()) context.logger.warn({ sopInstanceUid }, 'store refused: free disk space in the DICOM storage folder is below CG_DICOM_MIN_FREE_DISK');
    return refusingReceiver({ kind: 'no-space' });
  }
  let file: IncomingFile;
  try {
    const { layout, site } = context;
    const meta = { sopClassUid, sopInstanceUid, transferSyntaxUid: announced.transferSyntaxUid, sourceAeTitle: context.callingAeTitle };
    const spare = layout.takeSpare(site.siteId);
    file = spare ? IncomingFile.adopt(spare, meta) : IncomingFile.create(layout.temporaryPath(site.siteId), meta, () => layout.temporaryNamesDurable());
  } catch (error) {
    context.logger.error({ err: error }, 'cannot create a temporary file for an instance');
    return refusingReceiver({ kind: 'failed', error });
  }
  // The index transaction begins while the dataset arrives, unless the transfer turns out large
  // or slow: its connection is then given back rather than held idle through it. Beside other
  // stores it would mostly be given back unused: concurrent stores share a transaction.
  const commits = indexCommits(context.database);
  let ahead = commits.storing === 0 ? context.database.beginAhead() : undefined;
  commits.storing++;
  let storing = true;
  const done = () => {
    if (storing) commits.storing--;
    storing = false;
  };
  let received = 0;
  const giveBack = () => {
    clearTimeout(slow);
    ahead?.abandon();
    ahead = undefined;
  };
  const slow = ahead ? setTimeout(giveBack, holdTransactionAhead.ms).unref() : undefined;
  const { maxInstanceBytes } = context.storeLimits;
  let oversized: Promise<void> | undefined;
  return {
    write: (fragment) => {
      received += fragment.length;
      if (received > holdTransactionAhead.bytes) giveBack();
      if (received > maxInstanceBytes) {
        // The rest is read and dropped so the sender gets its answer; nothing of this one is kept.
        if (!oversized) {
          context.logger.warn({ sopInstanceUid, limit: maxInstanceBytes }, 'data set over CG_DICOM_MAX_INSTANCE_SIZE: discarding it');
          oversized = file.discard();
        }
        return oversized;
      }
      return file.write(fragment);
    },
    abandon: () => {
      giveBack();
      done();
      return oversized ?? file.discard();
    },
    finish: async () => {
      if (oversized) {
        giveBack();
        done();
        await oversized;
        return { kind: 'oversized', limit: maxInstanceBytes };
      }
      try {
        clearTimeout(slow);
        return await finishInstance(context, announced, file, ahead);
      } finally {
        giveBack(); // a no-op once the transaction took it
        done();
      }
    },
  };
}

async function finishInstance(context: InstanceStoreContext, announced: AnnouncedInstance, file: IncomingFile, ahead: TransactionAhead | undefined): Promise<StoreOutcome> {
  const { layout, logger, site } = context;
  const { sopInstanceUid, sopClassUid } = announced;
  /** The final name this transfer is linked to, once known, and the link's outcome. */
  let storagePath: string | undefined;
  let placed: Promise<{ durable: Promise<void> } | undefined> | undefined;
  /** Set while the transaction's work has returned with the file linked: only COMMIT is left. */
  let linked = false;
  let committed = false;
  try {
    const completed = await file.complete();
    const { fields, error, unreadIdentifier } = completed.sniff;
    if (error) return reject('invalid', `Dataset is malformed: ${error}`);
    if (unreadIdentifier) return reject('invalid', `${unreadIdentifier} is too long to be read`);
    // PS3.4 B.2.3: the dataset must be the instance the command announces.
    if (fields.sopInstanceUid !== sopInstanceUid) return reject('invalid', 'SOP Instance UID differs from the command');
    if (fields.sopClassUid !== undefined && fields.sopClassUid !== sopClassUid) return reject('sop-class-mismatch', 'SOP Class UID differs from the command');
    const studyUid = fields.studyInstanceUid ?? '';
    const seriesUid = fields.seriesInstanceUid ?? '';
    if (!isLenientDicomUid(studyUid) || !isLenientDicomUid(seriesUid)) return reject('invalid', 'Study or Series Instance UID missing or invalid');
    if (announced.expectedStudyInstanceUid !== undefined && studyUid !== announced.expectedStudyInstanceUid) {
      return reject('study-mismatch', `Study Instance UID ${studyUid} is not the study ${announced.expectedStudyInstanceUid}`);
    }
    const target = layout.instancePath(site.siteId, studyUid, seriesUid, sopInstanceUid);
    storagePath = target;
    const instance: ReceivedInstance = {
      ...fields,
      sopInstanceUid,
      sopClassUid,
      studyInstanceUid: studyUid,
      seriesInstanceUid: seriesUid,
      transferSyntaxUid: announced.transferSyntaxUid,
      storagePath: target,
      sizeBytes: completed.sizeBytes,
      sha256: completed.sha256,
      ...(context.callingAeTitle ? { callingAeTitle: context.callingAeTitle } : {}),
      remoteAddress: context.remoteAddress,
    };
    // The file is linked to its final name while the SOP Instance UID is claimed: a link never
    // replaces a file, so a stored instance's file is safe whatever the claim finds, and a crash
    // before the commit leaves the temporary name (durable before the link) for start-up recovery.
    placed = completed.named.then(() => layout.placeFile(file.tempPath, target));
    placed.catch(() => {}); // awaited below when it matters; never an unhandled rejection
    // Committed with the index work of stores finishing at the same time (index-commits.ts).
    const result = await indexCommits(context.database).run(async (tx) => {
      linked = false; // a retried transaction (deadlock) starts over
      const claim = await claimInstance(tx, site, instance);
      if (claim.outcome !== 'claimed') return claim;
      // A file already at the final name while this transaction holds the UID is not indexed:
      // a commit that never happened, or a store of the same UID that failed.
      // Taken: replaced under the path's lock, which a node's start-up recovery of that name takes too.
      let link = await placed;
      if (!link) {
        await lockStoredPath(tx, target);
        link = await layout.replaceUnindexed(file.tempPath, target);
      }
      try {
        // The study and series rows are written while the fsyncs run: they are locked only when
        // this instance changes them, which few instances of a study do.
        const completing = claim.complete();
        completing.catch(() => {}); // awaited below, after the fsyncs' outcome
        for (const step of await Promise.allSettled([completed.durable, link.durable])) {
          if (step.status === 'rejected') throw step.reason;
        }
        const indexed = await completing;
        linked = true;
        return indexed;
      } catch (error) {
        // Taken back while this transaction still holds the SOP Instance UID: once it rolls
        // back, a store of the same UID waiting on it may link its own file to this very name.
        await layout.takeBack(file.tempPath, target);
        placed = Promise.resolve(undefined); // a retried transaction (deadlock) links again
        throw error;
      }
    }, ahead);
    committed = true;
    await layout.settle(target);
    for (const warning of result.warnings) logger.warn({ sopInstanceUid }, warning);
    const findings = [...completed.sniff.findings, ...result.findings];
    if (findings.length > 0) logger.warn({ sopInstanceUid, findings }, 'instance indexed with non-conforming values');
    const stored = { findings, studyInstanceUid: studyUid, seriesInstanceUid: seriesUid, sopClassUid };
    if (result.outcome === 'stored') {
      // The temporary name is no longer needed; left behind by a crash, recovery finds it indexed.
      void layout.release(file.tempPath);
      logger.debug({ sopInstanceUid, studyInstanceUid: studyUid, bytes: completed.sizeBytes }, 'instance stored');
      return { kind: 'stored', ...stored };
    }
    // A duplicate: the kept instance's file stays as it is. This transfer's file, if it got a
    // final name, has one the index does not use (the duplicate is indexed under another study
    // or series, or the name would have been taken).
    await placed.then((link) => (link ? layout.takeBack(file.tempPath, target) : undefined)).catch(() => {});
    await file.discard();
    if (result.outcome === 'duplicate-identical') {
      logger.debug({ sopInstanceUid }, 'instance already stored with identical bytes');
      return { kind: 'duplicate-identical', ...stored };
    }
    // Policy of the imaging domain: the first instance is kept, different bytes are refused.
    logger.warn({ sopInstanceUid }, 'instance already stored with different bytes: refused');
    return { kind: 'duplicate-different' };
  } catch (error) {
    // With `linked` set, this failure came from the COMMIT. Lost with the connection, a COMMIT may
    // still have been applied: the file then keeps both names, and start-up recovery removes the
    // final one unless indexed. A retry of the instance (the answer is "retry later") finds it
    // stored, or links its own copy in its place; either commit settles the kept temporary name.
    const commitUnknown = !committed && linked && isTransientDatabaseError(error);
    if (commitUnknown) {
      layout.keepUndecided(storagePath!, file.tempPath);
    } else {
      if (!committed && storagePath !== undefined && placed) {
        // Any final name this transfer got: linked while the claim failed, or a COMMIT refused.
        await placed.catch(() => {});
        await layout.takeBack(file.tempPath, storagePath).catch(() => {});
      }
      await file.discard();
    }
    return { kind: 'failed', error };
  }

  async function reject(reason: RejectReason, comment: string): Promise<StoreOutcome> {
    await file.discard();
    logger.warn({ sopInstanceUid }, comment);
    return { kind: 'rejected', reason, comment };
  }
}
