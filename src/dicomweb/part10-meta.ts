/**
 * The File Meta Information of an uploaded Part-10 file (PS3.10 7.1): 128-byte preamble, "DICM",
 * then group 0002 in explicit VR little endian, its length given by (0002,0000). The service keeps
 * the dataset that follows byte for byte and writes its own meta header, as for C-STORE.
 */
export interface Part10Meta {
  sopClassUid: string;
  sopInstanceUid: string;
  transferSyntaxUid: string;
  /** Bytes of the preamble and meta group: the dataset starts here. */
  datasetOffset: number;
}

/** A meta group larger than this is not one a sender means. */
export const maxMetaBytes = 64 * 1024;

/** 'incomplete' while more bytes are needed; a reason string when the bytes are not a Part-10 file. */
export function readPart10Meta(head: Buffer): Part10Meta | 'incomplete' | { error: string } {
  if (head.length < 144) return 'incomplete';
  if (head.toString('latin1', 128, 132) !== 'DICM') return { error: 'not a DICOM Part-10 file (no "DICM" after the preamble)' };
  if (head.readUInt16LE(132) !== 0x0002 || head.readUInt16LE(134) !== 0x0000 || head.toString('latin1', 136, 138) !== 'UL') {
    return { error: 'the file meta information does not start with its group length (0002,0000)' };
  }
  const groupLength = head.readUInt32LE(140);
  if (groupLength > maxMetaBytes) return { error: 'the file meta information group is too long' };
  const end = 144 + groupLength;
  if (head.length < end) return 'incomplete';
  const values = new Map<number, string>();
  for (let at = 144; at < end; ) {
    if (at + 8 > end) return { error: 'the file meta information group is truncated' };
    const group = head.readUInt16LE(at);
    const element = head.readUInt16LE(at + 2);
    const vr = head.toString('latin1', at + 4, at + 6);
    const long = ['OB', 'OD', 'OF', 'OL', 'OV', 'OW', 'SQ', 'UC', 'UN', 'UR', 'UT', 'UV'].includes(vr);
    const length = long ? head.readUInt32LE(at + 8) : head.readUInt16LE(at + 6);
    const valueAt = at + (long ? 12 : 8);
    if (group !== 0x0002 || valueAt + length > end) return { error: 'the file meta information group is malformed' };
    if (vr === 'UI') values.set(element, head.toString('latin1', valueAt, valueAt + length).replace(/[\0 ]+$/, ''));
    at = valueAt + length;
  }
  const sopClassUid = values.get(0x0002);
  const sopInstanceUid = values.get(0x0003);
  const transferSyntaxUid = values.get(0x0010);
  if (!sopClassUid || !sopInstanceUid || !transferSyntaxUid) return { error: 'the file meta information lacks (0002,0002), (0002,0003) or (0002,0010)' };
  return { sopClassUid, sopInstanceUid, transferSyntaxUid, datasetOffset: end };
}
