import { encodePData } from '../upper-layer/pdu-encode.ts';
import { encodeCommandSet, noDataSet, tag, type CommandValue } from './command-set.ts';
import type { DimseResult } from './dimse-result.ts';

export interface ResponseFields {
  commandField: number;
  messageIdBeingRespondedTo: number;
  affectedSopClassUid?: string;
  affectedSopInstanceUid?: string;
  /** A data set follows the command (C-FIND matches, C-GET/C-MOVE failed UID lists). */
  hasDataSet?: boolean;
  /** Further elements, such as the sub-operation counts of C-GET and C-MOVE. */
  extra?: CommandValue[];
}

/** PS3.7 E.1: any value but 0x0101 announces a data set; 0x0001 is what most peers send. */
const dataSetPresent = 0x0001;

/** PS3.7 9.3 / 10.3: a response command set without a data set. */
export function encodeResponse(fields: ResponseFields, result: DimseResult): Buffer {
  const elements: CommandValue[] = [
    { tag: tag.commandField, vr: 'US', value: fields.commandField },
    { tag: tag.messageIdBeingRespondedTo, vr: 'US', value: fields.messageIdBeingRespondedTo },
    { tag: tag.commandDataSetType, vr: 'US', value: fields.hasDataSet ? dataSetPresent : noDataSet },
    ...(fields.extra ?? []),
    { tag: tag.status, vr: 'US', value: result.status },
  ];
  if (fields.affectedSopClassUid) elements.push({ tag: tag.affectedSopClassUid, vr: 'UI', value: fields.affectedSopClassUid });
  const instanceUid = result.affectedSopInstanceUid ?? fields.affectedSopInstanceUid;
  if (instanceUid) elements.push({ tag: tag.affectedSopInstanceUid, vr: 'UI', value: instanceUid });
  if (result.status !== 0 && (result.status & 0xff00) !== 0xff00 && result.errorComment) elements.push({ tag: tag.errorComment, vr: 'LO', value: result.errorComment });
  return encodeCommandSet(elements);
}

/**
 * Cuts a command or dataset into P-DATA-TF PDUs that respect the peer's maximum PDU length
 * (PS3.8 D.1: the length counts the PDV items; each PDV item header takes 6 bytes).
 */
export function toPDataPdus(contextId: number, isCommand: boolean, bytes: Buffer, peerMaxPduLength: number): Buffer[] {
  const limit = peerMaxPduLength === 0 ? 1024 * 1024 : Math.min(peerMaxPduLength, 1024 * 1024);
  const fragmentLength = Math.max(limit - 6, 1);
  const pdus: Buffer[] = [];
  for (let offset = 0; offset < bytes.length || pdus.length === 0; offset += fragmentLength) {
    const fragment = bytes.subarray(offset, offset + fragmentLength);
    pdus.push(encodePData(contextId, isCommand, offset + fragmentLength >= bytes.length, fragment));
  }
  return pdus;
}
