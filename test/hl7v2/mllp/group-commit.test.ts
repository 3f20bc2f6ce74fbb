// Messages of several MLLP connections committed together: each ACK leaves only after the commit
// that holds its message, a bad message or a duplicate in a group fails alone, and one
// connection's messages keep their order. The commits are held by advisory locks that a deferred
// trigger on the message log takes at COMMIT; the test waits for states (sessions waiting for a
// lock, messages queued), never for a time.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { createIntegrationClient } from '../../../src/domain/clients/integration-clients.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { frame } from '../../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../../src/hl7v2/mllp/listener.ts';
import { groupedTransactions, type GroupedTransactions } from '../../../src/storage/grouped-transactions.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testServices } from '../../support/http.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';
import { msa, RawPeer } from './support.ts';

/** Taken at the commit of a message whose control id starts with PLUG, and of every other message. */
const plugLock = 4242;
const groupLock = 4243;

let db: TestDatabase;
let listener: RunningMllpListener;
let site: SiteContext;
let groups: GroupedTransactions;
let holder: pg.Client;

before(async () => {
  db = await createTestDatabase();
  site = await createTestSite(db.database);
  await createIntegrationClient(db.database, site.siteId, { name: 'lab', protocol: 'hl7-mllp', allowedIps: '127.0.0.1' }, { kind: 'operator' });
  await db.database.query(`CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(CASE WHEN NEW.control_id LIKE 'PLUG%' THEN ${plugLock} ELSE ${groupLock} END);
      RETURN NULL;
    END $$`);
  await db.database.query(
    'CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON inbound_message DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION hold_commit()',
  );
  // One group at a time, so that the messages sent while the plug is held make one group.
  groups = groupedTransactions(db.database, { maxInFlight: 1, spreadAfterMs: 0, maxGroup: 32 });
  holder = new pg.Client({ connectionString: db.connectionString });
  await holder.connect();
  listener = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0 });
});
after(async () => {
  // A failed test may leave a commit held: release it, or closing the listener waits for it.
  await holder.query('SELECT pg_advisory_unlock_all()');
  await listener.close();
  await holder.end();
  await db.drop();
});

/** Polls a state; a state never reached fails the test (after 3,000 looks) rather than hanging it. */
async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  for (let look = 0; look < 3_000; look++) {
    if (await condition()) return;
    await delay(10);
  }
  assert.fail('the service never reached the state the test waits for');
}

async function waitingFor(lock: number): Promise<number> {
  const { rows } = await db.database.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1", [lock]);
  return rows[0]!.n;
}

async function logged(controlIds: string[]): Promise<{ control_id: string; ack_code: string; xmin: string; seq: string }[]> {
  const { rows } = await db.database.query<{ control_id: string; ack_code: string; xmin: string; seq: string }>(
    'SELECT control_id, ack_code, xmin::text AS xmin, seq::text AS seq FROM inbound_message WHERE site_id = $1 AND control_id = ANY($2) ORDER BY seq',
    [site.siteId, controlIds],
  );
  return rows;
}

/**
 * A08 (update patient information): it takes the grouped transaction even for a patient the site
 * does not know yet, which it creates. An A01 for a new patient is committed on its own in one
 * statement instead (test/hl7v2/intake/new-patient-message.test.ts).
 */
function update(mrn: string, family: string, controlId: string): Buffer {
  return frame(message([`PID|1||${mrn}^^^H^MR||${family}^Ann`, 'PV1|1|I'], { controlId, type: 'ADT^A08^ADT_A01' }));
}

/**
 * Sends a plug message and waits until its commit is held, so that what is sent next queues
 * behind it and leaves as one group when `plugLock` is released.
 */
async function plug(tag: string): Promise<RawPeer> {
  await holder.query('SELECT pg_advisory_lock($1)', [plugLock]);
  const peer = await RawPeer.open(listener.port);
  peer.write(update(`PLUG-${tag}`, 'Plug', `PLUG-${tag}`));
  await until(async () => (await waitingFor(plugLock)) === 1);
  return peer;
}

async function releasePlug(peer: RawPeer, tag: string): Promise<void> {
  await holder.query('SELECT pg_advisory_unlock($1)', [plugLock]);
  assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: `PLUG-${tag}` });
  peer.end();
}

test('no ACK leaves before the commit that holds its message, and the messages of four connections share that commit', async () => {
  const plugPeer = await plug('1');
  await holder.query('SELECT pg_advisory_lock($1)', [groupLock]);
  const ids = ['G-1', 'G-2', 'G-3', 'G-4'];
  const peers = await Promise.all(ids.map(() => RawPeer.open(listener.port)));
  peers.forEach((peer, i) => peer.write(update(`MRN-${ids[i]}`, 'Grouped', ids[i]!)));
  await until(() => groups.pending.queued === ids.length);
  await releasePlug(plugPeer, '1');
  // The group's works are done and its COMMIT waits for the lock.
  await until(async () => (await waitingFor(groupLock)) === 1 && groups.pending.running === ids.length);
  assert.deepEqual(peers.map((peer) => peer.unread), [0, 0, 0, 0], 'no ACK before the commit');
  assert.deepEqual(await logged(ids), [], 'nothing committed yet');
  await holder.query('SELECT pg_advisory_unlock($1)', [groupLock]);
  for (const [i, peer] of peers.entries()) assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: ids[i] });
  const rows = await logged(ids);
  assert.equal(rows.length, 4);
  assert.equal(new Set(rows.map((row) => row.xmin)).size, 1, 'one commit for the four messages');
  for (const id of ids) assert.ok(await resourceStore(db.database, site).findPatientByBusinessIdentifier(`MRN-${id}`));
  peers.forEach((peer) => peer.end());
});

test('a bad message in a group is answered AE on its own; the others of the group are stored and answered AA', async () => {
  const plugPeer = await plug('2');
  const peers = await Promise.all([0, 1, 2].map(() => RawPeer.open(listener.port)));
  peers[0]!.write(update('MRN-B-1', 'Good', 'B-1'));
  // A merge whose source is its target: planned, then refused by the domain inside the transaction.
  peers[1]!.write(frame(message(['PID|1||MRN-B-2^^^H^MR||Same^Ann', 'MRG|MRN-B-2^^^H^MR'], { controlId: 'B-2', type: 'ADT^A40^ADT_A39' })));
  peers[2]!.write(update('MRN-B-3', 'Good', 'B-3'));
  await until(() => groups.pending.queued === 3);
  await releasePlug(plugPeer, '2');
  assert.deepEqual(msa(await peers[0]!.next()), { code: 'AA', controlId: 'B-1' });
  assert.deepEqual(msa(await peers[1]!.next()), { code: 'AE', controlId: 'B-2' });
  assert.deepEqual(msa(await peers[2]!.next()), { code: 'AA', controlId: 'B-3' });
  assert.deepEqual((await logged(['B-1', 'B-2', 'B-3'])).map((row) => [row.control_id, row.ack_code]).sort(), [['B-1', 'AA'], ['B-2', 'AE'], ['B-3', 'AA']]);
  assert.ok(await resourceStore(db.database, site).findPatientByBusinessIdentifier('MRN-B-1'));
  assert.ok(await resourceStore(db.database, site).findPatientByBusinessIdentifier('MRN-B-3'));
  assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('MRN-B-2'), undefined, 'nothing of the bad message was stored');
  peers.forEach((peer) => peer.end());
});

test('two copies of one message in a group: stored once, both answered with the same AA', async () => {
  const plugPeer = await plug('3');
  const peers = await Promise.all([0, 1, 2].map(() => RawPeer.open(listener.port)));
  const copy = update('MRN-D-1', 'Twice', 'D-1');
  peers[0]!.write(copy);
  peers[1]!.write(copy);
  peers[2]!.write(update('MRN-D-2', 'Once', 'D-2'));
  await until(() => groups.pending.queued === 3);
  await releasePlug(plugPeer, '3');
  const answers = await Promise.all(peers.map((peer) => peer.next()));
  assert.deepEqual(answers.map(msa), [{ code: 'AA', controlId: 'D-1' }, { code: 'AA', controlId: 'D-1' }, { code: 'AA', controlId: 'D-2' }]);
  assert.equal(answers[0], answers[1], 'the copy gets the first ACK again');
  assert.deepEqual((await logged(['D-1', 'D-2'])).map((row) => row.control_id).sort(), ['D-1', 'D-2']);
  const { rows } = await db.database.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient' AND business_identifier = 'MRN-D-1'",
    [site.siteId],
  );
  assert.equal(rows[0]!.n, 1);
  peers.forEach((peer) => peer.end());
});

test("one connection's messages are applied and answered in order while others' are grouped with them", async () => {
  const plugPeer = await plug('4');
  const ordered = await RawPeer.open(listener.port);
  const other = await RawPeer.open(listener.port);
  const ids = ['O-1', 'O-2', 'O-3'];
  // Three updates of one patient in one write: the last name sent must be the one kept.
  ordered.write(Buffer.concat(ids.map((id, i) => update('MRN-O', `Order${i + 1}`, id))));
  other.write(update('MRN-O-X', 'Other', 'O-X'));
  await until(() => groups.pending.queued === 2);
  await releasePlug(plugPeer, '4');
  for (const id of ids) assert.deepEqual(msa(await ordered.next()), { code: 'AA', controlId: id });
  assert.deepEqual(msa(await other.next()), { code: 'AA', controlId: 'O-X' });
  assert.deepEqual((await logged(ids)).map((row) => row.control_id), ids, 'logged in the order sent');
  const patient = await resourceStore(db.database, site).findPatientByBusinessIdentifier('MRN-O');
  assert.equal(patient?.name?.[0]?.family, 'Order3');
  ordered.end();
  other.end();
});
