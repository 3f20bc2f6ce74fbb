import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startDicomListener, type DicomListener } from '../../src/dicom/listener.ts';
import { createTestSite } from '../support/sites.ts';
import { dcmtk, startHarness, type DicomHarness } from './support/dicom-harness.ts';
import { associateRequest, RawPeer } from './support/raw-peer.ts';

/** Issue 26 point 3: one address cannot block the DICOM listener for every site. */

const verification = { id: 1, abstractSyntax: '1.2.840.10008.1.1', transferSyntaxes: ['1.2.840.10008.1.2'] };

let harness: DicomHarness;
before(async () => {
  harness = await startHarness();
});
after(() => harness.stop());

async function withListener(options: Parameters<typeof startDicomListener>[1] extends infer O ? Partial<O> : never, run: (listener: DicomListener) => Promise<void>) {
  const listener = await startDicomListener(harness.services, { host: '127.0.0.1', port: 0, ...options });
  try {
    await run(listener);
  } finally {
    await listener.close();
  }
}

/** Whether the listener closes the peer's connection within `ms` (bounded, never hangs). */
function closedWithin(peer: RawPeer, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    peer.closed().then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

test('connections from one address are capped before any association: the oldest unassociated one makes room, so idle sockets never lock out a real association', () =>
  withListener({ maxConnectionsPerAddress: 4, artimTimeoutMs: 60_000 }, async (listener) => {
    const site = await createTestSite(harness.db.database);
    const idle: RawPeer[] = [];
    for (const _ of [1, 2, 3, 4]) idle.push(await RawPeer.connect(listener.port));
    const fifth = await RawPeer.connect(listener.port);
    // Long before ARTIM (60 s) could close it: the oldest goes for the count, not for silence.
    assert.equal(await closedWithin(idle[0]!, 10_000), true, 'five connections from one address were held');
    assert.equal(fifth.socket.destroyed, false);
    // An association from the same address still gets in, taking the next oldest idle slot.
    const echo = await dcmtk('echoscu', ['-aec', site.aeTitle, '127.0.0.1', String(listener.port)]);
    assert.equal(echo.code, 0, echo.stderr);
    assert.equal(await closedWithin(idle[1]!, 10_000), true);
    for (const peer of [...idle, fifth]) peer.destroy();
  }));

test('when every connection slot is taken, an unassociated connection of the address holding the most makes room for another address', () =>
  withListener({ maxAssociations: 2, maxConnectionsPerAddress: 4, artimTimeoutMs: 60_000 }, async (listener) => {
    const site = await createTestSite(harness.db.database);
    // Four idle connections from another address take every slot (twice the association limit).
    const crowd = await Promise.all([1, 2, 3, 4].map(() => RawPeer.connect(listener.port, '127.0.0.2')));
    const echo = await dcmtk('echoscu', ['-aec', site.aeTitle, '127.0.0.1', String(listener.port)]);
    assert.equal(echo.code, 0, echo.stderr);
    const closed = await Promise.all(crowd.map((peer) => closedWithin(peer, 5_000)));
    assert.equal(closed.filter(Boolean).length, 1);
    for (const peer of crowd) peer.destroy();
  }));

test('association set-up has one fixed deadline: a peer dripping its A-ASSOCIATE-RQ a byte at a time is closed when ARTIM expires', () =>
  withListener({ artimTimeoutMs: 500 }, async (listener) => {
    const site = await createTestSite(harness.db.database);
    const request = associateRequest({ calledAeTitle: site.aeTitle, contexts: [verification] });
    const peer = await RawPeer.connect(listener.port);
    let sent = 0;
    let closed = false;
    void peer.closed().then(() => {
      closed = true;
    });
    // One byte every 100 ms, each well inside ARTIM, for ten times ARTIM in all.
    while (!closed && sent < 50 && sent < request.length - 1) {
      peer.write(request.subarray(sent, sent + 1));
      sent++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(closed, true, `still open after ${sent} bytes over ${sent / 10} s`);
    assert.ok(sent < 50);
    peer.destroy();
  }));
