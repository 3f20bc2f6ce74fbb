/**
 * The SOP Class and Instance UIDs a STOW-RS part's dataset gives itself, (0008,0016) and
 * (0008,0018), read from the first bytes of the dataset before storing begins. The dataset, not
 * the file meta information, names the instance: files in the field carry a Media Storage SOP
 * Instance UID (0002,0003) that differs from the dataset's (PS3.10 7.1 says they are equal), and
 * C-STORE, which never sees the sender's meta, stores them under the dataset's UID. Reading it here
 * keeps the two surfaces giving one file one identity.
 */
import { DatasetWalker } from '../storage/dicom/dataset/dataset-walker.ts';
import { byteSyntaxOf } from '../storage/dicom/dataset/header-sniffer.ts';
import { transferSyntax } from '../storage/dicom/uids.ts';

const sopClassTag = 0x00080016;
const sopInstanceTag = 0x00080018;

/**
 * Elements of group 0008 before (0008,0018) are short except a few sequences: past this many
 * dataset bytes without reaching it, the meta's UIDs are used and the store's own check decides.
 */
export const maxIdentityBytes = 256 * 1024;

export interface DatasetIdentity {
  sopClassUid?: string;
  sopInstanceUid?: string;
}

export class DatasetIdentityReader {
  #walker: DatasetWalker | undefined;
  #read = 0;

  /** A deflated dataset is not inflated here: its identity is left to the meta and the store. */
  constructor(transferSyntaxUid: string) {
    if (transferSyntaxUid === transferSyntax.deflatedExplicitLittle) return;
    this.#walker = new DatasetWalker({ syntax: byteSyntaxOf(transferSyntaxUid), wanted: new Set([sopClassTag, sopInstanceTag]), maxValueLength: 64, stopAfterTag: sopInstanceTag });
  }

  /** True once the identity is known or no more bytes would tell it. */
  get settled(): boolean {
    return this.#walker === undefined || this.#walker.done || this.#read >= maxIdentityBytes;
  }

  push(datasetBytes: Buffer): void {
    this.#read += datasetBytes.length;
    this.#walker?.push(datasetBytes);
  }

  /** What was read; call `end` first when the dataset ended before the reader settled. */
  identity(): DatasetIdentity {
    const walker = this.#walker;
    if (!walker || walker.error) return {};
    const uid = (tag: number) => walker.values.get(tag)?.toString('latin1').replace(/[\0 ]+$/, '') || undefined;
    const sopClassUid = uid(sopClassTag);
    const sopInstanceUid = uid(sopInstanceTag);
    return { ...(sopClassUid ? { sopClassUid } : {}), ...(sopInstanceUid ? { sopInstanceUid } : {}) };
  }

  end(): void {
    this.#walker?.end();
  }
}
