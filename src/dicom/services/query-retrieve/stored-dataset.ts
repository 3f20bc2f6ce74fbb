/**
 * Sends a stored instance as a C-STORE request (a C-GET or C-MOVE sub-operation, PS3.4 C.4.2.3 and
 * C.4.3.3): the dataset goes exactly as it was received, in the transfer syntax it is stored in,
 * read from its file a PDU at a time, so memory does not grow with the instance; or, an
 * uncompressed one on a context of another little endian syntax, converted as it is read
 * (src/storage/dicom/converted-dataset.ts).
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { encodeCommandSet, tag, commandField, type CommandValue } from '../../dimse/command-set.ts';
import { toPDataPdus } from '../../dimse/response.ts';
import { readFileMeta } from '../../../storage/dicom/stored-identity.ts';
import { encodePData } from '../../upper-layer/pdu-encode.ts';
import { convertedDataset } from '../../../storage/dicom/converted-dataset.ts';

export interface StoredDataset {
  path: string;
  /** The transfer syntax the dataset is stored in. */
  transferSyntaxUid: string;
  /** Where the dataset starts, after the file's meta header. */
  offset: number;
  length: number;
}

export interface StoreRequest {
  contextId: number;
  messageId: number;
  sopClassUid: string;
  sopInstanceUid: string;
  /** PS3.7 9.1.1.1: set on the sub-operations of a C-MOVE. */
  moveOriginator?: { aeTitle: string; messageId: number };
}

/** The dataset of a file this service stored, or undefined when it is missing or unreadable. */
export async function openStoredDataset(path: string): Promise<StoredDataset | undefined> {
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const head = Buffer.alloc(Math.min(size, 4096));
      await handle.read(head, 0, head.length, 0);
      const meta = readFileMeta(head);
      return meta ? { path, transferSyntaxUid: meta.transferSyntaxUid, offset: meta.datasetOffset, length: size - meta.datasetOffset } : undefined;
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

function fragmentLength(peerMaxPduLength: number): number {
  const limit = peerMaxPduLength === 0 ? 1024 * 1024 : Math.min(peerMaxPduLength, 1024 * 1024);
  return Math.max(limit - 6, 1);
}

/**
 * Writes the C-STORE-RQ command and its dataset in `sentAs` (the context's transfer syntax, which
 * canBeSentAs allowed); `write` waits for the socket between PDUs.
 */
export async function sendStoreRequest(write: (pdu: Buffer) => Promise<void>, peerMaxPduLength: number, request: StoreRequest, dataset: StoredDataset, sentAs: string): Promise<void> {
  const elements: CommandValue[] = [
    { tag: tag.affectedSopClassUid, vr: 'UI', value: request.sopClassUid },
    { tag: tag.commandField, vr: 'US', value: commandField.cStoreRq },
    { tag: tag.messageId, vr: 'US', value: request.messageId },
    { tag: tag.priority, vr: 'US', value: 0 },
    { tag: tag.commandDataSetType, vr: 'US', value: 0x0001 },
    { tag: tag.affectedSopInstanceUid, vr: 'UI', value: request.sopInstanceUid },
  ];
  if (request.moveOriginator) {
    elements.push({ tag: tag.moveOriginatorAeTitle, vr: 'AE', value: request.moveOriginator.aeTitle });
    elements.push({ tag: tag.moveOriginatorMessageId, vr: 'US', value: request.moveOriginator.messageId });
  }
  for (const pdu of toPDataPdus(request.contextId, true, encodeCommandSet(elements), peerMaxPduLength)) await write(pdu);
  if (dataset.length === 0) return write(encodePData(request.contextId, false, true, Buffer.alloc(0)));
  const size = fragmentLength(peerMaxPduLength);
  if (sentAs !== dataset.transferSyntaxUid) return sendConverted(write, request.contextId, size, convertedDataset(dataset.path, dataset.offset, dataset.length, dataset.transferSyntaxUid, sentAs));
  let sent = 0;
  const stream = createReadStream(dataset.path, { start: dataset.offset, end: dataset.offset + dataset.length - 1, highWaterMark: size });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    sent += chunk.length;
    await write(encodePData(request.contextId, false, sent >= dataset.length, chunk));
  }
  // The file shrank while being read: the peer would wait for the rest for ever.
  if (sent < dataset.length) throw new Error(`stored file ${dataset.path} ended before its dataset`);
}

/** Fragments of `size` bytes, the last one marked, from chunks of any size whose total is not known ahead. */
async function sendConverted(write: (pdu: Buffer) => Promise<void>, contextId: number, size: number, chunks: AsyncIterable<Buffer>): Promise<void> {
  let pending: Buffer[] = [];
  let pendingLength = 0;
  for await (const chunk of chunks) {
    pending.push(chunk);
    pendingLength += chunk.length;
    // One fragment is always held back: only the end of the chunks says which one is the last.
    while (pendingLength > size) {
      const joined = Buffer.concat(pending, pendingLength);
      await write(encodePData(contextId, false, false, joined.subarray(0, size)));
      pending = [joined.subarray(size)];
      pendingLength -= size;
    }
  }
  await write(encodePData(contextId, false, true, Buffer.concat(pending, pendingLength)));
}
