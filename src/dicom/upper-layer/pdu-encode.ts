import { applicationContextUid, implementationClassUid, implementationVersionName } from '../../storage/dicom/uids.ts';
import { pduType } from './pdu-types.ts';

/** The answer to one proposed presentation context (PS3.8 9.3.3.2, table 9-18). */
export interface ContextResult {
  id: number;
  /** 0 acceptance, 1 user-rejection, 2 no-reason, 3 abstract syntax not supported, 4 transfer syntaxes not supported. */
  result: 0 | 1 | 2 | 3 | 4;
  transferSyntax: string;
}

export interface AssociateAccept {
  calledAeTitle: string;
  callingAeTitle: string;
  contexts: ContextResult[];
  /** The largest PDU this side accepts (PS3.8 D.1). */
  maxPduLength: number;
  /** PS3.7 D.3.3.4: answers to role selection proposals (SOP class, SCU role, SCP role). */
  roleSelections?: { sopClassUid: string; scuRole: boolean; scpRole: boolean }[];
}

/** PS3.8 9.3.3: A-ASSOCIATE-AC; AE titles are echoed from the RQ, as the standard requires. */
export function encodeAssociateAccept(accept: AssociateAccept): Buffer {
  const header = Buffer.alloc(68);
  header.writeUInt16BE(1, 0); // protocol version 1
  aeTitle(accept.calledAeTitle).copy(header, 4);
  aeTitle(accept.callingAeTitle).copy(header, 20);
  const parts: Buffer[] = [header, item(0x10, uid(applicationContextUid))];
  for (const context of accept.contexts) {
    const fixed = Buffer.from([context.id, 0, context.result, 0]);
    // PS3.8 9.3.3.2: the transfer syntax sub-item is present but not significant when rejected.
    parts.push(item(0x21, Buffer.concat([fixed, item(0x40, uid(context.transferSyntax))])));
  }
  const maxLength = Buffer.alloc(4);
  maxLength.writeUInt32BE(accept.maxPduLength, 0);
  const userInfo = Buffer.concat([
    item(0x51, maxLength),
    item(0x52, uid(implementationClassUid)),
    ...(accept.roleSelections ?? []).map(roleSelectionItem),
    item(0x55, Buffer.from(implementationVersionName, 'latin1')),
  ]);
  parts.push(item(0x50, userInfo));
  return pdu(pduType.associateAc, Buffer.concat(parts));
}

function roleSelectionItem(selection: { sopClassUid: string; scuRole: boolean; scpRole: boolean }): Buffer {
  const sopClass = uid(selection.sopClassUid);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(sopClass.length, 0);
  return item(0x54, Buffer.concat([length, sopClass, Buffer.from([selection.scuRole ? 1 : 0, selection.scpRole ? 1 : 0])]));
}

/** PS3.8 9.3.4, table 9-21: result 1 permanent / 2 transient; source; reason. */
export function encodeAssociateReject(result: 1 | 2, source: 1 | 2 | 3, reason: number): Buffer {
  return pdu(pduType.associateRj, Buffer.from([0, result, source, reason]));
}

/** PS3.8 9.3.8: A-ABORT; source 0 service-user, 2 service-provider. */
export function encodeAbort(source: 0 | 2, reason: number): Buffer {
  return pdu(pduType.abort, Buffer.from([0, 0, source, source === 2 ? reason : 0]));
}

/** PS3.8 9.3.2: A-ASSOCIATE-RQ, for the associations this side opens (C-MOVE sub-operations). */
export function encodeAssociateRequest(request: {
  calledAeTitle: string;
  callingAeTitle: string;
  contexts: { id: number; abstractSyntax: string; transferSyntaxes: string[] }[];
  maxPduLength: number;
}): Buffer {
  const header = Buffer.alloc(68);
  header.writeUInt16BE(1, 0);
  aeTitle(request.calledAeTitle).copy(header, 4);
  aeTitle(request.callingAeTitle).copy(header, 20);
  const parts: Buffer[] = [header, item(0x10, uid(applicationContextUid))];
  for (const context of request.contexts) {
    const syntaxes = context.transferSyntaxes.map((syntax) => item(0x40, uid(syntax)));
    parts.push(item(0x20, Buffer.concat([Buffer.from([context.id, 0, 0, 0]), item(0x30, uid(context.abstractSyntax)), ...syntaxes])));
  }
  const maxLength = Buffer.alloc(4);
  maxLength.writeUInt32BE(request.maxPduLength, 0);
  parts.push(item(0x50, Buffer.concat([item(0x51, maxLength), item(0x52, uid(implementationClassUid)), item(0x55, Buffer.from(implementationVersionName, 'latin1'))])));
  return pdu(pduType.associateRq, Buffer.concat(parts));
}

/** PS3.8 9.3.6: A-RELEASE-RQ. */
export function encodeReleaseRequest(): Buffer {
  return pdu(pduType.releaseRq, Buffer.alloc(4));
}

/** PS3.8 9.3.7: A-RELEASE-RP. */
export function encodeReleaseResponse(): Buffer {
  return pdu(pduType.releaseRp, Buffer.alloc(4));
}

/** PS3.8 9.3.5: one P-DATA-TF holding one PDV (context id, control header, fragment). */
export function encodePData(contextId: number, isCommand: boolean, isLast: boolean, fragment: Buffer): Buffer {
  const header = Buffer.alloc(12);
  header[0] = pduType.pData;
  header.writeUInt32BE(6 + fragment.length, 2);
  header.writeUInt32BE(2 + fragment.length, 6);
  header[10] = contextId;
  header[11] = (isCommand ? 0x01 : 0) | (isLast ? 0x02 : 0);
  return Buffer.concat([header, fragment]);
}

function pdu(type: number, body: Buffer): Buffer {
  const header = Buffer.alloc(6);
  header[0] = type;
  header.writeUInt32BE(body.length, 2);
  return Buffer.concat([header, body]);
}

function item(type: number, value: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header[0] = type;
  header.writeUInt16BE(value.length, 2);
  return Buffer.concat([header, value]);
}

function uid(value: string): Buffer {
  return Buffer.from(value, 'latin1');
}

function aeTitle(value: string): Buffer {
  return Buffer.from(value.slice(0, 16).padEnd(16, ' '), 'latin1');
}
