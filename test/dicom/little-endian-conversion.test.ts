import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConversionError, LittleEndianConversion, type LittleEndianSyntax, type SourceSyntax } from '../../src/storage/dicom/dataset/little-endian-conversion.ts';

const u16 = (value: number) => Buffer.from([value & 0xff, value >> 8]);
const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value >>> 0);
  return bytes;
};
const tag = (value: number) => Buffer.concat([u16(value >>> 16), u16(value & 0xffff)]);
const undefinedLength = 0xffffffff;

const implicit = (t: number, value: Buffer, length = value.length) => Buffer.concat([tag(t), u32(length), value]);
const explicitShort = (t: number, vr: string, value: Buffer) => Buffer.concat([tag(t), Buffer.from(vr, 'latin1'), u16(value.length), value]);
const explicitLong = (t: number, vr: string, value: Buffer, length = value.length) => Buffer.concat([tag(t), Buffer.from(vr, 'latin1'), u16(0), u32(length), value]);
const item = (content: Buffer, length = content.length) => Buffer.concat([tag(0xfffee000), u32(length), content]);
const itemEnd = Buffer.concat([tag(0xfffee00d), u32(0)]);
const sequenceEnd = Buffer.concat([tag(0xfffee0dd), u32(0)]);

function convert(source: Buffer, from: SourceSyntax, to: LittleEndianSyntax, chunkSize = source.length): Buffer {
  const conversion = new LittleEndianConversion(from, to);
  const out: Buffer[] = [];
  for (let at = 0; at < source.length; at += chunkSize) out.push(...conversion.push(source.subarray(at, at + chunkSize)));
  out.push(...conversion.end());
  return Buffer.concat(out);
}

const name = Buffer.from('Doe^Jane');
const meaning = Buffer.from('Chest X ray ');
/** Implicit VR elements around a standard sequence (given in either length form). */
const implicitElements = (standardSequence: Buffer) =>
  Buffer.concat([
    implicit(0x00080016, Buffer.from('1.2.840.10008.5.1.4.1.1.7\0')),
    standardSequence,
    implicit(0x00090010, Buffer.from('ACME 1.0')),
    implicit(0x00091001, Buffer.from([1, 2, 3, 4])),
    Buffer.concat([tag(0x00091002), u32(undefinedLength), item(Buffer.concat([implicit(0x00100010, name), itemEnd]), undefinedLength), sequenceEnd]),
    implicit(0x00100010, name),
    implicit(0x00280106, u16(7)),
    implicit(0x7fe00010, Buffer.from([9, 8, 7, 6])),
  ]);
// As a modality writes implicit VR: a group length, a defined-length standard sequence, a private
// block with a defined-length element and an undefined-length private sequence, a "US or SS"
// element and native pixel data.
const implicitDataset = Buffer.concat([implicit(0x00080000, u32(26)), implicitElements(implicit(0x00081032, item(implicit(0x00080104, meaning))))]);
const explicitDataset = Buffer.concat([
  explicitShort(0x00080016, 'UI', Buffer.from('1.2.840.10008.5.1.4.1.1.7\0')),
  explicitLong(0x00081032, 'SQ', Buffer.concat([item(Buffer.concat([explicitShort(0x00080104, 'LO', meaning), itemEnd]), undefinedLength), sequenceEnd]), undefinedLength),
  explicitShort(0x00090010, 'LO', Buffer.from('ACME 1.0')),
  explicitLong(0x00091001, 'UN', Buffer.from([1, 2, 3, 4])),
  explicitLong(0x00091002, 'SQ', Buffer.concat([item(Buffer.concat([explicitShort(0x00100010, 'PN', name), itemEnd]), undefinedLength), sequenceEnd]), undefinedLength),
  explicitShort(0x00100010, 'PN', name),
  explicitShort(0x00280106, 'US', u16(7)),
  explicitLong(0x7fe00010, 'OW', Buffer.from([9, 8, 7, 6])),
]);

test('implicit to explicit VR: VRs from the dictionary, private creators LO, other private elements UN, sequences and items delimited, group lengths left out', () => {
  assert.deepEqual(convert(implicitDataset, 'implicit-little', 'explicit-little'), explicitDataset);
  // However the bytes arrive.
  for (const size of [1, 3, 7, 64]) assert.deepEqual(convert(implicitDataset, 'implicit-little', 'explicit-little', size), explicitDataset, `chunks of ${size}`);
});

test('explicit to implicit VR: VRs dropped, an undefined-length UN read as a sequence of implicit VR items', () => {
  const expected = implicitElements(Buffer.concat([tag(0x00081032), u32(undefinedLength), item(Buffer.concat([implicit(0x00080104, meaning), itemEnd]), undefinedLength), sequenceEnd]));
  assert.deepEqual(convert(explicitDataset, 'explicit-little', 'implicit-little', 5), expected);
  // PS3.5 6.2.2: an undefined-length UN holds implicit VR items.
  const unknownSequence = explicitLong(0x00291010, 'UN', Buffer.concat([item(implicit(0x00100020, Buffer.from('ID01'))), sequenceEnd]), undefinedLength);
  assert.deepEqual(
    convert(unknownSequence, 'explicit-little', 'explicit-little'),
    explicitLong(0x00291010, 'SQ', Buffer.concat([item(Buffer.concat([explicitShort(0x00100020, 'LO', Buffer.from('ID01')), itemEnd]), undefinedLength), sequenceEnd]), undefinedLength),
  );
});

test('a value too long for a 16-bit length is written UN; a truncated or malformed dataset is refused', () => {
  const long = Buffer.alloc(0x10002, 1);
  assert.deepEqual(convert(implicit(0x00283002, long), 'implicit-little', 'explicit-little'), explicitLong(0x00283002, 'UN', long));
  assert.throws(() => convert(implicitDataset.subarray(0, implicitDataset.length - 2), 'implicit-little', 'explicit-little'), ConversionError);
  assert.throws(() => convert(Buffer.concat([tag(0x00081032), u32(undefinedLength), implicit(0x00100010, name)]), 'implicit-little', 'explicit-little'), ConversionError);
  assert.throws(() => convert(explicitShort(0x00100010, 'p1', name), 'explicit-little', 'implicit-little'), ConversionError);
});

test('explicit VR big endian to little endian: binary values swapped by their unit across any chunking, text and UN as they are', () => {
  const be16 = (value: number) => Buffer.from([value >> 8, value & 0xff]);
  const be32 = (value: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(value >>> 0);
    return bytes;
  };
  const beTag = (value: number) => Buffer.concat([be16(value >>> 16), be16(value & 0xffff)]);
  const bigShort = (t: number, vr: string, value: Buffer) => Buffer.concat([beTag(t), Buffer.from(vr, 'latin1'), be16(value.length), value]);
  const bigLong = (t: number, vr: string, value: Buffer, length = value.length) => Buffer.concat([beTag(t), Buffer.from(vr, 'latin1'), be16(0), be32(length), value]);
  const fd = Buffer.alloc(8);
  fd.writeDoubleBE(1.5);
  const fdLittle = Buffer.alloc(8);
  fdLittle.writeDoubleLE(1.5);
  // Each element: tag, VR, its value in big endian and in little endian.
  const elements: [number, string, Buffer, Buffer][] = [
    [0x00081150, 'UI', Buffer.from('1.2.3\0'), Buffer.from('1.2.3\0')],
    [0x00100010, 'PN', name, name],
    [0x00181310, 'US', Buffer.concat([be16(1), be16(2), be16(3), be16(4)]), Buffer.concat([u16(1), u16(2), u16(3), u16(4)])],
    [0x00209165, 'AT', Buffer.concat([be16(0x0020), be16(0x9157)]), Buffer.concat([u16(0x0020), u16(0x9157)])],
    [0x00289110, 'FD', fd, fdLittle],
    [0x00291010, 'UN', Buffer.from([1, 2, 3, 4]), Buffer.from([1, 2, 3, 4])],
    [0x00540081, 'UL', be32(70000), u32(70000)],
    [0x7fe00010, 'OW', Buffer.concat([be16(0x0102), be16(0x0304)]), Buffer.concat([u16(0x0102), u16(0x0304)])],
  ];
  const long = (vr: string) => ['OW', 'UN'].includes(vr);
  // A defined-length sequence of one defined-length item, after the first element.
  const source = Buffer.concat([
    ...elements.slice(0, 1).map(([t, vr, value]) => bigShort(t, vr, value)),
    bigLong(0x00081199, 'SQ', Buffer.concat([beTag(0xfffee000), be32(10), bigShort(0x00280010, 'US', be16(512))]), 18),
    ...elements.slice(1).map(([t, vr, value]) => (long(vr) ? bigLong(t, vr, value) : bigShort(t, vr, value))),
  ]);
  const expected = Buffer.concat([
    ...elements.slice(0, 1).map(([t, vr, , value]) => explicitShort(t, vr, value)),
    explicitLong(0x00081199, 'SQ', Buffer.concat([item(Buffer.concat([explicitShort(0x00280010, 'US', u16(512)), itemEnd]), undefinedLength), sequenceEnd]), undefinedLength),
    ...elements.slice(1).map(([t, vr, , value]) => (long(vr) ? explicitLong(t, vr, value) : explicitShort(t, vr, value))),
  ]);
  for (const size of [source.length, 1, 3, 5]) assert.deepEqual(convert(source, 'explicit-big', 'explicit-little', size), expected, `chunks of ${size}`);
});

test('a "US or SS" element from implicit VR follows Pixel Representation: SS in a signed image', () => {
  const signed = Buffer.concat([implicit(0x00280103, u16(1)), implicit(0x00280106, u16(0xfc18))]);
  assert.deepEqual(convert(signed, 'implicit-little', 'explicit-little', 9), Buffer.concat([explicitShort(0x00280103, 'US', u16(1)), explicitShort(0x00280106, 'SS', u16(0xfc18))]));
});
