// The MLLP listener decides senders from memory between credential changes: a client disabled or
// narrowed, through this process or any other, stops being accepted once its commit is notified,
// and without a listening change feed every message is decided from the database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createIntegrationClient, updateIntegrationClient } from '../../../src/domain/clients/integration-clients.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { frame } from '../../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../../src/hl7v2/mllp/listener.ts';
import { Database } from '../../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testServices } from '../../support/http.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';
import { msa, RawPeer } from './support.ts';

let db: TestDatabase;
// A second pool on the same database stands in for another process (the CLI, another instance).
let other: Database;
let listener: RunningMllpListener;
let site: SiteContext;
const operator = { kind: 'operator' } as const;

before(async () => {
  db = await createTestDatabase();
  other = new Database({ connectionString: db.connectionString });
  site = await createTestSite(db.database);
  await db.database.credentialChanges.listening();
  listener = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0 });
});
after(async () => {
  await listener.close();
  await other.close();
  await db.drop();
});

const feed = () => db.database.credentialChanges;
let addresses = 10;
/**
 * Each test sends from a loopback address of its own, admitted by a client of its own. The client
 * is registered through the other pool and its notification awaited, so that notification cannot
 * arrive later, between a test's steps, and make a decision the test expects from memory stale.
 */
async function clientOnNewAddress(options: { sendingApplication?: string } = {}): Promise<{ id: string; address: string }> {
  const address = `127.0.0.${addresses++}`;
  const token = feed().token()!;
  const client = await createIntegrationClient(other, site.siteId, { name: `client ${address}`, protocol: 'hl7-mllp', allowedIps: address, ...options }, operator);
  await feed().changedSince(token);
  return { id: client.id, address };
}

async function answer(peer: RawPeer, controlId: string, sender = 'LAB'): Promise<string> {
  peer.write(frame(message([`PID|1||${controlId}^^^H^MR`], { controlId, sender })));
  const ack = msa(await peer.next());
  assert.equal(ack.controlId, controlId);
  return ack.code;
}

test('a client disabled through this process is refused from the next message on', async () => {
  const { id, address } = await clientOnNewAddress();
  const peer = await RawPeer.open(listener.port, address);
  try {
    assert.equal(await answer(peer, 'DIS-1'), 'AA');
    await updateIntegrationClient(db.database, site.siteId, id, { enabled: false }, operator);
    assert.equal(await answer(peer, 'DIS-2'), 'AR');
  } finally {
    peer.end();
  }
});

test('a change committed in a transaction or by another process is applied once notified', async () => {
  const { id, address } = await clientOnNewAddress();
  const peer = await RawPeer.open(listener.port, address);
  try {
    assert.equal(await answer(peer, 'TX-1'), 'AA');
    let token = feed().token()!;
    await db.database.transaction((tx) => updateIntegrationClient(tx, site.siteId, id, { sendingApplication: 'ONLY-THIS-APP' }, operator));
    await feed().changedSince(token);
    assert.equal(await answer(peer, 'TX-2'), 'AR');
    assert.equal(await answer(peer, 'TX-3', 'ONLY-THIS-APP'), 'AA');
    token = feed().token()!;
    await other.query('UPDATE integration_client SET enabled = false WHERE id = $1', [id]);
    await feed().changedSince(token);
    assert.equal(await answer(peer, 'TX-4', 'ONLY-THIS-APP'), 'AR');
  } finally {
    peer.end();
  }
});

test('decisions come from memory: a change that is never notified goes unseen until the next one', async () => {
  const { id, address } = await clientOnNewAddress();
  const peer = await RawPeer.open(listener.port, address);
  try {
    assert.equal(await answer(peer, 'MEM-1'), 'AA');
    await other.query('ALTER TABLE integration_client DISABLE TRIGGER integration_client_credentials_changed');
    try {
      await other.query('UPDATE integration_client SET enabled = false WHERE id = $1', [id]);
      assert.equal(await answer(peer, 'MEM-2'), 'AA');
    } finally {
      await other.query('ALTER TABLE integration_client ENABLE TRIGGER integration_client_credentials_changed');
    }
    // Any notified change (here to a site) makes the kept registrations stale.
    const token = feed().token()!;
    await other.query(`UPDATE site SET updated_at = now() WHERE name = 'no such site'`);
    await feed().changedSince(token);
    assert.equal(await answer(peer, 'MEM-3'), 'AR');
  } finally {
    peer.end();
  }
});

test('a client registered by another process admits its address once notified', async () => {
  const address = `127.0.0.${addresses++}`;
  const token = feed().token()!;
  await other.query(
    `INSERT INTO integration_client (id, site_id, name, protocol, allowed_ips) VALUES (gen_random_uuid(), $1, 'registered elsewhere', 'hl7-mllp', ARRAY[$2])`,
    [site.siteId, address],
  );
  await feed().changedSince(token);
  const peer = await RawPeer.open(listener.port, address);
  try {
    assert.equal(await answer(peer, 'NEW-1'), 'AA');
  } finally {
    peer.end();
  }
});

test('while the change feed is down, every message is decided from the database', async () => {
  const { id, address } = await clientOnNewAddress();
  const peer = await RawPeer.open(listener.port, address);
  try {
    assert.equal(await answer(peer, 'DOWN-1'), 'AA');
    const token = feed().token()!;
    await other.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE application_name = 'clinical-gateway change feed' AND datname = current_database()`);
    await feed().changedSince(token);
    await other.query('ALTER TABLE integration_client DISABLE TRIGGER integration_client_credentials_changed');
    try {
      await other.query('UPDATE integration_client SET enabled = false WHERE id = $1', [id]);
      // Either still reconnecting (no cache) or reconnected (a new token, so the kept copy is stale).
      assert.equal(await answer(peer, 'DOWN-2'), 'AR');
    } finally {
      await other.query('ALTER TABLE integration_client ENABLE TRIGGER integration_client_credentials_changed');
    }
  } finally {
    peer.end();
  }
  await feed().listening();
});
