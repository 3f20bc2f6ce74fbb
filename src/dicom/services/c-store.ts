/**
 * C-STORE SCP (PS3.4 annex B, PS3.7 9.1.1). The dataset streams to a temporary Part-10 file;
 * once complete it is fsynced, checked, moved into place and indexed in one transaction, and only
 * then does the SCU get 0x0000 (DESIGN.md section 2: acknowledge only what is durable).
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
import { unlink } from 'node:fs/promises';

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
    file = await IncomingFile.create(association.layout.tmpDir, {
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
  let movingMarker: string | undefined;
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
    const result = await association.database.transaction(async (tx) => {
      // The temporary file's fsync runs while the index rows are written.
      const indexed = await indexInstance(tx, site, instance);
      // The file goes into place before the row becomes visible (at commit), and only for a new
      // instance: a duplicate never overwrites the file the index already points at.
      if (indexed.outcome === 'stored' && movedTo === undefined) {
        await completed.durable;
        // A crash between this move and the commit would leave a file nothing points at; the
        // marker lets start-up recovery find and remove it.
        movingMarker = await layout.markMoving(storagePath);
        await layout.moveIntoPlace(completed.tempPath, storagePath);
        movedTo = storagePath;
      }
      return indexed;
    });
    committed = true;
    if (movingMarker) await layout.clearMoving(movingMarker);
    for (const warning of result.warnings) logger.warn({ sopInstanceUid }, warning);
    if (result.outcome === 'stored') {
      logger.info({ sopInstanceUid, studyInstanceUid: studyUid, bytes: completed.sizeBytes }, 'instance stored');
      return { status: status.success };
    }
    // A duplicate: the kept instance's file stays as it is. (If an earlier, rolled-back attempt of
    // this transaction had moved our file there, the instance committed since then overwrote it.)
    await file.discard();
    if (result.outcome === 'duplicate-identical') {
      logger.info({ sopInstanceUid }, 'instance already stored with identical bytes');
      return { status: status.success };
    }
    // Policy of the imaging domain: the first instance is kept, different bytes are refused.
    logger.warn({ sopInstanceUid }, 'instance already stored with different bytes: refused');
    return { status: status.duplicateSopInstance, errorComment: 'SOP Instance already stored with different content' };
  } catch (error) {
    if (!committed && movedTo !== undefined) await unlink(layout.absolute(movedTo)).catch(() => {});
    if (!committed && movingMarker) await layout.clearMoving(movingMarker);
    await file.discard();
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
