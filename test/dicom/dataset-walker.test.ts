import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import { DatasetWalker, type ByteSyntax } from '../../src/storage/dicom/dataset/dataset-walker.ts';
import { HeaderSniffer } from '../../src/storage/dicom/dataset/header-sniffer.ts';

// Element builders (PS3.5 7.1): explicit or implicit VR, little or big endian.
function el(syntax: ByteSyntax, tag: number, vr: string, value: Buffer, undefinedLength = false): Buffer {
  const big = syntax === 'explicit-big';
  const u16 = (v: number) => {
    const b = Buffer.alloc(2);
    big ? b.writeUInt16BE(v) : b.writeUInt16LE(v);
    return b;
  };
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    big ? b.writeUInt32BE(v) : b.writeUInt32LE(v);
    return b;
  };
  const length = undefinedLength ? 0xffffffff : value.length;
  const head = [u16(tag >>> 16), u16(tag & 0xffff)];
  if (syntax === 'implicit-little') head.push(u32(length));
  else if (['OB', 'OW', 'SQ', 'UN', 'UT'].includes(vr)) head.push(Buffer.from(vr), Buffer.alloc(2), u32(length));
  else head.push(Buffer.from(vr), u16(length));
  return Buffer.concat([...head, value]);
}
function marker(syntax: ByteSyntax, tag: number, length: number): Buffer {
  const b = Buffer.alloc(8);
  if (syntax === 'explicit-big') {
    b.writeUInt16BE(tag >>> 16, 0);
    b.writeUInt16BE(tag & 0xffff, 2);
    b.writeUInt32BE(length, 4);
  } else {
    b.writeUInt16LE(tag >>> 16, 0);
    b.writeUInt16LE(tag & 0xffff, 2);
    b.writeUInt32LE(length, 4);
  }
  return b;
}
const text = (value: string) => Buffer.from(value.length % 2 ? `${value} ` : value, 'latin1');

/** A dataset with a nested undefined-length sequence before the wanted elements and pixel data after. */
function sample(syntax: ByteSyntax): Buffer {
  const inner = Buffer.concat([el(syntax, 0x00080100, 'SH', text('CODE')), el(syntax, 0x00080104, 'LO', text('meaning'))]);
  const nested = Buffer.concat([
    marker(syntax, 0xfffee000, 0xffffffff),
    el(syntax, 0x00081150, 'UI', text('1.2.3')),
    el(syntax, 0x00400260, 'SQ', Buffer.concat([marker(syntax, 0xfffee000, inner.length), inner]), false),
    marker(syntax, 0xfffee00d, 0),
  ]);
  return Buffer.concat([
    el(syntax, 0x00080005, 'CS', text('ISO_IR 100')),
    el(syntax, 0x00081140, 'SQ', Buffer.concat([nested, marker(syntax, 0xfffee0dd, 0)]), true),
    el(syntax, 0x00100010, 'PN', Buffer.from('M\u00fcller^Hans', 'latin1')),
    el(syntax, 0x00100020, 'LO', text('PID-1')),
    el(syntax, 0x7fe00010, 'OW', Buffer.alloc(1000, 7)),
  ]);
}

const wanted = new Set([0x00100010, 0x00100020, 0x00080100]);

function walk(syntax: ByteSyntax, bytes: Buffer, chunk = bytes.length): DatasetWalker {
  const walker = new DatasetWalker({ syntax, wanted, maxValueLength: 1024 });
  for (let offset = 0; offset < bytes.length; offset += chunk) walker.push(bytes.subarray(offset, offset + chunk));
  walker.end();
  return walker;
}

for (const syntax of ['explicit-little', 'implicit-little', 'explicit-big'] as const) {
  test(`${syntax}: nested sequences are skipped, top-level values kept, whether fed whole or byte by byte`, () => {
    for (const chunk of [Number.MAX_SAFE_INTEGER, 1, 7]) {
      const walker = walk(syntax, sample(syntax), chunk);
      assert.equal(walker.error, undefined);
      assert.equal(walker.values.get(0x00100020)?.toString('latin1'), 'PID-1 ');
      assert.equal(walker.values.get(0x00100010)?.toString('latin1'), 'M\u00fcller^Hans');
      // (0008,0100) exists only inside the sequence: nested values are never kept.
      assert.equal(walker.values.has(0x00080100), false);
    }
  });

  test(`${syntax}: a dataset cut anywhere inside an element is reported as truncated`, () => {
    const bytes = sample(syntax);
    for (const cut of [3, 20, bytes.length - 500, bytes.length - 1]) {
      assert.match(walk(syntax, bytes.subarray(0, cut)).error ?? '', /ends (in the middle of an element|inside)/, `cut at ${cut}`);
    }
  });
}

test('malformed structures are reported, not thrown', () => {
  const s = 'explicit-little' as const;
  const cases: [string, Buffer, RegExp][] = [
    ['a VR that is not two letters', Buffer.concat([el(s, 0x00100020, 'LO', text('X')).fill(0x31, 4, 6)]), /no valid VR/],
    ['an undefined length on a VR that cannot have one', el(s, 0x00100020, 'UT', Buffer.alloc(0), true), /undefined length/],
    ['a sequence that never ends', Buffer.concat([el(s, 0x00081140, 'SQ', marker(s, 0xfffee000, 0xffffffff), true)]), /inside an undefined-length sequence/],
    ['a foreign tag inside a sequence', Buffer.concat([el(s, 0x00081140, 'SQ', el(s, 0x00100020, 'LO', text('X')), true)]), /inside a sequence/],
    ['an item delimiter at the top level', marker(s, 0xfffee00d, 0), /item delimiter/],
    [
      'an element running past its defined-length item',
      Buffer.concat([el(s, 0x00081140, 'SQ', Buffer.alloc(0), true), marker(s, 0xfffee000, 4), el(s, 0x00100020, 'LO', text('ABCDEFGH'))]),
      /runs past|unexpected tag/,
    ],
  ];
  for (const [name, bytes, expected] of cases) {
    assert.match(walk(s, bytes).error ?? '(no error)', expected, name);
  }
  // 100 nested undefined-length sequences: refused beyond the depth limit.
  let deep = Buffer.alloc(0);
  for (let i = 0; i < 100; i++) deep = Buffer.concat([el(s, 0x00081140, 'SQ', Buffer.concat([marker(s, 0xfffee000, 0xffffffff), deep]), true)]);
  assert.match(walk(s, deep).error ?? '', /nested too deeply/);
});

test('an undefined-length UN element holds implicit VR content (PS3.5 6.2.2)', () => {
  const inner = Buffer.concat([marker('implicit-little', 0xfffee000, 0xffffffff), el('implicit-little', 0x00100020, '', text('IN')), marker('implicit-little', 0xfffee00d, 0), marker('implicit-little', 0xfffee0dd, 0)]);
  const bytes = Buffer.concat([el('explicit-little', 0x00091010, 'UN', inner, true), el('explicit-little', 0x00100020, 'LO', text('OUT'))]);
  const walker = walk('explicit-little', bytes);
  assert.equal(walker.error, undefined);
  assert.equal(walker.values.get(0x00100020)?.toString('latin1'), 'OUT ');
});

test('deflated datasets: the header is read through inflation, UTF-8 names decoded; corrupt deflate is reported', async () => {
  const utf8Name = Buffer.from('Ren\u00e9e^\u00c5sa', 'utf8');
  const withUtf8 = Buffer.concat([
    el('explicit-little', 0x00080005, 'CS', text('ISO_IR 192')),
    el('explicit-little', 0x00100010, 'PN', utf8Name.length % 2 ? Buffer.concat([utf8Name, Buffer.from(' ')]) : utf8Name),
    el('explicit-little', 0x00100020, 'LO', text('P1')),
    el('explicit-little', 0x7fe00010, 'OW', Buffer.alloc(4_000_000, 1)),
  ]);
  const deflated = deflateRawSync(withUtf8);
  const sniffer = new HeaderSniffer('1.2.840.10008.1.2.1.99');
  for (let offset = 0; offset < deflated.length; offset += 1000) await sniffer.push(deflated.subarray(offset, offset + 1000));
  const result = await sniffer.finish();
  assert.equal(result.error, undefined);
  assert.equal(result.fields.patientName, 'Ren\u00e9e^\u00c5sa');
  assert.equal(result.fields.patientId, 'P1');

  const broken = new HeaderSniffer('1.2.840.10008.1.2.1.99');
  await broken.push(Buffer.from('definitely not a deflate stream, just text'));
  assert.match((await broken.finish()).error ?? '', /does not inflate|ends/);
});

test('text values follow Specific Character Set: ISO_IR 100 is Latin-1', async () => {
  const sniffer = new HeaderSniffer('1.2.840.10008.1.2');
  await sniffer.push(sample('implicit-little'));
  const result = await sniffer.finish();
  assert.equal(result.error, undefined);
  assert.equal(result.fields.patientName, 'M\u00fcller^Hans');
});
