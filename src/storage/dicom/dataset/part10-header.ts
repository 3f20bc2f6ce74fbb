import { implementationClassUid, implementationVersionName } from '../uids.ts';

export interface FileMetaInput {
  sopClassUid: string;
  sopInstanceUid: string;
  transferSyntaxUid: string;
  /** The calling AE title of the association the instance came in on. */
  sourceAeTitle: string;
}

/**
 * PS3.10 7.1: 128-byte preamble, "DICM", then the File Meta Information group (0002) in explicit
 * VR little endian. The dataset follows byte for byte as received in the negotiated transfer
 * syntax, which (0002,0010) names: the file is never transcoded.
 */
export function encodePart10Header(meta: FileMetaInput): Buffer {
  const elements = [
    element(0x0001, 'OB', Buffer.from([0x00, 0x01])),
    element(0x0002, 'UI', text(meta.sopClassUid, 0x00)),
    element(0x0003, 'UI', text(meta.sopInstanceUid, 0x00)),
    element(0x0010, 'UI', text(meta.transferSyntaxUid, 0x00)),
    element(0x0012, 'UI', text(implementationClassUid, 0x00)),
    element(0x0013, 'SH', text(implementationVersionName, 0x20)),
  ];
  if (meta.sourceAeTitle) elements.push(element(0x0016, 'AE', text(meta.sourceAeTitle.slice(0, 16), 0x20)));
  const body = Buffer.concat(elements);
  const groupLength = Buffer.alloc(4);
  groupLength.writeUInt32LE(body.length, 0);
  return Buffer.concat([Buffer.alloc(128), Buffer.from('DICM', 'latin1'), element(0x0000, 'UL', groupLength), body]);
}

function element(elementNumber: number, vr: string, value: Buffer): Buffer {
  const long = vr === 'OB';
  const header = Buffer.alloc(long ? 12 : 8);
  header.writeUInt16LE(0x0002, 0);
  header.writeUInt16LE(elementNumber, 2);
  header.write(vr, 4, 'latin1');
  if (long) header.writeUInt32LE(value.length, 8);
  else header.writeUInt16LE(value.length, 6);
  return Buffer.concat([header, value]);
}

/** PS3.5 7.1: even length; UIDs pad with NUL, text with a space. */
function text(value: string, pad: number): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  return bytes.length % 2 === 0 ? bytes : Buffer.concat([bytes, Buffer.from([pad])]);
}
