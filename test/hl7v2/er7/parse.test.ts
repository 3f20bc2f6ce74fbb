import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEr7, type ParseOptions } from '../../../src/hl7v2/er7/parse.ts';
import { readHeader } from '../../../src/hl7v2/er7/header.ts';
import { fieldOf, segmentsNamed, valueOf, firstSegment } from '../../../src/hl7v2/er7/message.ts';

const options: ParseOptions = { defaultCharset: 'UNICODE UTF-8', maxBytes: 1024 * 1024 };
const parse = (text: string | Buffer, o = options) => parseEr7(typeof text === 'string' ? Buffer.from(text, 'utf8') : text, o);
const base = 'MSH|^~\\&|APP|FAC|GW|GWF|20240101120000||ADT^A01^ADT_A01|C1|P|2.5.1';

test('segment terminators CR, LF and CRLF all split segments; blank lines are skipped', () => {
  for (const eol of ['\r', '\n', '\r\n']) {
    const result = parse(`${base}${eol}PID|1||123^^^H^MR${eol}${eol}PV1|1|I${eol}`);
    assert.deepEqual(result.problems, []);
    assert.deepEqual(result.message!.segments.map((s) => s.name), ['MSH', 'PID', 'PV1']);
    assert.equal(valueOf(firstSegment(result.message!, 'PID'), 3, 4), 'H');
  }
});

test('spaces and tabs after a segment are padding, not part of its last field', () => {
  const result = parse(`${base} \t\rPID|1||123^^^H^MR||Doe^Jane||19800101|F  \r`);
  assert.deepEqual(result.problems, []);
  assert.equal(readHeader(result.message!).versionField, '2.5.1');
  assert.equal(valueOf(firstSegment(result.message!, 'PID'), 8), 'F');
});

test('stray control characters: a form feed becomes a line break, others are removed, with a warning per field', () => {
  const result = parse(`${base}\rPID|1||123^^^H^MR||Do\x07e^Ja\\X01\\ne\rOBX|1|TX|R^Report^L||page one\x0cpage two||||||F\r`);
  assert.deepEqual(
    result.problems.map((p) => [p.severity, p.code, p.location?.segment, p.location?.field]),
    [
      ['W', 102, 'PID', 5],
      ['W', 102, 'OBX', 5],
    ],
  );
  assert.match(result.problems[0]!.message, /U\+0007, U\+0001/);
  assert.equal(valueOf(firstSegment(result.message!, 'PID'), 5), 'Doe');
  assert.equal(valueOf(firstSegment(result.message!, 'PID'), 5, 2), 'Jane');
  assert.equal(valueOf(firstSegment(result.message!, 'OBX'), 5), 'page one\npage two');
});

test('ISO 8859-1 text with bytes 0x80-0x9F (Windows-1252 punctuation) is read as Windows-1252, with a warning', () => {
  for (const charsetField of ['||||||8859/1', '']) {
    const bytes = Buffer.concat([Buffer.from(`${base}${charsetField}\rPID|1||1^^^H^MR||O`, 'latin1'), Buffer.from([0x92]), Buffer.from('Brien^Se', 'latin1'), Buffer.from([0xe1]), Buffer.from('n\r', 'latin1')]);
    const result = parse(bytes);
    assert.equal(valueOf(firstSegment(result.message!, 'PID'), 5), 'O\u2019Brien', charsetField);
    assert.equal(valueOf(firstSegment(result.message!, 'PID'), 5, 2), 'Se\u00e1n');
    assert.ok(result.problems.some((p) => p.severity === 'W' && /Windows-1252/.test(p.message)));
    assert.ok(result.problems.every((p) => p.severity === 'W'));
  }
});

test('MSH-1 and MSH-2 define the delimiters, including non-default ones', () => {
  const result = parse('MSH*!@#$*APP*FAC*GW*GWF*20240101**ADT!A01*C2*P*2.5.1\rPID*1**A@B!x$y!z!!MR\r');
  assert.deepEqual(result.problems, []);
  const message = result.message!;
  assert.deepEqual(message.delimiters, { field: '*', component: '!', repetition: '@', escape: '#', subcomponent: '$' });
  const pid = firstSegment(message, 'PID');
  assert.equal(fieldOf(pid, 3).length, 2);
  assert.equal(valueOf(pid, 3, 1, 1, 2), 'B');
  assert.equal(valueOf(pid, 3, 2, 2, 2), 'y');
  assert.equal(valueOf(pid, 3, 5, 1, 2), 'MR');
  assert.equal(readHeader(message).triggerEvent, 'A01');
});

test('an HL7 v2.1 header without a trigger event in MSH-9 takes it from EVN-1; MSH-9.2 wins when both are sent', () => {
  const v21 = parse('MSH|^~\\&|APP|FAC|GW|GWF|20240101||ADT|C3|P|2.1\rEVN|A04|20240101\rPID|1||X1\r');
  assert.equal(readHeader(v21.message!).messageCode, 'ADT');
  assert.equal(readHeader(v21.message!).triggerEvent, 'A04');
  const both = parse('MSH|^~\\&|APP|FAC|GW|GWF|20240101||ADT^A08|C4|P|2.3\rEVN|A01|20240101\rPID|1||X1\r');
  assert.equal(readHeader(both.message!).triggerEvent, 'A08');
  const neither = parse('MSH|^~\\&|APP|FAC|GW|GWF|20240101||ADT|C5|P|2.1\rPID|1||X1\r');
  assert.equal(readHeader(neither.message!).triggerEvent, '');
});

test('a leading UTF-8 BOM is removed and implies UTF-8', () => {
  const result = parse(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${base}\rPID|1||1||Müller^Jörg`)]), { ...options, defaultCharset: '8859/1' });
  assert.equal(result.message!.charset, 'UNICODE UTF-8');
  assert.equal(valueOf(firstSegment(result.message!, 'PID'), 5, 2), 'Jörg');
});

test('escape sequences are decoded after splitting', () => {
  const result = parse(`${base}\rNTE|1||a\\F\\b\\S\\c\\T\\d\\R\\e\\E\\f\\.br\\g\\X41C3A9\\h\\H\\bold\\N\\\\Zcustom\\|x\\`);
  const nte = firstSegment(result.message!, 'NTE');
  assert.equal(fieldOf(nte, 3).length, 1);
  assert.equal(valueOf(nte, 3), 'a|b^c&d~e\\f\ngAéhbold\\Zcustom\\');
  assert.equal(valueOf(nte, 4), 'x\\', 'an unterminated escape stays literal');
});

test('\\Xhh\\ bytes are read in the message charset', () => {
  const latin = parse(`${base}||||||8859/1\rNTE|1||\\XE9\\`);
  assert.equal(valueOf(firstSegment(latin.message!, 'NTE'), 3), 'é');
});

test('MSH-18 selects the charset: 8859/1 bytes are read as Latin-1', () => {
  const bytes = Buffer.from(`${base}||||||8859/1\rPID|1||1||M\xfcller`, 'latin1');
  const result = parse(bytes);
  assert.deepEqual(result.problems, []);
  assert.equal(result.message!.charset, '8859/1');
  assert.equal(valueOf(firstSegment(result.message!, 'PID'), 5), 'Müller');
});

test('MSH-18 UNICODE UTF-8 with invalid bytes is an error', () => {
  const result = parse(Buffer.from(`${base}||||||UNICODE UTF-8\rPID|1||1||M\xfcller`, 'latin1'));
  assert.equal(result.problems[0]!.severity, 'E');
  assert.equal(result.problems[0]!.location!.field, 18);
});

test('undeclared charset uses the per-client default; invalid UTF-8 falls back to Latin-1 with a warning', () => {
  const bytes = Buffer.from(`${base}\rPID|1||1||M\xfcller`, 'latin1');
  const asLatin = parse(bytes, { ...options, defaultCharset: '8859/1' });
  assert.deepEqual(asLatin.problems, []);
  assert.equal(valueOf(firstSegment(asLatin.message!, 'PID'), 5), 'Müller');
  const fallback = parse(bytes);
  assert.equal(fallback.problems.length, 1);
  assert.equal(fallback.problems[0]!.severity, 'W');
  assert.equal(valueOf(firstSegment(fallback.message!, 'PID'), 5), 'Müller');
});

test('an unknown MSH-18 on 7-bit text is a warning; on 8-bit text an error', () => {
  assert.equal(parse(`${base}||||||code1~code2\rPID|1`).problems[0]!.severity, 'W');
  assert.equal(parse(Buffer.from(`${base}||||||KOI8\rPID|1||\xe9`, 'latin1')).problems[0]!.severity, 'E');
});

test('Z segments and repetitions are kept', () => {
  const result = parse(`${base}\rPID|1||A~B~C\rZBE|1|2\rZYX|`);
  assert.deepEqual(result.problems, []);
  assert.equal(segmentsNamed(result.message!, 'ZBE').length, 1);
  assert.equal(fieldOf(firstSegment(result.message!, 'PID'), 3).length, 3);
});

test('the size limit is enforced, and the header is still read for the ACK', () => {
  const result = parse(`${base}\rNTE|1||${'x'.repeat(2000)}`, { ...options, maxBytes: 1000 });
  assert.equal(result.problems[0]!.severity, 'E');
  assert.match(result.problems[0]!.message, /limit is 1000 bytes/);
  assert.equal(readHeader(result.message!).controlId, 'C1');
});

test('content that is not HL7 gives no message', () => {
  for (const body of ['', 'hello', '{"a":1}', 'PID|1||x', '\u0000\u0001']) {
    const result = parse(body);
    assert.equal(result.message, undefined, body);
    assert.equal(result.problems[0]!.severity, 'E');
  }
});

test('a batch is refused with a reason', () => {
  const result = parse(`FHS|^~\\&|A\rBHS|^~\\&|A\r${base}\rBTS|1\rFTS|1`);
  assert.equal(result.message, undefined);
  assert.match(result.problems[0]!.message, /batches/);
});

test('broken MSH-2 and bad segment lines are reported', () => {
  assert.equal(parse('MSH|^^\\&|A').message, undefined);
  assert.equal(parse('MSH|^~|A').message, undefined);
  const bad = parse(`${base}\rthis is not a segment\rPID|1`);
  assert.equal(bad.problems.length, 1);
  assert.match(bad.problems[0]!.message, /line 2 is not a segment/);
  const two = parse(`${base}\rPID|1\r${base}`);
  assert.match(two.problems[0]!.message, /more than one message/);
});

test('MSH-2 with a doubled escape character is read as the standard four with a warning', () => {
  const result = parse('MSH|^~\\\\&|A|B|C|D|2012||ADT^A01|1|T|2.6\rPID|1||X^^^H&1.2&ISO');
  assert.equal(result.problems[0]!.severity, 'W');
  assert.equal(valueOf(firstSegment(result.message!, 'PID'), 3, 4, 2), '1.2');
});
