/**
 * C-STORE SCP (PS3.4 annex B, PS3.7 9.1.1). The dataset streams to a temporary Part-10 file;
 * once complete it is checked, linked into place and indexed in one transaction, which commits
 * only after the file and its folder entry are fsynced, and only then does the SCU get 0x0000 (or
 * warning 0xB000 when some values are indexed otherwise than sent, failure-status.ts)
 * (DESIGN.md section 2: acknowledge only what is durable).
 */
import { claimInstance } from '../../domain/imaging/index-instance.ts';
import type { ReceivedInstance } from '../../domain/imaging/received-instance.ts';
import { isLenientDicomUid } from '../../domain/imaging/dicom-values.ts';
import { lockStoredPath } from '../../domain/imaging/stored-path-lock.ts';
import type { AssociationContext } from '../association/association-context.ts';
import type { AcceptedContext } from '../association/negotiate.ts';
import { tag, type CommandSet } from '../dimse/command-set.ts';
import type { DimseResult } from '../dimse/dimse-result.ts';
import { status } from '../dimse/status.ts';
import { IncomingFile } from '../storage/incoming-file.ts';
import { storedAnswer, storeFailure } from './failure-status.ts';
import { isTransientDatabaseError } from '../../storage/errors.ts';
import type { TransactionAhead } from '../../storage/database.ts';

/**
 * A transfer larger or slower than this gives back the connection its transaction began on, so a
 * pooled connection is never held idle through a long transfer or a stalled sender.
 */
const holdTransactionAhead = { bytes: 1024 * 1024, ms: 250 };

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
  if (!isLenientDicomUid(sopInstanceUid)) {
    return discardingReceiver({ status: status.cannotUnderstand, errorComment: 'Affected SOP Instance UID is not a UID' });
  }
  // PS3.4 B.2.3: 0xA7xx "Refused: Out of Resources" is the status C-STORE has for storage the SCP
  // cannot give; the comment says which limit, so an operator reading the modality's log knows.
  if (await association.storeLimits.belowFreeSpaceFloor().catch(() => false)) {
    association.logger.warn({ sopInstanceUid }, 'C-STORE refused: free disk space under the data directory is below CG_DICOM_MIN_FREE_DISK');
    return discardingReceiver({ status: status.outOfResources, errorComment: 'Out of resources: storage is nearly full; retry later' });
  }
  let file: IncomingFile;
  try {
    const { layout, site } = association;
    const meta = { sopClassUid, sopInstanceUid, transferSyntaxUid: context.transferSyntax, sourceAeTitle: association.callingAeTitle };
    const spare = layout.takeSpare(site.siteId);
    file = spare ? IncomingFile.adopt(spare, meta) : IncomingFile.create(layout.temporaryPath(site.siteId), meta, () => layout.temporaryNamesDurable());
  } catch (error) {
    association.logger.error({ err: error }, 'cannot create a temporary file for C-STORE');
    return discardingReceiver(storeFailure(error));
  }
  // The index transaction begins while the dataset arrives, unless the transfer turns out large
  // or slow: its connection is then given back rather than held idle through it.
  let ahead = association.database.beginAhead();
  let received = 0;
  const giveBack = () => {
    clearTimeout(slow);
    ahead?.abandon();
    ahead = undefined;
  };
  const slow = ahead ? setTimeout(giveBack, holdTransactionAhead.ms).unref() : undefined;
  const { maxInstanceBytes } = association.storeLimits;
  let oversized: Promise<void> | undefined;
  return {
    write: (fragment) => {
      received += fragment.length;
      if (received > holdTransactionAhead.bytes) giveBack();
      if (received > maxInstanceBytes) {
        // PS3.7 9.1.1: the response follows the whole data set, so the rest is read and dropped;
        // the association stays usable for the next instance, and nothing of this one is kept.
        if (!oversized) {
          association.logger.warn({ sopInstanceUid, limit: maxInstanceBytes }, 'C-STORE data set over CG_DICOM_MAX_INSTANCE_SIZE: discarding it');
          oversized = file.discard();
        }
        return oversized;
      }
      return file.write(fragment);
    },
    abandon: () => {
      giveBack();
      return oversized ?? file.discard();
    },
    finish: async () => {
      if (oversized) {
        giveBack();
        await oversized;
        return { status: status.outOfResources, errorComment: `Out of resources: data set over the ${maxInstanceBytes}-byte limit` }; // LO: 64 characters
      }
      try {
        clearTimeout(slow);
        return await finishStore(association, context, file, sopClassUid, sopInstanceUid, ahead);
      } finally {
        giveBack(); // a no-op once the transaction took it
      }
    },
  };
}

async function finishStore(
  association: AssociationContext,
  context: AcceptedContext,
  file: IncomingFile,
  sopClassUid: string,
  sopInstanceUid: string,
  ahead: TransactionAhead | undefined,
): Promise<DimseResult> {
  const { layout, logger, site } = association;
  /** The final name this transfer is linked to, once known, and the link's outcome. */
  let storagePath: string | undefined;
  let placed: Promise<{ durable: Promise<void> } | undefined> | undefined;
  /** Set while the transaction's work has returned with the file linked: only COMMIT is left. */
  let linked = false;
  let committed = false;
  try {
    const completed = await file.complete();
    const { fields, error, unreadIdentifier } = completed.sniff;
    if (error) return reject(status.cannotUnderstand, `Dataset is malformed: ${error}`);
    if (unreadIdentifier) return reject(status.cannotUnderstand, `${unreadIdentifier} is too long to be read`);
    // PS3.4 B.2.3: the dataset must be the instance the command announces.
    if (fields.sopInstanceUid !== sopInstanceUid) return reject(status.cannotUnderstand, 'SOP Instance UID differs from the command');
    if (fields.sopClassUid !== undefined && fields.sopClassUid !== sopClassUid) {
      return reject(status.dataSetDoesNotMatchSopClass, 'SOP Class UID differs from the command');
    }
    const studyUid = fields.studyInstanceUid ?? '';
    const seriesUid = fields.seriesInstanceUid ?? '';
    if (!isLenientDicomUid(studyUid) || !isLenientDicomUid(seriesUid)) {
      return reject(status.cannotUnderstand, 'Study or Series Instance UID missing or invalid');
    }
    const target = layout.instancePath(site.siteId, studyUid, seriesUid, sopInstanceUid);
    storagePath = target;
    const instance: ReceivedInstance = {
      ...fields,
      sopInstanceUid,
      sopClassUid,
      studyInstanceUid: studyUid,
      seriesInstanceUid: seriesUid,
      transferSyntaxUid: context.transferSyntax,
      storagePath: target,
      sizeBytes: completed.sizeBytes,
      sha256: completed.sha256,
      callingAeTitle: association.callingAeTitle,
      remoteAddress: association.remoteAddress,
    };
    // The file is linked to its final name while the SOP Instance UID is claimed: a link never
    // replaces a file, so a stored instance's file is safe whatever the claim finds, and a crash
    // before the commit leaves the temporary name (durable before the link) for start-up recovery.
    placed = completed.named.then(() => layout.placeFile(file.tempPath, target));
    placed.catch(() => {}); // awaited below when it matters; never an unhandled rejection
    const result = await association.database.transaction(async (tx) => {
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
    }, 'read committed', ahead);
    committed = true;
    await layout.settle(target);
    for (const warning of result.warnings) logger.warn({ sopInstanceUid }, warning);
    const findings = [...completed.sniff.findings, ...result.findings];
    if (findings.length > 0) logger.warn({ sopInstanceUid, findings }, 'instance indexed with non-conforming values');
    if (result.outcome === 'stored') {
      // The temporary name is no longer needed; left behind by a crash, recovery finds it indexed.
      void layout.release(file.tempPath);
      logger.debug({ sopInstanceUid, studyInstanceUid: studyUid, bytes: completed.sizeBytes }, 'instance stored');
      return storedAnswer(findings);
    }
    // A duplicate: the kept instance's file stays as it is. This transfer's file, if it got a
    // final name, has one the index does not use (the duplicate is indexed under another study
    // or series, or the name would have been taken).
    await placed.then((link) => (link ? layout.takeBack(file.tempPath, target) : undefined)).catch(() => {});
    await file.discard();
    if (result.outcome === 'duplicate-identical') {
      logger.debug({ sopInstanceUid }, 'instance already stored with identical bytes');
      return storedAnswer(findings);
    }
    // Policy of the imaging domain: the first instance is kept, different bytes are refused.
    logger.warn({ sopInstanceUid }, 'instance already stored with different bytes: refused');
    return { status: status.duplicateSopInstance, errorComment: 'SOP Instance already stored with different content' };
  } catch (error) {
    // With `linked` set, this failure came from the COMMIT. Lost with the connection, a COMMIT may still have been applied: the file then
    // keeps both names, and start-up recovery removes the final one unless indexed. A retry of the
    // instance (the answer is "retry later") finds it stored, or links its own copy in its place;
    // either commit settles the kept temporary name.
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
    const answer = storeFailure(error);
    if (answer.status === status.processingFailure) logger.error({ err: error, sopInstanceUid }, 'C-STORE failed');
    else logger.warn({ err: error, sopInstanceUid, status: answer.status }, 'C-STORE refused');
    return answer;
  }

  async function reject(code: number, comment: string): Promise<DimseResult> {
    await file.discard();
    logger.warn({ sopInstanceUid, status: code }, comment);
    return { status: code, errorComment: comment };
  }
}
