// Mutation fuzzing over every fixture: each mutated input must get an acknowledgement (or, if it
// is not HL7 at all, a clear error) and nothing may throw. Seeded, so a failure is reproducible.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildAck } from '../../src/hl7v2/ack/build-ack.ts';
import { firstSegment, valueOf } from '../../src/hl7v2/er7/message.ts';
import { parseEr7 } from '../../src/hl7v2/er7/parse.ts';
import { ingestHl7v2 } from '../../src/hl7v2/intake/intake.ts';
import { planMessage } from '../../src/hl7v2/intake/plan.ts';
import { FrameScanner, frame } from '../../src/hl7v2/mllp/frame-scanner.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { createTestSite } from '../support/sites.ts';
import { hl7v2Fixtures } from './support.ts';
import { seededRandom } from '../support/seeded-random.ts';

const interesting = ['|', '^', '~', '\\', '&', '\r', '\n', '\r\n', '""', '\\X', '\\XZZ\\', '\\X00\\', '\\.br\\', '\\.sp99999\\', '\\Cxxyy\\', 'MSH|^~\\&|', '\x0b', '\x1c', '\xff', '\u00e9', '\ufeff', 'ZZZ|', 'OBX|1|NM|', 'MRG|', 'PID|||'];

function mutate(bytes: Buffer, rnd: () => number): Buffer {
  let out = Buffer.from(bytes);
  const rounds = 1 + Math.floor(rnd() * 4);
  for (let r = 0; r < rounds; r++) {
    const at = Math.floor(rnd() * (out.length + 1));
    switch (Math.floor(rnd() * 7)) {
      case 0: // flip a byte
        if (out.length > 0) out[Math.min(at, out.length - 1)] = Math.floor(rnd() * 256);
        break;
      case 1: // insert a delimiter or a nasty token
        out = Buffer.concat([out.subarray(0, at), Buffer.from(interesting[Math.floor(rnd() * interesting.length)]!, 'latin1'), out.subarray(at)]);
        break;
      case 2: // delete a range
        out = Buffer.concat([out.subarray(0, at), out.subarray(Math.min(out.length, at + Math.floor(rnd() * 64)))]);
        break;
      case 3: // truncate
        out = out.subarray(0, at);
        break;
      case 4: {
        // duplicate a segment
        const text = out.toString('latin1').split(/\r\n|\r|\n/);
        const i = Math.floor(rnd() * text.length);
        text.splice(i, 0, text[i] ?? '');
        out = Buffer.from(text.join('\r'), 'latin1');
        break;
      }
      case 5: {
        // swap two segments
        const text = out.toString('latin1').split(/\r\n|\r|\n/);
        const i = Math.floor(rnd() * text.length);
        const j = Math.floor(rnd() * text.length);
        [text[i], text[j]] = [text[j]!, text[i]!];
        out = Buffer.from(text.join('\r'), 'latin1');
        break;
      }
      case 6: // random bytes
        out = Buffer.concat([out.subarray(0, at), Buffer.from(Array.from({ length: 1 + Math.floor(rnd() * 16) }, () => Math.floor(rnd() * 256))), out.subarray(at)]);
        break;
    }
  }
  return out;
}

const fixtures = hl7v2Fixtures();

test('parse, plan and ACK never throw on 20,000 mutated fixtures, and every ACK is well-formed', () => {
  const rnd = seededRandom(20241122);
  const codes = { AA: 0, AE: 0, AR: 0, notHl7: 0 };
  for (let i = 0; i < 20_000; i++) {
    const source = fixtures[i % fixtures.length]!;
    const input = mutate(source.bytes, rnd);
    const parsed = parseEr7(input, { defaultCharset: 'UNICODE UTF-8', maxBytes: 1 << 20 });
    let code: 'AA' | 'AE' | 'AR' = 'AE';
    if (!parsed.message) codes.notHl7++;
    else if (!parsed.problems.some((p) => p.severity === 'E')) {
      const plan = planMessage(parsed.message);
      code = plan.rejected ? 'AR' : plan.plan ? 'AA' : 'AE';
    }
    codes[code]++;
    const ack = buildAck({ ...(parsed.message ? { message: parsed.message } : {}), code, text: 'fuzz', problems: parsed.problems });
    const reread = parseEr7(Buffer.from(ack, 'utf8'), { defaultCharset: 'UNICODE UTF-8', maxBytes: 1 << 20 });
    assert.ok(reread.message, `seed input ${i}: the ACK must parse`);
    assert.equal(valueOf(firstSegment(reread.message, 'MSA'), 1), code, `input ${i}`);
    assert.equal(reread.message.segments.filter((s) => s.name === 'MSH').length, 1, `input ${i}: one MSH in the ACK`);
  }
  // The mutations reach every outcome (a fuzzer that never gets past the parser tests little).
  assert.ok(codes.AA > 1000 && codes.AE > 1000 && codes.AR > 10 && codes.notHl7 > 10, JSON.stringify(codes));
});

test('the frame scanner returns the same frames for any chunking of a stream', () => {
  const rnd = seededRandom(7);
  const payloads = fixtures.map((f) => f.bytes);
  const stream = Buffer.concat(payloads.map((p) => frame(p)));
  for (let round = 0; round < 200; round++) {
    const scanner = new FrameScanner({ maxFrameBytes: 1 << 20 });
    const got: Buffer[] = [];
    for (let at = 0; at < stream.length; ) {
      const size = 1 + Math.floor(rnd() * 700);
      for (const event of scanner.push(stream.subarray(at, at + size))) if (event.kind === 'frame') got.push(event.payload);
      at += size;
    }
    assert.equal(got.length, payloads.length);
    got.forEach((payload, i) => assert.ok(payload.equals(payloads[i]!)));
  }
});

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('600 mutated fixtures through the full intake: each gets AA, AE or AR, and none asks to retry', async () => {
  const rnd = seededRandom(99);
  const site = await createTestSite(db.database);
  for (let i = 0; i < 600; i++) {
    const input = mutate(fixtures[i % fixtures.length]!.bytes, rnd);
    const outcome = await ingestHl7v2(db.database, { raw: input, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } });
    assert.ok(['AA', 'AE', 'AR'].includes(outcome.ackCode), `input ${i}`);
    assert.equal(outcome.retry, false, `input ${i}: ${JSON.stringify(outcome.errors)}`);
    assert.match(outcome.ack, /\rMSA\|A[AER]\|/);
  }
});
