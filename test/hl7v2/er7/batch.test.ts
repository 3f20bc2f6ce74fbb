// Splitting a body into the messages of HL7 batches (FHS/BHS ... BTS/FTS) and of messages sent
// back to back without an envelope; one message, or text that is no HL7, is left to the
// single-message reader.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildBatchAck } from '../../../src/hl7v2/ack/batch-ack.ts';
import { batchMessages, splitBatch } from '../../../src/hl7v2/er7/batch.ts';
import { BatchHaltedError, ingestBatchMessages } from '../../../src/hl7v2/intake/batch-intake.ts';

const msh = (id: string) => `MSH|^~\\&|LAB|HOSP|GW|SITE|20241005||ADT^A08|${id}|P|2.5.1`;
const message = (id: string) => `${msh(id)}\rPID|1||${id}^^^H^MR||Doe^Jane`;
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');

test('a file of one batch is split into its messages, byte for byte', () => {
  const body = Buffer.from(`FHS|^~\\&|LAB|HOSP|GW|SITE|20241005||results.hl7||F1\rBHS|^~\\&|LAB|HOSP|GW|SITE|20241005||||B1\r${message('M1')}\r${message('M2')}\rBTS|2\rFTS|1\r`);
  const split = splitBatch(body)!;
  assert.deepEqual(batchMessages(split).map(text), [`${message('M1')}\r`, `${message('M2')}\r`]);
  assert.equal(split.fhs?.fields[11], 'F1');
  assert.equal(split.batches[0]!.bhs?.fields[11], 'B1');
  assert.deepEqual(split.notes, []);
});

test('messages back to back without an envelope, with LF or CRLF line ends and a BOM', () => {
  const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${msh('M1')}\r\nPID|1||M1\r\n${msh('M2')}\nPID|1||M2\n\n`)]);
  const split = splitBatch(body)!;
  assert.equal(split.batches.length, 1);
  assert.equal(split.batches[0]!.bhs, undefined);
  assert.deepEqual(batchMessages(split).map(text), [`${msh('M1')}\r\nPID|1||M1\r\n`, `${msh('M2')}\nPID|1||M2\n\n`]);
});

test('one message, or text before the first segment, is not a batch', () => {
  assert.equal(splitBatch(Buffer.from(`${message('M1')}\r`)), undefined);
  assert.equal(splitBatch(Buffer.from(`hello\r${message('M1')}\r${message('M2')}`)), undefined);
  assert.equal(splitBatch(Buffer.from('')), undefined);
});

test('counts that do not match and segments outside any message are noted', () => {
  const split = splitBatch(Buffer.from(`BHS|^~\\&|LAB\rPID|1||X\r${message('M1')}\rBTS|3`))!;
  assert.equal(batchMessages(split).length, 1);
  assert.deepEqual(split.notes, ['a PID segment outside any message (not after an MSH) was ignored', 'BTS-1 (batch message count) is 3 but 1 messages were received']);
});

test('the batch ACK answers in the same envelope: swapped, referenced, counted', () => {
  const split = splitBatch(Buffer.from(`FHS|^~\\&|LAB|HOSP|GW|SITE|20241005||f.hl7||F1\rBHS|^~\\&|LAB|HOSP|GW|SITE|20241005||||B1\r${message('M1')}\rBTS|1\rFTS|1`))!;
  const ack = buildBatchAck(split, [['MSH|ACK1\rMSA|AA|M1']], new Date(Date.UTC(2026, 0, 2, 3, 4, 5))).split('\r');
  assert.match(ack[0]!, /^FHS\|\^~\\&\|GW\|SITE\|LAB\|HOSP\|20260102030405\+0000\|\|f\.hl7\|\|CG\w+\|F1$/);
  assert.match(ack[1]!, /^BHS\|\^~\\&\|GW\|SITE\|LAB\|HOSP\|20260102030405\+0000\|\|\|\|CG\w+\|B1$/);
  assert.deepEqual(ack.slice(2), ['MSH|ACK1', 'MSA|AA|M1', 'BTS|1', 'FTS|1']);
});

test('after a message to be sent again, the rest of the batch is not applied', async () => {
  const split = splitBatch(Buffer.from(`${message('M1')}\r${message('M2')}\r${message('M3')}`))!;
  const calls: [string, boolean][] = [];
  const answer = await ingestBatchMessages(split, async (raw, halted) => {
    const id = /\|ADT\^A08\|(\w+)/.exec(text(raw))![1]!;
    calls.push([id, halted instanceof BatchHaltedError]);
    return { ack: `MSA|${id}`, retry: halted !== undefined || id === 'M2' };
  });
  assert.deepEqual(calls, [['M1', false], ['M2', false], ['M3', true]]);
  assert.equal(answer.retry, true);
  assert.equal(answer.ack, 'MSA|M1\rMSA|M2\rMSA|M3');
});
