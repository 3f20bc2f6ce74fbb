import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { acquireNodeLease, NodeIdInUseError } from '../../src/server/node-lease.ts';
import { onceAcrossNodes, runIfNoOtherNodeIs } from '../../src/storage/once-across-nodes.ts';
import { Database } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const logger = pino({ level: 'silent' });
const neverLost = () => assert.fail('the lease was lost');

test('a node id is leased to one running process; a second is refused until the first releases it', async () => {
  const first = await acquireNodeLease(db.database, 'lease-a', logger, neverLost);
  await assert.rejects(acquireNodeLease(db.database, 'lease-a', logger, neverLost), (error: unknown) => error instanceof NodeIdInUseError && /node id lease-a is in use/.test(error.message));
  const other = await acquireNodeLease(db.database, 'lease-b', logger, neverLost);
  await first.release();
  const again = await acquireNodeLease(db.database, 'lease-a', logger, neverLost);
  await Promise.all([again.release(), other.release()]);
});

test('a lease left by a crash is taken over: at once when its process of this host is gone, after the expiry otherwise', async () => {
  const insert = (node: string, host: string, pid: number, heartbeatAgo: string) =>
    db.database.query(`INSERT INTO service_node (node_id, holder, host, pid, heartbeat_at) VALUES ($1, gen_random_uuid(), $2, $3, now() - $4::interval)`, [node, host, pid, heartbeatAgo]);
  // A pid no process has (above the kernel's pid_max).
  await insert('crashed-here', hostname(), 4_194_305, '1 second');
  await (await acquireNodeLease(db.database, 'crashed-here', logger, neverLost)).release();
  // A live process of this host (the test runner's parent) holds it: refused.
  await insert('alive-here', hostname(), process.ppid, '1 second');
  await assert.rejects(acquireNodeLease(db.database, 'alive-here', logger, neverLost), NodeIdInUseError);
  // Another host, heartbeat fresh: refused; heartbeat expired: taken over.
  await insert('elsewhere', 'another-host', 1, '1 second');
  await assert.rejects(acquireNodeLease(db.database, 'elsewhere', logger, neverLost), NodeIdInUseError);
  await db.database.query(`UPDATE service_node SET heartbeat_at = now() - interval '1 minute' WHERE node_id = 'elsewhere'`);
  await (await acquireNodeLease(db.database, 'elsewhere', logger, neverLost)).release();
});

test('a job run once across nodes is skipped by a process of another node while one runs it', async () => {
  const otherNode = new Database({ connectionString: db.connectionString, maxConnections: 2 });
  try {
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = runIfNoOtherNodeIs(db.database, onceAcrossNodes.plannerStatistics, async () => {
      started();
      await holding;
      return 'ran';
    });
    await running;
    assert.equal(await runIfNoOtherNodeIs(otherNode, onceAcrossNodes.plannerStatistics, async () => 'ran too'), undefined);
    assert.equal(await runIfNoOtherNodeIs(otherNode, onceAcrossNodes.dataAccessRetention, async () => 'another job'), 'another job');
    release();
    assert.equal(await first, 'ran');
    assert.equal(await runIfNoOtherNodeIs(otherNode, onceAcrossNodes.plannerStatistics, async () => 'its turn'), 'its turn');
  } finally {
    await otherNode.close();
  }
});
