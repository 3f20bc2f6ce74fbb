/**
 * C-STORE SCP (PS3.4 annex B, PS3.7 9.1.1). The dataset streams to a temporary Part-10 file;
 * once complete it is checked, indexed and moved into place in one transaction, which commits
 * only after the file and its folder entry are fsynced, and only then does the SCU get 0x0000
 * (DESIGN.md section 2: acknowledge only what is durable).
 */
import { indexInstance } from '../../domain/imaging/index-instance.ts';
import type { ReceivedInstance } from '../../domain/imaging/received-instance.ts';
import { isLenientDicomUid } from '../../domain/imaging/dicom-values.ts';
import type { AssociationContext } from '../association/association-context.ts';
import type { AcceptedContext } from '../association/negotiate.ts';
import { tag, type CommandSet } from '../dimse/command-set.ts';
import type { DimseResult } from '../dimse/dimse-result.ts';
import { status } from '../dimse/status.ts';
import { IncomingFile } from '../storage/incoming-file.ts';
import { storeFailure } from './failure-status.ts';
import { isTransientDatabaseError } from '../../storage/errors.ts';
import { rename, unlink } from 'node:fs/promises';

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
  let file: IncomingFile;
  try {
    file = IncomingFile.create(association.layout.tmpDir, {
      sopClassUid,
      sopInstanceUid,
      transferSyntaxUid: context.transferSyntax,
      sourceAeTitle: association.callingAeTitle,
    });
  } catch (error) {
    association.logger.error({ err: error }, 'cannot create a temporary file for C-STORE');
    return discardingReceiver(storeFailure(error));
  }
  return {
    write: (fragment) => file.write(fragment),
    abandon: () => file.discard(),
    finish: () => finishStore(association, context, file, sopClassUid, sopInstanceUid),
  };
}

async function finishStore(
  association: AssociationContext,
  context: AcceptedContext,
  file: IncomingFile,
  sopClassUid: string,
  sopInstanceUid: string,
): Promise<DimseResult> {
  const { layout, logger, site } = association;
  let movedTo: string | undefined;
  let movingMarker: Promise<string> | undefined;
  let committed = false;
  try {
    const completed = await file.complete();
    const { fields, error } = completed.sniff;
    if (error) return reject(status.cannotUnderstand, `Dataset is malformed: ${error}`);
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
    const storagePath = layout.instancePath(site.siteId, studyUid, seriesUid, sopInstanceUid);
    const instance: ReceivedInstance = {
      ...fields,
      sopInstanceUid,
      sopClassUid,
      studyInstanceUid: studyUid,
      seriesInstanceUid: seriesUid,
      transferSyntaxUid: context.transferSyntax,
      storagePath,
      sizeBytes: completed.sizeBytes,
      sha256: completed.sha256,
      callingAeTitle: association.callingAeTitle,
      remoteAddress: association.remoteAddress,
    };
    // The marker and the temporary file's fsync proceed while the instance is indexed; a
    // duplicate needs neither, so their failure only matters once the instance is known to be new.
    const marker = completed.created.then(() => layout.markMoving(storagePath, completed.tempPath));
    marker.catch(() => {}); // awaited below when it matters; never an unhandled rejection
    movingMarker = marker;
    // A failure here is met again, and reported, by the move itself.
    const folderReady = layout.prepareFolder(storagePath).catch(() => {});
    const result = await association.database.transaction(async (tx) => {
      const indexed = await indexInstance(tx, site, instance);
      if (indexed.outcome !== 'stored') return indexed;
      // The file goes into place before the row becomes visible (at commit), and only for a new
      // instance: a duplicate never overwrites the file the index already points at. A crash
      // between the move and the commit would leave a file nothing points at; the marker, durable
      // before the move, lets start-up recovery find and remove it. So the move waits for the
      // marker only, and the commit for the file's fsync and the folder's.
      await marker;
      await folderReady;
      movedTo = storagePath;
      try {
        const moved = await layout.moveIntoPlace(completed.tempPath, storagePath);
        for (const step of await Promise.allSettled([completed.durable, moved.durable])) {
          if (step.status === 'rejected') throw step.reason;
        }
        return indexed;
      } catch (error) {
        // Taken back while this transaction still holds the SOP Instance UID: once it rolls
        // back, a store of the same UID waiting on it may move its own file to this very path.
        // A retry of the transaction finds the file where it was.
        await rename(layout.absolute(storagePath), completed.tempPath).catch(() => unlink(layout.absolute(storagePath)).catch(() => {}));
        movedTo = undefined;
        throw error;
      }
    });
    committed = true;
    await clearMarker(movingMarker);
    await layout.settle(storagePath);
    for (const warning of result.warnings) logger.warn({ sopInstanceUid }, warning);
    if (result.outcome === 'stored') {
      logger.debug({ sopInstanceUid, studyInstanceUid: studyUid, bytes: completed.sizeBytes }, 'instance stored');
      return { status: status.success };
    }
    // A duplicate: the kept instance's file stays as it is.
    await file.discard();
    if (result.outcome === 'duplicate-identical') {
      logger.debug({ sopInstanceUid }, 'instance already stored with identical bytes');
      return { status: status.success };
    }
    // Policy of the imaging domain: the first instance is kept, different bytes are refused.
    logger.warn({ sopInstanceUid }, 'instance already stored with different bytes: refused');
    return { status: status.duplicateSopInstance, errorComment: 'SOP Instance already stored with different content' };
  } catch (error) {
    // movedTo is only set once the transaction's work has returned, so this failure came from its
    // COMMIT. Lost with the connection, a COMMIT may still have been applied: the file then stays
    // where the index may point, with its marker, and start-up recovery removes it unless indexed.
    // A retry of the instance (the answer is "retry later") finds it stored, or moves its own copy
    // over it; either commit settles the marker.
    const commitUnknown = !committed && movedTo !== undefined && isTransientDatabaseError(error);
    if (commitUnknown) {
      layout.keepUndecided(movedTo!, await movingMarker!);
    } else if (!committed) {
      if (movedTo !== undefined) await unlink(layout.absolute(movedTo)).catch(() => {});
      await clearMarker(movingMarker);
    }
    await file.discard();
    const answer = storeFailure(error);
    if (answer.status === status.processingFailure) logger.error({ err: error, sopInstanceUid }, 'C-STORE failed');
    else logger.warn({ err: error, sopInstanceUid, status: answer.status }, 'C-STORE refused');
    return answer;
  }

  async function clearMarker(marker: Promise<string> | undefined): Promise<void> {
    if (marker) await marker.then((path) => layout.clearMoving(path), () => {});
  }

  async function reject(code: number, comment: string): Promise<DimseResult> {
    await file.discard();
    logger.warn({ sopInstanceUid, status: code }, comment);
    return { status: code, errorComment: comment };
  }
}
