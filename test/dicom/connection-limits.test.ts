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

test('connections from one address beyond CG_DICOM_MAX_CONNECTIONS_PER_ADDRESS are closed at once, before any association', () =>
  withListener({ maxConnectionsPerAddress: 4, artimTimeoutMs: 60_000 }, async (listener) => {
    const site = await createTestSite(harness.db.database);
    const idle = await Promise.all([1, 2, 3, 4].map(() => RawPeer.connect(listener.port)));
    const fifth = await RawPeer.connect(listener.port);
    // Long before ARTIM (60 s) could close it: refused for the count, not for silence.
    assert.equal(await closedWithin(fifth, 10_000), true, 'the fifth idle connection from one address was kept open');
    const refused = await dcmtk('echoscu', ['-aec', site.aeTitle, '127.0.0.1', String(listener.port)]);
    assert.notEqual(refused.code, 0);
    for (const peer of idle) peer.destroy();
    await Promise.all(idle.map((peer) => peer.closed()));
    // The slots are given back as the connections close.
    let echo = await dcmtk('echoscu', ['-aec', site.aeTitle, '127.0.0.1', String(listener.port)]);
    for (let attempt = 0; attempt < 20 && echo.code !== 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      echo = await dcmtk('echoscu', ['-aec', site.aeTitle, '127.0.0.1', String(listener.port)]);
    }
    assert.equal(echo.code, 0, echo.stderr);
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
