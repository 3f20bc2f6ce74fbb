import { abortReason, UpperLayerError } from './pdu-types.ts';

/** A proposed presentation context (PS3.8 9.3.2.2). */
export interface ProposedContext {
  id: number;
  abstractSyntax: string;
  transferSyntaxes: string[];
}

/** The parts of an A-ASSOCIATE-RQ (PS3.8 9.3.2) the listener acts on. */
export interface AssociateRequest {
  protocolVersion: number;
  calledAeTitle: string;
  callingAeTitle: string;
  applicationContext: string;
  contexts: ProposedContext[];
  /** Max PDU length the requestor can receive; 0 means unlimited (PS3.8 D.1.1). */
  maxPduLength: number;
  implementationClassUid: string;
  implementationVersionName?: string;
  /** PS3.7 D.3.3.4: SOP classes for which the requestor proposed SCU/SCP roles (C-GET receivers). */
  roleSelections: RoleSelection[];
}

export interface RoleSelection {
  sopClassUid: string;
  scuRole: boolean;
  scpRole: boolean;
}

const maxContexts = 128; // PS3.8 9.3.2.2: context ids are odd numbers 1..255

/** PS3.8 9.3.2: fixed 68-byte header, then variable items; every length is checked. */
export function parseAssociateRequest(body: Buffer): AssociateRequest {
  if (body.length < 68) throw invalid('A-ASSOCIATE-RQ is shorter than its fixed fields');
  const request: AssociateRequest = {
    protocolVersion: body.readUInt16BE(0),
    calledAeTitle: readAeTitle(body.subarray(4, 20)),
    callingAeTitle: readAeTitle(body.subarray(20, 36)),
    applicationContext: '',
    contexts: [],
    maxPduLength: 0,
    implementationClassUid: '',
    roleSelections: [],
  };
  for (const item of items(body, 68)) {
    switch (item.type) {
      case 0x10:
        request.applicationContext = readUid(item.value);
        break;
      case 0x20:
        if (request.contexts.length >= maxContexts) throw invalid('more than 128 presentation contexts');
        request.contexts.push(parseContext(item.value));
        break;
      case 0x50:
        parseUserInformation(item.value, request);
        break;
      default:
        // PS3.8 9.3.2: items of unknown type in an RQ are ignored.
        break;
    }
  }
  if (!request.applicationContext) throw invalid('A-ASSOCIATE-RQ without an application context item');
  return request;
}

function parseContext(value: Buffer): ProposedContext {
  if (value.length < 4) throw invalid('presentation context item too short');
  const context: ProposedContext = { id: value[0]!, abstractSyntax: '', transferSyntaxes: [] };
  for (const sub of items(value, 4)) {
    if (sub.type === 0x30) context.abstractSyntax = readUid(sub.value);
    else if (sub.type === 0x40) context.transferSyntaxes.push(readUid(sub.value));
  }
  return context;
}

function parseUserInformation(value: Buffer, request: AssociateRequest): void {
  for (const sub of items(value, 0)) {
    if (sub.type === 0x51) {
      if (sub.value.length !== 4) throw invalid('maximum length sub-item must hold 4 bytes');
      request.maxPduLength = sub.value.readUInt32BE(0);
    } else if (sub.type === 0x52) {
      request.implementationClassUid = readUid(sub.value);
    } else if (sub.type === 0x55) {
      request.implementationVersionName = readAeTitle(sub.value);
    } else if (sub.type === 0x54) {
      request.roleSelections.push(parseRoleSelection(sub.value));
    }
    // Asynchronous operations (0x53), extended negotiation (0x56, 0x57) and user identity (0x58)
    // are not negotiated: leaving them out of the AC declines them.
  }
}

/** PS3.7 D.3.3.4.1: UID length, UID, SCU role, SCP role. */
function parseRoleSelection(value: Buffer): RoleSelection {
  if (value.length < 2) throw invalid('role selection sub-item too short');
  const length = value.readUInt16BE(0);
  if (value.length !== 2 + length + 2) throw invalid('role selection sub-item length does not match its UID');
  return { sopClassUid: readUid(value.subarray(2, 2 + length)), scuRole: value[2 + length] === 1, scpRole: value[3 + length] === 1 };
}

interface Item {
  type: number;
  value: Buffer;
}

/** Item framing shared by items and sub-items: type, reserved, 16-bit big-endian length. */
export function* items(buffer: Buffer, start: number): Generator<Item> {
  let offset = start;
  while (offset < buffer.length) {
    if (offset + 4 > buffer.length) throw invalid('truncated item header');
    const type = buffer[offset]!;
    const length = buffer.readUInt16BE(offset + 2);
    const end = offset + 4 + length;
    if (end > buffer.length) throw invalid(`item 0x${type.toString(16)} runs past the end of its PDU`);
    yield { type, value: buffer.subarray(offset + 4, end) };
    offset = end;
  }
}

/** UIDs may be padded with a trailing NUL (PS3.5 9.1) or, by some peers, a space. */
function readUid(value: Buffer): string {
  const text = value.toString('latin1').replace(/[\0 ]+$/, '');
  if (text.length > 64 || !/^[0-9.]*$/.test(text)) throw invalid('malformed UID in A-ASSOCIATE-RQ');
  return text;
}

/** PS3.5 6.2 AE: leading and trailing spaces are not significant; control characters are invalid. */
function readAeTitle(value: Buffer): string {
  const text = value.toString('latin1').replace(/\0+$/, '').trim();
  if (/[\u0000-\u001f\u007f-\uffff\\]/.test(text)) throw invalid('AE title holds characters outside the default repertoire');
  return text;
}

function invalid(message: string): UpperLayerError {
  return new UpperLayerError(message, abortReason.invalidPduParameterValue);
}
