// Mutation fuzzing of what reads a received dataset (the header sniffer, its walker, the value
// decoding and the index's normalisation) over every DICOM fixture, in every transfer syntax the
// fixtures hold: each mutated dataset, fed in chunks of any size, ends with its header fields or
// a reason it is malformed; nothing throws but the index's own refusal, nothing waits for ever.
// Seeded, so a failure is reproducible from its input number.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { readPart10Meta } from '../../src/dicomweb/part10-meta.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { normalizeReceivedInstance } from '../../src/domain/imaging/received-instance.ts';
import { HeaderSniffer, type SniffResult } from '../../src/storage/dicom/dataset/header-sniffer.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { fixturesDir } from './support/dicom-harness.ts';

interface Fixture {
  name: string;
  transferSyntaxUid: string;
  dataset: Buffer;
}

const fixtures: Fixture[] = readdirSync(fixturesDir)
  .filter((name) => name.endsWith('.dcm'))
  .sort()
  .map((name) => {
    const file = readFileSync(`${fixturesDir}/${name}`);
    const meta = readPart10Meta(file);
    if (typeof meta !== 'object' || 'error' in meta) throw new Error(`${name}: not a whole Part-10 file`);
    return { name, transferSyntaxUid: meta.transferSyntaxUid, dataset: file.subarray(meta.datasetOffset) };
  });

/** Lengths that make a walker skip far, never end, or ask for all the memory there is. */
const nastyLengths = [0, 1, 0xfffe, 0xffff, 0x7fffffff, 0xfffffffe, 0xffffffff];
/** Tags of items, delimiters and sequences, which change the walker's nesting. */
const structuralTags = [0xfffee000, 0xfffee00d, 0xfffee0dd, 0x00081140, 0x7fe00010, 0x00080005];

function mutate(dataset: Buffer, rnd: () => number): Buffer {
  let out = Buffer.from(dataset);
  const pick = (n: number) => Math.floor(rnd() * n);
  for (let round = 1 + pick(4); round > 0; round--) {
    const at = pick(out.length + 1);
    switch (pick(7)) {
      case 0: // flip a byte
        if (out.length > 0) out[Math.min(at, out.length - 1)] = pick(256);
        break;
      case 1: {
        // a 32-bit length or tag written over what is there, in either byte order
        const word = Buffer.alloc(4);
        const value = rnd() < 0.5 ? nastyLengths[pick(nastyLengths.length)]! : structuralTags[pick(structuralTags.length)]!;
        if (rnd() < 0.5) word.writeUInt32LE(value);
        else word.writeUInt32BE(value);
        out = Buffer.concat([out.subarray(0, at), word, out.subarray(Math.min(out.length, at + 4))]);
        break;
      }
      case 2: // a range deleted
        out = Buffer.concat([out.subarray(0, at), out.subarray(Math.min(out.length, at + 1 + pick(256)))]);
        break;
      case 3: // truncated
        out = out.subarray(0, at);
        break;
      case 4: {
        // a range repeated
        const length = 1 + pick(512);
        out = Buffer.concat([out.subarray(0, at), out.subarray(at, at + length), out.subarray(at)]);
        break;
      }
      case 5: // a VR replaced by another, or by none
        out = Buffer.concat([out.subarray(0, at), Buffer.from(['SQ', 'UN', 'OB', 'UT', 'PN', 'XX', '\0\0'][pick(7)]!, 'latin1'), out.subarray(Math.min(out.length, at + 2))]);
        break;
      case 6: // random bytes inserted
        out = Buffer.concat([out.subarray(0, at), Buffer.from(Array.from({ length: 1 + pick(32) }, () => pick(256))), out.subarray(at)]);
        break;
    }
  }
  return out;
}

async function sniff(transferSyntaxUid: string, dataset: Buffer, rnd: () => number): Promise<SniffResult> {
  const sniffer = new HeaderSniffer(transferSyntaxUid);
  // The listener hands over P-DATA fragments of any size: here 1 byte to the whole dataset.
  for (let at = 0; at < dataset.length; ) {
    const size = 1 + Math.floor(rnd() * (rnd() < 0.2 ? 16 : 20_000));
    await sniffer.push(dataset.subarray(at, at + size));
    at += size;
  }
  return sniffer.finish();
}

/** What the store does with sniffed fields: the index refuses what it cannot key on, with a DomainError. */
function normalise(fields: SniffResult['fields']): 'indexed' | 'refused' {
  try {
    normalizeReceivedInstance({
      ...fields,
      sopInstanceUid: fields.sopInstanceUid ?? '',
      sopClassUid: fields.sopClassUid ?? '',
      studyInstanceUid: fields.studyInstanceUid ?? '',
      seriesInstanceUid: fields.seriesInstanceUid ?? '',
      transferSyntaxUid: '1.2.840.10008.1.2.1',
      storagePath: 'site/study/series/instance.dcm',
      sizeBytes: 1,
      sha256: '0'.repeat(64),
    });
    return 'indexed';
  } catch (error) {
    if (error instanceof DomainError) return 'refused';
    throw error;
  }
}

test('the fixtures hold every kind of dataset the fuzzing should reach', () => {
  const syntaxes = new Set(fixtures.map((fixture) => fixture.transferSyntaxUid));
  for (const uid of ['1.2.840.10008.1.2', '1.2.840.10008.1.2.1', '1.2.840.10008.1.2.2', '1.2.840.10008.1.2.1.99', '1.2.840.10008.1.2.5']) {
    assert.ok(syntaxes.has(uid), `a fixture in ${uid}`);
  }
  for (const fixture of fixtures) assert.ok(fixture.dataset.length > 0, fixture.name);
});

test('4,000 mutated datasets in chunks of any size: header fields or a reason, never a throw or a hang', { timeout: 120_000 }, async () => {
  const rnd = seededRandom(20261128);
  const outcomes = { wellFormed: 0, malformed: 0, indexed: 0, refused: 0 };
  for (let i = 0; i < 4_000; i++) {
    const fixture = fixtures[i % fixtures.length]!;
    const input = mutate(fixture.dataset, rnd);
    let result: SniffResult;
    try {
      result = await sniff(fixture.transferSyntaxUid, input, rnd);
    } catch (error) {
      assert.fail(`input ${i} (${fixture.name}) threw: ${(error as Error).stack}`);
    }
    if (result.error !== undefined) {
      assert.equal(typeof result.error, 'string', `input ${i}`);
      assert.ok(result.error.length > 0 && result.error.length < 500, `input ${i}: a short reason (${result.error.length} characters)`);
      outcomes.malformed++;
    } else {
      outcomes.wellFormed++;
    }
    for (const value of Object.values(result.fields)) {
      if (typeof value === 'string') assert.ok(value.length <= 64 * 1024, `input ${i}: a field longer than any value kept`);
    }
    outcomes[normalise(result.fields)]++;
  }
  // The mutations reach both sides of each decision (a fuzzer that is always refused tests little).
  assert.ok(Object.values(outcomes).every((count) => count > 100), JSON.stringify(outcomes));
});
