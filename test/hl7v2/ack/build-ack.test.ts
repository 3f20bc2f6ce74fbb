import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildAck } from '../../../src/hl7v2/ack/build-ack.ts';
import { parseEr7 } from '../../../src/hl7v2/er7/parse.ts';
import { firstSegment, segmentsNamed, valueOf } from '../../../src/hl7v2/er7/message.ts';
import { errorCodes, error, warning } from '../../../src/hl7v2/problems.ts';

const options = { defaultCharset: 'UNICODE UTF-8' as const, maxBytes: 1 << 20 };
const inbound = parseEr7(Buffer.from('MSH|^~\\&|LAB^1.2.3^ISO|HOSP|GW|GWF|20240101||ORU^R01^ORU_R01|MSG42|P|2.5.1\rPID|1'), options).message!;

test('the ACK swaps sender and receiver, answers ACK^event^ACK with a new control id and copies MSH-11/12', () => {
  const ack = buildAck({ message: inbound, code: 'AA', text: 'message accepted', problems: [], now: new Date('2024-02-03T04:05:06Z') });
  const parsed = parseEr7(Buffer.from(ack), options).message!;
  const msh = firstSegment(parsed, 'MSH');
  assert.equal(valueOf(msh, 3), 'GW');
  assert.equal(valueOf(msh, 4), 'GWF');
  assert.equal(valueOf(msh, 5, 1), 'LAB');
  assert.equal(valueOf(msh, 5, 2), '1.2.3');
  assert.equal(valueOf(msh, 6), 'HOSP');
  assert.equal(valueOf(msh, 7), '20240203040506+0000');
  assert.deepEqual([valueOf(msh, 9, 1), valueOf(msh, 9, 2), valueOf(msh, 9, 3)], ['ACK', 'R01', 'ACK']);
  assert.notEqual(valueOf(msh, 10), 'MSG42');
  assert.ok(valueOf(msh, 10).length <= 20);
  assert.equal(valueOf(msh, 11), 'P');
  assert.equal(valueOf(msh, 12), '2.5.1');
  const msa = firstSegment(parsed, 'MSA');
  assert.deepEqual([valueOf(msa, 1), valueOf(msa, 2), valueOf(msa, 3)], ['AA', 'MSG42', 'message accepted']);
  assert.equal(segmentsNamed(parsed, 'ERR').length, 0);
});

test('one ERR per problem with ERL location, table 0357 code, severity and an escaped message', () => {
  const ack = buildAck({
    message: inbound,
    code: 'AE',
    text: 'rejected',
    problems: [
      error(errorCodes.requiredFieldMissing, 'PID-3 is empty | no id', { segment: 'PID', sequence: 1, field: 3 }),
      warning(errorCodes.tableValueNotFound, 'odd sex code'),
    ],
  });
  const parsed = parseEr7(Buffer.from(ack), options).message!;
  const errs = segmentsNamed(parsed, 'ERR');
  assert.equal(errs.length, 2);
  assert.deepEqual([valueOf(errs[0], 2, 1), valueOf(errs[0], 2, 2), valueOf(errs[0], 2, 3), valueOf(errs[0], 2, 4)], ['PID', '1', '3', '1']);
  assert.deepEqual([valueOf(errs[0], 3, 1), valueOf(errs[0], 3, 2), valueOf(errs[0], 3, 3)], ['101', 'Required field missing', 'HL70357']);
  assert.equal(valueOf(errs[0], 4), 'E');
  assert.equal(valueOf(errs[0], 8), 'PID-3 is empty | no id');
  assert.equal(valueOf(errs[1], 4), 'W');
});

test('an ACK can be built without any readable inbound message', () => {
  const ack = buildAck({ code: 'AE', text: 'not HL7', problems: [error(errorCodes.segmentSequenceError, 'no MSH')] });
  const parsed = parseEr7(Buffer.from(ack), options).message!;
  assert.equal(valueOf(firstSegment(parsed, 'MSH'), 3), 'CLINICAL-GATEWAY');
  assert.equal(valueOf(firstSegment(parsed, 'MSA'), 1), 'AE');
});

test('control characters in echoed text become hexadecimal escapes and read back as sent', () => {
  const ack = buildAck({ message: inbound, code: 'AE', text: 'rejected', problems: [error(errorCodes.dataTypeError, 'bad\x00byte\rand\ttab')] });
  assert.ok(!/[\x00\t]/.test(ack));
  assert.match(ack, /bad\\X00\\byte\\X0D\\and\\X09\\tab/);
  const read = parseEr7(Buffer.from(ack), options);
  // Read back, the CR and tab are as sent; a NUL is no HL7 text (issue 26 point 6): the reader
  // marks it U+FFFD and reports the field.
  assert.equal(valueOf(segmentsNamed(read.message!, 'ERR')[0], 8), 'bad\ufffdbyte\rand\ttab');
  assert.ok(read.problems.some((p) => p.severity === 'E' && p.location?.segment === 'ERR' && p.location.field === 8));
});

test('a sender of v2.2 or v2.3 is answered in its own form: MSH-9 without the structure, and ERR-1 filled', () => {
  const v23 = parseEr7(Buffer.from('MSH|^~\\&|LAB|HOSP|GW|GWF|20240101||ORU^R01|M23|P|2.3\rPID|1'), options).message!;
  const ack = buildAck({ message: v23, code: 'AE', text: 'bad', problems: [error(errorCodes.requiredFieldMissing, 'PID-3 is empty', { segment: 'PID', sequence: 1, field: 3 })] });
  const parsed = parseEr7(Buffer.from(ack), options).message!;
  assert.deepEqual(firstSegment(parsed, 'MSH')!.fields[9], [[['ACK'], ['R01']]]);
  assert.match(ack, /\rERR\|PID\^1\^3\^101&Required field missing&HL70357\|PID\^1\^3\^1\|101\^Required field missing\^HL70357\|E\|/);
  // v2.1: MSH-9 held the type alone.
  const v21 = parseEr7(Buffer.from('MSH|^~\\&|LAB|HOSP|GW|GWF|20240101||ADT|M21|P|2.1\rEVN|A04\rPID|1'), options).message!;
  assert.equal(valueOf(firstSegment(parseEr7(Buffer.from(buildAck({ message: v21, code: 'AA', text: 'ok', problems: [] })), options).message!, 'MSH'), 9), 'ACK');
  // From v2.5 on, ERR-1 stays empty.
  assert.match(buildAck({ message: inbound, code: 'AE', text: 'bad', problems: [error(errorCodes.requiredFieldMissing, 'x', { segment: 'PID', sequence: 1, field: 3 })] }), /\rERR\|\|PID/);
});
