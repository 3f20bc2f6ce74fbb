/**
 * Just enough of the DICOM upper layer (PS3.8 9.3) and DIMSE command encoding (PS3.7 6.3, 9.3.1)
 * to write hostile byte streams by hand: an A-ASSOCIATE-RQ, P-DATA-TF PDUs with a C-STORE-RQ
 * command and dataset fragments, A-RELEASE-RQ. Real transfers use DCMTK's storescu instead.
 */
const applicationContext = '1.2.840.10008.3.1.1.1';
const implementationClassUid = '1.2.826.0.1.3680043.9.7433.1.1';

function pad(text: string, length: number): Buffer {
  return Buffer.from(text.padEnd(length, ' ').slice(0, length), 'ascii');
}

function item(type: number, value: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header[0] = type;
  header.writeUInt16BE(value.length, 2);
  return Buffer.concat([header, value]);
}

function uid(text: string): Buffer {
  // UIDs in items are not padded (PS3.8 annex F); odd lengths are allowed there.
  return Buffer.from(text, 'ascii');
}

function pdu(type: number, body: Buffer): Buffer {
  const header = Buffer.alloc(6);
  header[0] = type;
  header.writeUInt32BE(body.length, 2);
  return Buffer.concat([header, body]);
}

export function associateRequest(options: { calledAe: string; callingAe: string; abstractSyntax: string; transferSyntaxes: string[]; maxPdu?: number }): Buffer {
  const fixed = Buffer.alloc(68);
  fixed.writeUInt16BE(1, 0); // protocol version
  pad(options.calledAe, 16).copy(fixed, 4);
  pad(options.callingAe, 16).copy(fixed, 20);
  const context = item(0x20, Buffer.concat([Buffer.from([1, 0, 0, 0]), item(0x30, uid(options.abstractSyntax)), ...options.transferSyntaxes.map((ts) => item(0x40, uid(ts)))]));
  const maxLength = Buffer.alloc(4);
  maxLength.writeUInt32BE(options.maxPdu ?? 16384);
  const userInfo = item(0x50, Buffer.concat([item(0x51, maxLength), item(0x52, uid(implementationClassUid))]));
  return pdu(0x01, Buffer.concat([fixed, item(0x10, uid(applicationContext)), context, userInfo]));
}

function element(tagElement: number, value: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt16LE(0x0000, 0);
  header.writeUInt16LE(tagElement, 2);
  header.writeUInt32LE(value.length, 4);
  return Buffer.concat([header, value]);
}

function uidValue(text: string): Buffer {
  const bytes = Buffer.from(text, 'ascii');
  return bytes.length % 2 ? Buffer.concat([bytes, Buffer.from([0])]) : bytes;
}

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(value);
  return b;
}

/** A C-STORE-RQ command set, implicit VR little endian as PS3.7 6.3.1 requires. */
export function cStoreCommand(sopClassUid: string, sopInstanceUid: string, messageId = 1): Buffer {
  const body = Buffer.concat([
    element(0x0002, uidValue(sopClassUid)),
    element(0x0100, u16(0x0001)),
    element(0x0110, u16(messageId)),
    element(0x0700, u16(0x0000)),
    element(0x0800, u16(0x0000)),
    element(0x1000, uidValue(sopInstanceUid)),
  ]);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(body.length);
  return Buffer.concat([element(0x0000, length), body]);
}

/** A P-DATA-TF with one PDV (PS3.8 9.3.5, annex E.2: bit 0 command, bit 1 last fragment). */
export function pData(contextId: number, fragment: Buffer, isCommand: boolean, isLast: boolean): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(fragment.length + 2);
  return pdu(0x04, Buffer.concat([length, Buffer.from([contextId, (isCommand ? 1 : 0) | (isLast ? 2 : 0)]), fragment]));
}

export function releaseRequest(): Buffer {
  return pdu(0x05, Buffer.alloc(4));
}

/** A whole association's bytes sending one instance: RQ, command, dataset in fragments, release. */
export function storeStream(options: { calledAe: string; sopClassUid: string; sopInstanceUid: string; transferSyntaxUid: string; dataset: Buffer; fragment?: number }): Buffer {
  const parts = [
    associateRequest({ calledAe: options.calledAe, callingAe: 'FAULTSFUZZ', abstractSyntax: options.sopClassUid, transferSyntaxes: [options.transferSyntaxUid] }),
    pData(1, cStoreCommand(options.sopClassUid, options.sopInstanceUid), true, true),
  ];
  const size = options.fragment ?? 4096;
  for (let offset = 0; offset < options.dataset.length || offset === 0; offset += size) {
    parts.push(pData(1, options.dataset.subarray(offset, offset + size), false, offset + size >= options.dataset.length));
    if (options.dataset.length === 0) break;
  }
  parts.push(releaseRequest());
  return Buffer.concat(parts);
}
