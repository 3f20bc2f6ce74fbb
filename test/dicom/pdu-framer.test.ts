import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PduFramer } from '../../src/dicom/upper-layer/pdu-framer.ts';
import { pduBody, type Pdu } from '../../src/dicom/upper-layer/pdu-types.ts';
import { parsePdvs } from '../../src/dicom/upper-layer/pdv.ts';
import { releaseRequest } from './support/raw-peer.ts';

/** Feeds `bytes` to a framer in chunks of the given sizes (cycled) and collects every PDU. */
function frame(bytes: Buffer, chunkSizes: number[]): Pdu[] {
  const framer = new PduFramer(() => 1024 * 1024);
  const pdus: Pdu[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = chunkSizes[i % chunkSizes.length]!;
    framer.push(bytes.subarray(offset, offset + size));
    offset += size;
    for (let pdu = framer.next(); pdu; pdu = framer.next()) pdus.push(pdu);
  }
  assert.equal(framer.pendingBytes, 0);
  return pdus;
}

const payload = (length: number, seed: number) => Buffer.from(Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff));

test('a P-DATA-TF body spread over many reads gives the same PDVs as one read', () => {
  // Two PDVs in one PDU, then a release: headers and values straddle chunk boundaries everywhere.
  const first = payload(70_000, 1);
  const second = payload(333, 2);
  const body = Buffer.concat([pdvItem(1, 0x00, first), pdvItem(3, 0x02, second)]);
  const header = Buffer.from([0x04, 0, 0, 0, 0, 0]);
  header.writeUInt32BE(body.length, 2);
  const stream = Buffer.concat([header, body, releaseRequest()]);
  for (const chunkSizes of [[stream.length], [1], [5, 7, 65_536], [3, 1000, 2]]) {
    const pdus = frame(stream, chunkSizes);
    assert.deepEqual(
      pdus.map((pdu) => pdu.type),
      [0x04, 0x05],
      `chunks of ${chunkSizes.join('/')}`,
    );
    const pdvs = parsePdvs(pdus[0]!.parts);
    assert.deepEqual(
      pdvs.map((pdv) => [pdv.contextId, pdv.isCommand, pdv.isLast, pdv.fragmentLength]),
      [
        [1, false, false, first.length],
        [3, false, true, second.length],
      ],
    );
    assert.deepEqual(Buffer.concat(pdvs[0]!.fragment), first);
    assert.deepEqual(Buffer.concat(pdvs[1]!.fragment), second);
    // Socket-sized reads are passed on as views; a flood of tiny reads is joined into one buffer.
    if (chunkSizes.includes(65_536)) assert.ok(pdus[0]!.parts.length > 1);
    if (chunkSizes[0] === 1) assert.equal(pdus[0]!.parts.length, 1);
    assert.deepEqual(pduBody(pdus[1]!), Buffer.alloc(4));
  }
});

test('a PDV whose length runs past its PDU is refused', () => {
  const item = pdvItem(1, 0x02, payload(10, 3));
  item.writeUInt32BE(50, 0);
  assert.throws(() => parsePdvs([item.subarray(0, 5), item.subarray(5)]), /does not fit its PDU/);
  assert.throws(() => parsePdvs([item.subarray(0, 3)]), /truncated PDV item/);
});

function pdvItem(contextId: number, control: number, fragment: Buffer): Buffer {
  const header = Buffer.alloc(6);
  header.writeUInt32BE(fragment.length + 2, 0);
  header[4] = contextId;
  header[5] = control;
  return Buffer.concat([header, fragment]);
}
