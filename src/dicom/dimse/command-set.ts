/**
 * DIMSE command sets (PS3.7 section 6.3, annex E): group 0000 elements, always encoded implicit VR
 * little endian whatever the negotiated transfer syntax. The handful of VRs used here (UI, US,
 * UL, AE, LO, AT) are known per tag, so no data dictionary is needed.
 */

export const tag = {
  commandGroupLength: 0x00000000,
  affectedSopClassUid: 0x00000002,
  requestedSopClassUid: 0x00000003,
  commandField: 0x00000100,
  messageId: 0x00000110,
  messageIdBeingRespondedTo: 0x00000120,
  moveDestination: 0x00000600,
  moveOriginatorAeTitle: 0x00001030,
  moveOriginatorMessageId: 0x00001031,
  remainingSuboperations: 0x00001020,
  completedSuboperations: 0x00001021,
  failedSuboperations: 0x00001022,
  warningSuboperations: 0x00001023,
  priority: 0x00000700,
  commandDataSetType: 0x00000800,
  status: 0x00000900,
  offendingElement: 0x00000901,
  errorComment: 0x00000902,
  affectedSopInstanceUid: 0x00001000,
  requestedSopInstanceUid: 0x00001001,
} as const;

/** PS3.7 E.1: CommandDataSetType 0x0101 means "no data set"; any other value means one follows. */
export const noDataSet = 0x0101;

export const commandField = {
  cStoreRq: 0x0001,
  cStoreRsp: 0x8001,
  cGetRq: 0x0010,
  cGetRsp: 0x8010,
  cFindRq: 0x0020,
  cFindRsp: 0x8020,
  cMoveRq: 0x0021,
  cMoveRsp: 0x8021,
  cEchoRq: 0x0030,
  cEchoRsp: 0x8030,
  nSetRq: 0x0120,
  nSetRsp: 0x8120,
  nCreateRq: 0x0140,
  nCreateRsp: 0x8140,
  cCancelRq: 0x0fff,
} as const;

/** A decoded command set: element values by tag. */
export class CommandSet {
  readonly #values: Map<number, Buffer>;

  constructor(values: Map<number, Buffer>) {
    this.#values = values;
  }

  has(elementTag: number): boolean {
    return this.#values.has(elementTag);
  }

  uint16(elementTag: number): number | undefined {
    const value = this.#values.get(elementTag);
    return value && value.length === 2 ? value.readUInt16LE(0) : undefined;
  }

  /** UI/AE/LO values without their padding. */
  text(elementTag: number): string | undefined {
    const value = this.#values.get(elementTag);
    return value === undefined ? undefined : value.toString('latin1').replace(/[\0 ]+$/, '').trim();
  }
}

export class CommandSetError extends Error {
  override readonly name = 'CommandSetError';
}

/** PS3.7 6.3.1: elements in ascending order, all in group 0000, lengths within the buffer. */
export function decodeCommandSet(bytes: Buffer): CommandSet {
  const values = new Map<number, Buffer>();
  let offset = 0;
  while (offset < bytes.length) {
    if (offset + 8 > bytes.length) throw new CommandSetError('truncated command element header');
    const group = bytes.readUInt16LE(offset);
    const element = bytes.readUInt16LE(offset + 2);
    const length = bytes.readUInt32LE(offset + 4);
    if (group !== 0x0000) throw new CommandSetError(`command set holds an element of group ${group.toString(16).padStart(4, '0')}`);
    if (offset + 8 + length > bytes.length) throw new CommandSetError('command element runs past the end of the command set');
    values.set(element, bytes.subarray(offset + 8, offset + 8 + length));
    offset += 8 + length;
  }
  if (!values.has(tag.commandField)) throw new CommandSetError('command set without CommandField (0000,0100)');
  return new CommandSet(values);
}

export type CommandValue =
  | { tag: number; vr: 'UI' | 'AE' | 'LO'; value: string }
  | { tag: number; vr: 'US'; value: number }
  | { tag: number; vr: 'AT'; value: number };

/** Encodes elements in ascending tag order after the group length, as PS3.7 6.3.1 requires. */
export function encodeCommandSet(elements: CommandValue[]): Buffer {
  const sorted = [...elements].sort((a, b) => a.tag - b.tag);
  const encoded = sorted.map(encodeElement);
  const bodyLength = encoded.reduce((sum, part) => sum + part.length, 0);
  const groupLength = Buffer.alloc(12);
  groupLength.writeUInt32LE(4, 4);
  groupLength.writeUInt32LE(bodyLength, 8);
  return Buffer.concat([groupLength, ...encoded]);
}

function encodeElement(element: CommandValue): Buffer {
  let value: Buffer;
  switch (element.vr) {
    case 'US':
      value = Buffer.alloc(2);
      value.writeUInt16LE(element.value, 0);
      break;
    case 'AT':
      value = Buffer.alloc(4);
      value.writeUInt16LE(element.value >>> 16, 0);
      value.writeUInt16LE(element.value & 0xffff, 2);
      break;
    case 'UI':
      value = padded(element.value, 0x00);
      break;
    case 'AE':
    case 'LO':
      // LO Error Comment is limited to 64 characters (PS3.5 6.2), so are AE titles to 16.
      value = padded(element.value.slice(0, element.vr === 'AE' ? 16 : 64).replace(/[^\x20-\x7e]/g, '?'), 0x20);
      break;
  }
  const header = Buffer.alloc(8);
  header.writeUInt16LE(0x0000, 0);
  header.writeUInt16LE(element.tag & 0xffff, 2);
  header.writeUInt32LE(value.length, 4);
  return Buffer.concat([header, value]);
}

/** PS3.5 7.1: values have even length; UIDs pad with NUL, text with space. */
function padded(text: string, pad: number): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  return bytes.length % 2 === 0 ? bytes : Buffer.concat([bytes, Buffer.from([pad])]);
}
