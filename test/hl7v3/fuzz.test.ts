import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answer } from '../../src/hl7v3/intake/answer.ts';
import { processHl7v3Message } from '../../src/hl7v3/intake/process-message.ts';
import { isHl7v3Message, readEnvelope } from '../../src/hl7v3/message/envelope.ts';
import { isSupportedInteraction, readPatientCommand } from '../../src/hl7v3/message/interactions.ts';
import { parseXml } from '../../src/hl7v3/xml/parse.ts';
import { XmlRejection } from '../../src/hl7v3/xml/rejection.ts';
import { createTestDatabase } from '../support/database.ts';
import { createTestSite } from '../support/sites.ts';
import { readAck, v3Fixture } from './support.ts';
import { seededRandom } from '../support/seeded-random.ts';

const fixtures = ['PIX_FEED_REG_Maximal_Request.xml', 'PIX_FEED_REV_Maximal_Request.xml', 'PIX_FEED_MERGE_Maximal_Request.xml', 'Ack.xml'].map(v3Fixture);
const fragments = ['<', '>', '&', '&amp;', '&#0;', ']]>', '<![CDATA[x]]>', '<!--', '"', "'", '<id/>', '</patient>', '\u00e9', '\uFFFF', 'nullFlavor="UNK"', '<!DOCTYPE', 'xmlns:x="y"'];

/** One structural or byte-level mutation of a fixture. */
function mutate(next: () => number): Buffer {
  const source = fixtures[Math.floor(next() * fixtures.length)]!;
  const bytes = Buffer.from(source);
  const at = Math.floor(next() * bytes.length);
  switch (Math.floor(next() * 6)) {
    case 0: // flip a byte
      bytes[at] = Math.floor(next() * 256);
      return bytes;
    case 1: // truncate
      return bytes.subarray(0, at);
    case 2: // delete a span
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(Math.min(bytes.length, at + Math.floor(next() * 200)))]);
    case 3: // insert a fragment
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(fragments[Math.floor(next() * fragments.length)]!), bytes.subarray(at)]);
    case 4: {
      // change an attribute value
      const text = source.toString('utf8');
      const values = [...text.matchAll(/="([^"]*)"/g)];
      const target = values[Math.floor(next() * values.length)]!;
      const replacement = ['', ' ', 'x', '99999999999999999999', '1.2.3', '19000229', 'UN', '\u0000'][Math.floor(next() * 8)]!;
      return Buffer.from(text.slice(0, target.index! + 2) + replacement + text.slice(target.index! + 2 + target[1]!.length));
    }
    default: {
      // duplicate a line
      const lines = source.toString('utf8').split('\n');
      const line = Math.floor(next() * lines.length);
      lines.splice(line, 0, lines[line]!);
      return Buffer.from(lines.join('\n'));
    }
  }
}

test('5,000 mutated messages: each is refused with a reason or read, and always acknowledgeable', () => {
  const next = seededRandom(20261122);
  const outcomes = { rejected: 0, notV3: 0, unsupported: 0, errors: 0, clean: 0 };
  for (let i = 0; i < 5000; i++) {
    const input = mutate(next);
    let root;
    try {
      root = parseXml(input);
    } catch (error) {
      assert.ok(error instanceof XmlRejection, `input ${i}: ${String(error)}`);
      outcomes.rejected++;
      continue;
    }
    if (!isHl7v3Message(root)) {
      outcomes.notV3++;
      continue;
    }
    const envelope = readEnvelope(root);
    if (!isSupportedInteraction(envelope.rootName)) {
      outcomes.unsupported++;
      continue;
    }
    const { problems } = readPatientCommand(root, envelope.rootName);
    const details = [...envelope.problems, ...problems];
    if (details.some((d) => d.typeCode === 'E')) outcomes.errors++;
    else outcomes.clean++;
    // Whatever the inbound wrapper held, the acknowledgement is well-formed and mirrors it.
    const ack = readAck(answer(details.length ? 'content-error' : 'accepted', envelope, details).ackXml);
    assert.equal(ack.details.length, details.length);
  }
  // The mutations reach every stage, not just the parser.
  for (const [stage, count] of Object.entries(outcomes)) assert.ok(count > 0, `no input reached ${stage}: ${JSON.stringify(outcomes)}`);
});

test('300 mutated messages through the intake: an acknowledgement for each, never a 500', async (t) => {
  const db = await createTestDatabase();
  t.after(() => db.drop());
  const site = await createTestSite(db.database);
  const next = seededRandom(7);
  const statuses = new Map<number, number>();
  for (let i = 0; i < 300; i++) {
    const result = await processHl7v3Message(db.database, site, mutate(next));
    statuses.set(result.statusCode, (statuses.get(result.statusCode) ?? 0) + 1);
    assert.ok([200, 400, 413, 422].includes(result.statusCode), `input ${i}: status ${result.statusCode}\n${result.ackXml}`);
    assert.equal(readAck(result.ackXml).typeCode, result.typeCode);
  }
  assert.ok((statuses.get(200) ?? 0) > 0 && (statuses.get(400) ?? 0) > 0, JSON.stringify([...statuses]));
});
