import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config/env.ts';
import { startDicomListener } from '../../src/dicom/listener.ts';
import { Database } from '../../src/storage/database.ts';
import { createTestSite } from '../support/sites.ts';
import { dcmtk, transferFiles, startHarness, type DicomHarness } from './support/dicom-harness.ts';
import { abortDetails, associate, associateRequest, cEchoRequest, cStoreRequest, pData, RawPeer, releaseRequest, statusOf } from './support/raw-peer.ts';

const verification = { id: 1, abstractSyntax: '1.2.840.10008.1.1', transferSyntaxes: ['1.2.840.10008.1.2'] };

let harness: DicomHarness;
before(async () => {
  harness = await startHarness({ maxAssociationsPerAddress: 3 });
});
after(() => harness.stop());

function echoscu(calledAe: string) {
  return dcmtk('echoscu', ['-v', '-aec', calledAe, '127.0.0.1', String(harness.listener.port)]);
}

test('C-ECHO to a site AE title succeeds', async () => {
  const site = await createTestSite(harness.db.database);
  const result = await echoscu(site.aeTitle);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /Received Echo Response \(Success\)/);
});

test('an unknown called AE title is rejected permanently: service-user, called AE title not recognised', async () => {
  const result = await echoscu('NOSUCHSITE');
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /Association Rejected/);
  assert.match(result.stderr, /Called AE Title Not Recognized/i);

  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(associateRequest({ calledAeTitle: 'NOSUCHSITE', contexts: [verification] }));
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x03);
  // PS3.8 table 9-21: result 1 rejected-permanent, source 1 service-user, reason 7.
  assert.deepEqual([...answer!.body], [0, 1, 1, 7]);
  await peer.closed();
});

test('an AE title differing only by trailing spaces selects the site; by case it does not', async () => {
  const site = await createTestSite(harness.db.database, { aeTitle: 'CASEAE' });
  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(associateRequest({ calledAeTitle: 'CASEAE   ', contexts: [verification] }));
  assert.equal((await peer.nextPdu())?.type, 0x02);
  peer.destroy();
  assert.notEqual((await echoscu(site.aeTitle.toLowerCase())).code, 0);
});

test('a protocol version without bit 0 and a foreign application context are rejected', async () => {
  const site = await createTestSite(harness.db.database);
  for (const [options, expected] of [
    [{ protocolVersion: 2 }, [0, 1, 2, 2]],
    [{ applicationContext: '1.2.3.4' }, [0, 1, 1, 2]],
  ] as const) {
    const peer = await RawPeer.connect(harness.listener.port);
    peer.write(associateRequest({ calledAeTitle: site.aeTitle, contexts: [verification], ...options }));
    const answer = await peer.nextPdu();
    assert.equal(answer?.type, 0x03);
    assert.deepEqual([...answer!.body], expected);
    peer.destroy();
  }
});

test('presentation contexts: unknown SOP class, unsupported transfer syntax, first supported syntax chosen', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(
    associateRequest({
      calledAeTitle: site.aeTitle,
      contexts: [
        verification,
        { id: 3, abstractSyntax: '1.2.3.4.5.6', transferSyntaxes: ['1.2.840.10008.1.2'] },
        // MPEG-2 is not an accepted syntax.
        { id: 5, abstractSyntax: '1.2.840.10008.5.1.4.1.1.2', transferSyntaxes: ['1.2.840.10008.1.2.4.100'] },
        { id: 7, abstractSyntax: '1.2.840.10008.5.1.4.1.1.2', transferSyntaxes: ['1.2.840.10008.1.2.4.100', '1.2.840.10008.1.2.4.201', '1.2.840.10008.1.2.1'] },
        // MPPS datasets are read, so only uncompressed syntaxes.
        { id: 9, abstractSyntax: '1.2.840.10008.3.1.2.3.3', transferSyntaxes: ['1.2.840.10008.1.2.4.50'] },
        { id: 11, abstractSyntax: '1.2.840.10008.3.1.2.3.3', transferSyntaxes: ['1.2.840.10008.1.2.2'] },
      ],
    }),
  );
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x02);
  const results = new Map<number, { result: number; syntax: string }>();
  for (let offset = 68; offset < answer!.body.length; ) {
    const type = answer!.body[offset]!;
    const length = answer!.body.readUInt16BE(offset + 2);
    if (type === 0x21) {
      const value = answer!.body.subarray(offset + 4, offset + 4 + length);
      const syntaxLength = value.readUInt16BE(6);
      results.set(value[0]!, { result: value[2]!, syntax: value.toString('latin1', 8, 8 + syntaxLength) });
    }
    offset += 4 + length;
  }
  assert.deepEqual(Object.fromEntries(results), {
    1: { result: 0, syntax: '1.2.840.10008.1.2' },
    3: { result: 3, syntax: '1.2.840.10008.1.2' },
    5: { result: 4, syntax: '1.2.840.10008.1.2.4.100' },
    7: { result: 0, syntax: '1.2.840.10008.1.2.4.201' },
    9: { result: 4, syntax: '1.2.840.10008.1.2.4.50' },
    11: { result: 0, syntax: '1.2.840.10008.1.2.2' },
  });
  peer.destroy();
});

test('garbage on the socket gets A-ABORT (unrecognised PDU) and the listener keeps serving', async () => {
  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x07);
  assert.deepEqual(abortDetails(answer!), { source: 2, reason: 1 });
  await peer.closed();
  const site = await createTestSite(harness.db.database);
  assert.equal((await echoscu(site.aeTitle)).code, 0);
});

test('a truncated PDU followed by a close gets A-ABORT', async () => {
  const site = await createTestSite(harness.db.database);
  const request = associateRequest({ calledAeTitle: site.aeTitle, contexts: [verification] });
  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(request.subarray(0, 40));
  peer.socket.end();
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x07);
  assert.deepEqual(abortDetails(answer!), { source: 2, reason: 6 });
  await peer.closed();
});

test('a malformed A-ASSOCIATE-RQ (item running past its PDU) gets A-ABORT', async () => {
  const site = await createTestSite(harness.db.database);
  const request = associateRequest({ calledAeTitle: site.aeTitle, contexts: [verification] });
  request.writeUInt16BE(0xffff, 6 + 68 + 2); // the application context item claims 65535 bytes
  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(request);
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x07);
  assert.deepEqual(abortDetails(answer!), { source: 2, reason: 6 });
});

test('P-DATA before any association gets A-ABORT (unexpected PDU)', async () => {
  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(pData(1, true, true, cEchoRequest(1)));
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x07);
  assert.deepEqual(abortDetails(answer!), { source: 2, reason: 2 });
});

test('a PDU longer than the negotiated maximum gets A-ABORT before its body is read', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, site.aeTitle, [verification]);
  const header = Buffer.from([0x04, 0, 0xff, 0xff, 0xff, 0x00]);
  peer.write(header);
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x07);
  assert.deepEqual(abortDetails(answer!), { source: 2, reason: 6 });
});

test('a PDV on a presentation context that was not accepted gets A-ABORT', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, site.aeTitle, [verification]);
  peer.write(pData(3, true, true, cEchoRequest(1)));
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x07);
});

test('C-ECHO over a raw association, then A-RELEASE-RQ gets A-RELEASE-RP', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, site.aeTitle, [verification]);
  peer.write(pData(1, true, true, cEchoRequest(7)));
  const response = await peer.nextPdu();
  assert.equal(response?.type, 0x04);
  assert.equal(statusOf(response!.body), 0x0000);
  peer.write(releaseRequest());
  assert.equal((await peer.nextPdu())?.type, 0x06);
  peer.socket.end();
  await peer.closed();
});

/** A listener of its own with short timers, so that only these tests depend on them firing. */
async function withShortTimers(run: (port: number) => Promise<void>): Promise<void> {
  const listener = await startDicomListener(harness.services, { host: '127.0.0.1', port: 0, artimTimeoutMs: 200, idleTimeoutMs: 300 });
  try {
    await run(listener.port);
  } finally {
    await listener.close();
  }
}

test('ARTIM: a connection that never sends an A-ASSOCIATE-RQ is closed', () =>
  withShortTimers(async (port) => {
    const peer = await RawPeer.connect(port);
    assert.equal(await peer.nextPdu(), undefined);
  }));

test('idle timeout: a silent association gets A-ABORT and is closed', () =>
  withShortTimers(async (port) => {
    const site = await createTestSite(harness.db.database);
    const peer = await associate(port, site.aeTitle, [verification]);
    const answer = await peer.nextPdu();
    assert.equal(answer?.type, 0x07);
    assert.deepEqual(abortDetails(answer!), { source: 2, reason: 0 });
    await peer.closed();
  }));

test('concurrent associations per remote IP are capped: the next one is rejected as transient (local limit)', async () => {
  const site = await createTestSite(harness.db.database);
  const held = await Promise.all([1, 2, 3].map(() => associate(harness.listener.port, site.aeTitle, [verification])));
  const peer = await RawPeer.connect(harness.listener.port);
  peer.write(associateRequest({ calledAeTitle: site.aeTitle, contexts: [verification] }));
  const answer = await peer.nextPdu();
  assert.equal(answer?.type, 0x03);
  // PS3.8 table 9-21: result 2 rejected-transient, source 3 service-provider (presentation), reason 2.
  assert.deepEqual([...answer!.body], [0, 2, 3, 2]);
  for (const one of held) one.write(releaseRequest());
  await Promise.all(held.map((one) => one.nextPdu()));
  for (const one of held) one.destroy();
  await Promise.all(held.map((one) => one.closed()));
  const result = await echoscu(site.aeTitle);
  assert.equal(result.code, 0, result.stderr);
});

test('database unavailable during the AE title lookup: rejected as transient, not as unknown', async () => {
  const unreachable = new Database({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
  const listener = await startDicomListener(
    { database: unreachable, config: loadConfig({ CG_DATA_DIR: harness.dataDir }), logger: pino({ level: 'silent' }) },
    { host: '127.0.0.1', port: 0 },
  );
  try {
    const peer = await RawPeer.connect(listener.port);
    peer.write(associateRequest({ calledAeTitle: 'ANYSITE', contexts: [verification] }));
    const answer = await peer.nextPdu();
    assert.equal(answer?.type, 0x03);
    assert.deepEqual([...answer!.body], [0, 2, 3, 1]);
    peer.destroy();
  } finally {
    await listener.close();
    await unreachable.close();
  }
});

test('out-of-order or malformed DIMSE traffic gets A-ABORT: data set without command, response sent to the SCP, oversized or malformed command, release mid-message', async () => {
  const site = await createTestSite(harness.db.database);
  const storage = { id: 1, abstractSyntax: '1.2.840.10008.5.1.4.1.1.2', transferSyntaxes: ['1.2.840.10008.1.2.1'] };
  const echoResponse = Buffer.from(cEchoRequest(1));
  echoResponse.writeUInt16LE(0x8030, 12 + 8 + 18 + 8); // CommandField after the group length and SOP class elements
  const cases: [string, (peer: RawPeer) => void, number][] = [
    ['data set fragment without a command', (peer) => peer.write(pData(1, false, true, Buffer.alloc(10))), 5],
    ['a response command', (peer) => peer.write(pData(1, true, true, echoResponse)), 5],
    [
      'a command set over 64 KiB',
      (peer) => {
        for (let i = 0; i < 5; i++) peer.write(pData(1, true, false, Buffer.alloc(15_000)));
      },
      6,
    ],
    [
      'A-RELEASE-RQ in the middle of a C-STORE',
      (peer) => {
        peer.write(pData(1, true, true, cStoreRequest(1, storage.abstractSyntax, '1.2.3.4')));
        peer.write(pData(1, false, false, Buffer.alloc(100)));
        peer.write(releaseRequest());
      },
      2,
    ],
  ];
  const foreignGroup = Buffer.concat([cEchoRequest(1), Buffer.from([0x08, 0x00, 0x20, 0x00, 0x02, 0x00, 0x00, 0x00, 0x41, 0x41])]);
  const truncatedElement = Buffer.concat([cEchoRequest(1), Buffer.from([0x00, 0x00, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x41])]);
  cases.push(
    ['a command set holding a non-command element', (peer) => peer.write(pData(1, true, true, foreignGroup)), 6],
    ['a command element running past the command set', (peer) => peer.write(pData(1, true, true, truncatedElement)), 6],
  );
  for (const [name, send, reason] of cases) {
    const peer = await associate(harness.listener.port, site.aeTitle, [storage]);
    send(peer);
    const answer = await peer.nextPdu();
    assert.equal(answer?.type, 0x07, name);
    assert.deepEqual(abortDetails(answer!), { source: 2, reason }, name);
    await peer.closed();
  }
  assert.deepEqual(await transferFiles(harness.dataDir), []);
});
