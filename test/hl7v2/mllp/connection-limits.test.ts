// Issue 26 point 5: MLLP connections per address and in all, and the memory their frames hold.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createIntegrationClient } from '../../../src/domain/clients/integration-clients.ts';
import { frame } from '../../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type MllpListenerOptions } from '../../../src/hl7v2/mllp/listener.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testServices } from '../../support/http.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';
import { msa, RawPeer } from './support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
  const site = await createTestSite(db.database);
  await createIntegrationClient(db.database, site.siteId, { name: 'lab', protocol: 'hl7-mllp', allowedIps: '127.0.0.1,127.0.0.2' }, { kind: 'operator' });
});
after(() => db.drop());

async function withListener(options: Partial<MllpListenerOptions>, run: (port: number) => Promise<void>): Promise<void> {
  const listener = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0, ...options });
  try {
    await run(listener.port);
  } finally {
    await listener.close();
  }
}

/** Whether the listener closes the peer within `ms` (the idle timeout is minutes away). */
function closedWithin(peer: RawPeer, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    peer.closedByServer().then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function acknowledged(peer: RawPeer, controlId: string): Promise<string> {
  peer.write(frame(message([`PID|1||${controlId}^^^H^MR`], { controlId })));
  return msa(await peer.next()).code;
}

const unfinished = Buffer.from('\x0bMSH|^~\\&|LAB|HOSP|GW|SITE|20240101||ADT^A01|BUSY|P|2.5.1\r');

for (const [limit, options] of [
  ['per address (CG_MLLP_MAX_CONNECTIONS_PER_ADDRESS)', { maxConnectionsPerAddress: 3 }],
  ['in all (CG_MLLP_MAX_CONNECTIONS)', { maxConnections: 3 }],
] as const) {
  test(`over the limit ${limit}, the oldest idle connection makes room; with none idle, the newcomer is closed at once`, () =>
    withListener(options, async (port) => {
      const held: RawPeer[] = [];
      for (const _ of [1, 2, 3]) held.push(await RawPeer.open(port));
      assert.equal(await acknowledged(held[2]!, 'LIMIT-0'), 'AA');
      const fourth = await RawPeer.open(port);
      assert.equal(await closedWithin(held[0]!, 10_000), true, 'the oldest idle connection was kept');
      assert.equal(await acknowledged(fourth, 'LIMIT-1'), 'AA');
      // Every connection in the middle of a message: none can make room.
      for (const peer of [held[1]!, held[2]!, fourth]) peer.write(unfinished);
      // Loopback delivers at once; the pause only lets the listener's event loop take the bytes.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const fifth = await RawPeer.open(port);
      assert.equal(await closedWithin(fifth, 10_000), true, 'a newcomer was let in over busy connections');
      assert.equal(held[1]!.closed || held[2]!.closed || fourth.closed, false);
      for (const peer of [...held, fourth]) peer.end();
    }));
}

test('when every slot is taken, a newcomer from another address takes the slot of the address holding the most', () =>
  withListener({ maxConnections: 3 }, async (port) => {
    const crowd = await Promise.all([1, 2, 3].map(() => RawPeer.open(port, '127.0.0.2')));
    assert.equal(await acknowledged(crowd[0]!, 'CROWD-1'), 'AA');
    const newcomer = await RawPeer.open(port, '127.0.0.1');
    assert.equal(await acknowledged(newcomer, 'NEWCOMER-1'), 'AA');
    const closed = await Promise.all(crowd.map((peer) => closedWithin(peer, 5_000)));
    assert.equal(closed.filter(Boolean).length, 1, 'one of the crowding connections makes room');
    for (const peer of [...crowd, newcomer]) peer.end();
  }));

test('unfinished frames beyond CG_MLLP_UNFINISHED_BYTES: the connection holding the most is closed to make room, the others are served', () =>
  withListener({ unfinishedFrameBytes: 256 * 1024 }, async (port) => {
    const partial = (size: number) => Buffer.concat([Buffer.of(0x0b), Buffer.from(`MSH|^~\\&|A|B|C|D|20240101||ADT^A01|P|P|2.5.1\r${'X'.repeat(size)}`)]);
    const first = await RawPeer.open(port);
    const second = await RawPeer.open(port);
    const probe = await RawPeer.open(port);
    first.write(partial(100 * 1024));
    second.write(partial(130 * 1024));
    // Listener round trips on another connection, so that both partial frames are in first.
    assert.equal(await acknowledged(probe, 'MEM-0'), 'AA');
    // A growth that only fits if someone's frame goes: the largest holder (second) is closed.
    const third = await RawPeer.open(port);
    third.write(partial(60 * 1024));
    assert.equal(await closedWithin(second, 10_000), true, 'the connection holding the most was kept');
    assert.equal(first.closed || third.closed, false);
    // A connection that would itself hold the most is the one closed.
    const greedy = await RawPeer.open(port);
    greedy.write(partial(200 * 1024));
    assert.equal(await closedWithin(greedy, 10_000), true, 'the greedy connection was kept');
    assert.equal(first.closed || third.closed, false);
    // A finished frame gives its memory back and is answered.
    first.write(Buffer.of(0x1c, 0x0d));
    assert.notEqual(msa(await first.next()).code, '');
    assert.equal(await acknowledged(probe, 'MEM-1'), 'AA');
    for (const peer of [first, probe, third]) peer.end();
  }));
