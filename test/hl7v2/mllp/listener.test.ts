// The MLLP listener over real sockets: an independent client (Debian python3-hl7's mllp_send),
// split and coalesced frames, junk, oversized frames, authorization, duplicates, shutdown.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { createIntegrationClient } from '../../../src/domain/clients/integration-clients.ts';
import { listMessages } from '../../../src/domain/messages/message-log.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { frame } from '../../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../../src/hl7v2/mllp/listener.ts';
import { Database } from '../../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testServices } from '../../support/http.ts';
import { createTestSite } from '../../support/sites.ts';
import { hl7v2Fixtures, message } from '../support.ts';
import { msa, RawPeer } from './support.ts';

const run = promisify(execFile);
let db: TestDatabase;
let listener: RunningMllpListener;
let site: SiteContext;
let restricted: SiteContext;

before(async () => {
  db = await createTestDatabase();
  site = await createTestSite(db.database);
  restricted = await createTestSite(db.database);
  // 127.0.0.1 sends for `site` under any MSH-3/4; 127.0.0.2-3 send for `restricted` as RESTRICTED-APP
  // only (registrations of two sites may not overlap: issue 26 point 1).
  await createIntegrationClient(db.database, site.siteId, { name: 'lab', protocol: 'hl7-mllp', allowedIps: '127.0.0.1' }, { kind: 'operator' });
  await createIntegrationClient(db.database, restricted.siteId, { name: 'ris', protocol: 'hl7-mllp', allowedIps: '127.0.0.2/31', sendingApplication: 'RESTRICTED-APP', defaultCharset: '8859/1' }, { kind: 'operator' });
  listener = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0, maxFrameBytes: 64 * 1024 });
});
after(async () => {
  await listener.close();
  await db.drop();
});

test('mllp_send (python3-hl7) delivers every fixture and gets the expected ACK for each', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cg-mllp-'));
  const fixtures = hl7v2Fixtures().filter((f) => !f.name.includes('ADT-A40-02')); // shares MSH-3/4/10 with ADT-A40-01
  const file = join(dir, 'stream.mllp');
  writeFileSync(file, Buffer.concat(fixtures.map((f) => frame(f.bytes))));
  const { stdout } = await run('mllp_send', ['-p', String(listener.port), '-f', file, '127.0.0.1'], { timeout: 60_000 });
  const answers = stdout.split('\x1c').map((a) => msa(a)).filter((a) => a.code !== '');
  assert.equal(answers.length, fixtures.length);
  const expectAe = new Set(['ORU-R01-01.hl7', 'iti8-a01-incomplete.hl7', 'msg-02.hl7']);
  fixtures.forEach((f, i) => assert.equal(answers[i]!.code, expectAe.has(f.name.split('/').pop()!) ? 'AE' : 'AA', f.name));
  const log = await listMessages(db.database, site, { limit: 500 });
  // ADT-A01/A04/A08-01 share MSH-3/4/10 (MSG00001), as do sample_unix/sample_win (102): the
  // later copies are duplicates, answered with the first ACK and not logged again.
  assert.equal(log.messages.filter((m) => m.transport === 'mllp' && m.remoteAddress === '127.0.0.1').length, fixtures.length - 3);
  assert.ok(await resourceStore(db.database, site).findPatientByBusinessIdentifier('MRN12345'));
});

test('frames split byte by byte and frames coalesced in one write are answered in order', async () => {
  const peer = await RawPeer.open(listener.port);
  try {
    const one = message(['PID|1||S1^^^H^MR||Split^One'], { controlId: 'SPLIT-1' });
    for (const byte of frame(one)) peer.write(Buffer.of(byte));
    assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: 'SPLIT-1' });
    const three = ['CO-1', 'CO-2', 'CO-3'].map((id) => frame(message([`PID|1||${id}^^^H^MR`], { controlId: id })));
    peer.write(Buffer.concat(three));
    for (const id of ['CO-1', 'CO-2', 'CO-3']) assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: id });
  } finally {
    peer.end();
  }
});

test('a sender that ends its frame with FS alone and waits is answered, and its next frame too', async () => {
  const peer = await RawPeer.open(listener.port);
  try {
    for (const id of ['NOCR-1', 'NOCR-2']) {
      peer.write(Buffer.concat([Buffer.of(0x0b), message([`PID|1||${id}^^^H^MR`], { controlId: id }), Buffer.of(0x1c)]));
      assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: id });
    }
  } finally {
    peer.end();
  }
});

test('junk before the start block is discarded and the frame after it answered', async () => {
  const peer = await RawPeer.open(listener.port);
  try {
    peer.write(Buffer.concat([Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), frame(message(['PID|1||J1^^^H^MR'], { controlId: 'JUNK-1' }))]));
    assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: 'JUNK-1' });
    // Garbage inside a frame is answered AE, and the connection stays usable.
    peer.write(frame(Buffer.from('\x00\x01 not hl7 \xff')));
    assert.equal(msa(await peer.next()).code, 'AE');
    peer.write(frame(message(['PID|1||J2^^^H^MR'], { controlId: 'JUNK-2' })));
    assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: 'JUNK-2' });
  } finally {
    peer.end();
  }
});

test('an oversized frame is answered AE with its control id and the connection is kept', async () => {
  const peer = await RawPeer.open(listener.port);
  try {
    const big = Buffer.concat([message(['PID|1||BIG^^^H^MR'], { controlId: 'BIG-1' }), Buffer.from(`\rNTE|1||${'x'.repeat(100 * 1024)}`)]);
    peer.write(frame(big));
    const answer = await peer.next();
    assert.deepEqual(msa(answer), { code: 'AE', controlId: 'BIG-1' });
    assert.match(answer!, /limit is 65536 bytes/);
    peer.write(frame(message(['PID|1||AFTER^^^H^MR'], { controlId: 'AFTER-BIG' })));
    assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: 'AFTER-BIG' });
    assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('BIG'), undefined);
  } finally {
    peer.end();
  }
});

test('MSH-3 selects the client: a restricted application goes to its own site with its default charset', async () => {
  const peer = await RawPeer.open(listener.port, '127.0.0.2');
  try {
    const latin = Buffer.from(`MSH|^~\\&|RESTRICTED-APP|RAD|GW|GW|20240101||ADT^A01|R-1|P|2.5.1\rPID|1||RS1^^^H^MR||M\xfcller^Ann`, 'latin1');
    peer.write(frame(latin));
    assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: 'R-1' });
    const patient = (await resourceStore(db.database, restricted).findPatientByBusinessIdentifier('RS1'))!;
    assert.equal(patient.name![0]!.family, 'Müller');
    assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('RS1'), undefined);
  } finally {
    peer.end();
  }
});

test('a sender whose MSH-3 matches no client for its address gets AR and nothing is stored', async () => {
  const peer = await RawPeer.open(listener.port, '127.0.0.2');
  try {
    peer.write(frame(message(['PID|1||NA1^^^H^MR'], { controlId: 'NA-1', sender: 'SOMEONE-ELSE' })));
    const answer = await peer.next();
    assert.deepEqual(msa(answer), { code: 'AR', controlId: 'NA-1' });
    assert.match(answer!, /sender not authorized/);
    assert.equal(await resourceStore(db.database, restricted).findPatientByBusinessIdentifier('NA1'), undefined);
    assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('NA1'), undefined);
  } finally {
    peer.end();
  }
});

test('an address no client admits is closed without an answer', async () => {
  const peer = await RawPeer.open(listener.port, '127.0.0.9');
  peer.write(frame(message(['PID|1||X^^^H^MR'])));
  await peer.closedByServer();
  assert.equal(await peer.next(), undefined);
});

test('a re-sent message over MLLP gets the original ACK', async () => {
  const peer = await RawPeer.open(listener.port);
  try {
    const raw = frame(message(['PID|1||DUP^^^H^MR'], { controlId: 'MLLP-DUP' }));
    peer.write(raw);
    const first = await peer.next();
    peer.write(raw);
    assert.equal(await peer.next(), first);
  } finally {
    peer.end();
  }
});

test('one connection dropped mid-frame does not disturb another', async () => {
  const dropped = await RawPeer.open(listener.port);
  dropped.write(Buffer.from('\x0bMSH|^~\\&|half a message'));
  dropped.end();
  const peer = await RawPeer.open(listener.port);
  try {
    peer.write(frame(message(['PID|1||OK^^^H^MR'], { controlId: 'OK-1' })));
    assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: 'OK-1' });
  } finally {
    peer.end();
  }
});

test('shutdown answers the messages already received before closing', async () => {
  const own = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0 });
  const peer = await RawPeer.open(own.port);
  peer.write(Buffer.concat([frame(message(['PID|1||SD1^^^H^MR'], { controlId: 'SD-1' })), frame(message(['PID|1||SD2^^^H^MR'], { controlId: 'SD-2' }))]));
  assert.equal(msa(await peer.next()).controlId, 'SD-1');
  await own.close();
  assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: 'SD-2' });
  await peer.closedByServer();
});

test('with the database away the message is answered AR (retry), not AE', async () => {
  const down = new Database({ connectionString: 'postgres://postgres@127.0.0.1:1/none', maxConnections: 1 });
  const own = await startMllpListener(testServices(down), { host: '127.0.0.1', port: 0 });
  const peer = await RawPeer.open(own.port);
  try {
    peer.write(frame(message(['PID|1||DOWN^^^H^MR'], { controlId: 'DOWN-1' })));
    const answer = await peer.next();
    assert.deepEqual(msa(answer), { code: 'AR', controlId: 'DOWN-1' });
    assert.match(answer!, /207\^Application internal error/);
  } finally {
    peer.end();
    await own.close();
    await down.close();
  }
});
