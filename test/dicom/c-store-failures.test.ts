import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { processTemporaryFolder, startDicomListener } from '../../src/dicom/listener.ts';
import { Database } from '../../src/storage/database.ts';
import { createTestSite } from '../support/sites.ts';
import { datasetOf, exists, dicomFixture, listFiles, transferFiles, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';
import { abortRequest, associate, commandSet, cStoreRequest, pData, statusOf, type RawPeer } from './support/raw-peer.ts';

const run = promisify(execFile);
const ctClass = '1.2.840.10008.5.1.4.1.1.2';
const ctInstance = '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322';
const ctContext = { id: 1, abstractSyntax: ctClass, transferSyntaxes: ['1.2.840.10008.1.2.1'] };

let harness: DicomHarness;
let ctDataset: Buffer;
before(async () => {
  harness = await startHarness();
  ctDataset = datasetOf(await readFile(dicomFixture('CT_small.dcm')));
});
after(() => harness.stop());

const tmpDir = () => processTemporaryFolder(harness.services.config);

async function rowsOf(siteId: string): Promise<number> {
  const { rows } = await harness.db.database.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [siteId]);
  return rows[0].n;
}

async function assertNothingStored(siteId: string): Promise<void> {
  assert.equal(await rowsOf(siteId), 0);
  const { rows } = await harness.db.database.query('SELECT count(*)::int AS n FROM imaging_study WHERE site_id = $1', [siteId]);
  assert.equal(rows[0].n, 0);
  assert.deepEqual(await listFiles(join(harness.dataDir, 'dicom', siteId)), []);
  assert.deepEqual(await transferFiles(harness.dataDir), []);
}

/** Waits for a condition the listener reaches asynchronously (not a timing assertion). */
async function eventually(condition: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail('condition not reached');
}

/** Sends one C-STORE (command, then the dataset in fragments) and returns the response status. */
async function store(peer: RawPeer, command: Buffer, dataset: Buffer, fragment = 4096): Promise<number> {
  peer.write(pData(1, true, true, command));
  for (let offset = 0; offset < dataset.length; offset += fragment) {
    peer.write(pData(1, false, offset + fragment >= dataset.length, dataset.subarray(offset, offset + fragment)));
  }
  const response = await peer.nextPdu();
  assert.equal(response?.type, 0x04);
  return statusOf(response!.body);
}

for (const ending of ['A-ABORT', 'a dropped connection'] as const) {
  test(`${ending} in the middle of a transfer leaves no file and no index row`, async () => {
    const site = await createTestSite(harness.db.database);
    const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
    peer.write(pData(1, true, true, cStoreRequest(1, ctClass, ctInstance)));
    peer.write(pData(1, false, false, ctDataset.subarray(0, 20_000)));
    // The transfer is under way: its temporary file exists.
    await eventually(async () => (await transferFiles(harness.dataDir)).length === 1);
    if (ending === 'A-ABORT') {
      peer.write(abortRequest());
      await peer.closed();
    } else {
      peer.destroy();
    }
    await eventually(async () => (await transferFiles(harness.dataDir)).length === 0);
    await assertNothingStored(site.siteId);
  });
}

test('a dataset cut short (last fragment sent early) is refused with 0xC000 and leaves nothing', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
  assert.equal(await store(peer, cStoreRequest(1, ctClass, ctInstance), ctDataset.subarray(0, ctDataset.length - 1000)), 0xc000);
  await assertNothingStored(site.siteId);
  // The association goes on: the whole dataset is then stored.
  assert.equal(await store(peer, cStoreRequest(2, ctClass, ctInstance), ctDataset), 0x0000);
  assert.equal(await rowsOf(site.siteId), 1);
  peer.destroy();
});

test('garbage as a dataset is refused with 0xC000', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
  const garbage = Buffer.from('this is not a DICOM dataset at all, just some text bytes'.repeat(50));
  assert.equal(await store(peer, cStoreRequest(1, ctClass, ctInstance), garbage), 0xc000);
  await assertNothingStored(site.siteId);
  peer.destroy();
});

test('a dataset whose SOP Instance UID differs from the command is refused with 0xC000', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
  assert.equal(await store(peer, cStoreRequest(1, ctClass, '1.2.3.4.5'), ctDataset), 0xc000);
  await assertNothingStored(site.siteId);
  peer.destroy();
});

test('a SOP class other than the context abstract syntax is refused with 0x0122', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
  assert.equal(await store(peer, cStoreRequest(1, '1.2.840.10008.5.1.4.1.1.4', ctInstance), ctDataset), 0x0122);
  await assertNothingStored(site.siteId);
  peer.destroy();
});

test('C-STORE without a dataset is refused with 0xC000; C-FIND on a storage context gets 0x0122; an unsupported operation gets 0x0211', async () => {
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
  const noDataSet = commandSet([[0x0002, ctClass], [0x0100, 0x0001], [0x0110, 1], [0x0700, 0], [0x0800, 0x0101], [0x1000, ctInstance]]);
  peer.write(pData(1, true, true, noDataSet));
  assert.equal(statusOf((await peer.nextPdu())!.body), 0xc000);
  // C-FIND-RQ (0x0020) with an identifier on a storage SOP class's context: that class has no
  // query service, 0x0122 (as C-ECHO outside Verification).
  const find = commandSet([[0x0002, ctClass], [0x0100, 0x0020], [0x0110, 2], [0x0700, 0], [0x0800, 0x0000]]);
  assert.equal(await store(peer, find, Buffer.from([0x08, 0x00, 0x52, 0x00, 0x43, 0x53, 0x06, 0x00, 0x53, 0x54, 0x55, 0x44, 0x59, 0x20])), 0x0122);
  // N-GET-RQ (0x0110) without a data set: no service here has it, 0x0211.
  const nGet = commandSet([[0x0003, ctClass], [0x0100, 0x0110], [0x0110, 3], [0x0800, 0x0101], [0x1001, ctInstance]]);
  peer.write(pData(1, true, true, nGet));
  assert.equal(statusOf((await peer.nextPdu())!.body), 0x0211);
  await assertNothingStored(site.siteId);
  peer.destroy();
});

test('a re-sent identical instance succeeds without a duplicate; different bytes under the same UID are refused (0x0111) and the first is kept', async () => {
  const site = await createTestSite(harness.db.database);
  const mr = dicomFixture('MR_small.dcm');
  const first = await storescu(harness.listener.port, site.aeTitle, [mr, mr], ['-v', '-xe']);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stderr.match(/Received Store Response \(Success\)/g)?.length, 2);
  const files = await listFiles(join(harness.dataDir, 'dicom', site.siteId));
  assert.equal(files.length, 1);
  const kept = createHash('sha256').update(await readFile(files[0]!)).digest('hex');

  // The same SOP Instance UID in implicit VR: other bytes, so refused under the keep-first policy.
  const other = await storescu(harness.listener.port, site.aeTitle, [dicomFixture('MR_small_implicit.dcm')], ['-v', '-xi']);
  assert.match(other.stderr, /Received Store Response \(.*0x111/i);
  assert.equal(await rowsOf(site.siteId), 1);
  assert.deepEqual(await listFiles(join(harness.dataDir, 'dicom', site.siteId)), files);
  assert.equal(createHash('sha256').update(await readFile(files[0]!)).digest('hex'), kept);
  assert.deepEqual(await transferFiles(harness.dataDir), []);
});

/**
 * A pool of the listener's own. Its checked-out clients get an 'error' listener: Database.transaction
 * (src/storage) leaves none while a client is checked out, so a backend terminated mid-transaction
 * would otherwise surface as an uncaught 'error' event.
 */
function listenerDatabase(connectionString: string): Database {
  const database = new Database({ connectionString });
  const guarded = new WeakSet<object>();
  database.pool.on('acquire', (client) => {
    if (guarded.has(client)) return;
    guarded.add(client);
    client.on('error', () => {});
  });
  return database;
}

test('the database failing during indexing gives 0xA700 (retry later), and leaves no file and no row', async () => {
  const site = await createTestSite(harness.db.database);
  const database = listenerDatabase(harness.db.connectionString);
  const listener = await startDicomListener({ ...harness.services, database }, { host: '127.0.0.1', port: 0 });
  const blocker = new pg.Client({ connectionString: harness.db.connectionString });
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE imaging_instance IN ACCESS EXCLUSIVE MODE');
    const peer = await associate(listener.port, site.aeTitle, [ctContext]);
    const answer = store(peer, cStoreRequest(1, ctClass, ctInstance), ctDataset);
    // The listener's indexing transaction waits on the lock; its backend is then terminated,
    // as a server restart would (SQLSTATE 57P01).
    let pid: number | undefined;
    await eventually(async () => {
      const { rows } = await blocker.query(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
      );
      pid = rows[0]?.pid;
      return pid !== undefined;
    });
    await blocker.query('SELECT pg_terminate_backend($1)', [pid]);
    assert.equal(await answer, 0xa700);
    await blocker.query('ROLLBACK');
    await assertNothingStored(site.siteId);
    // Once the database is back, the same instance is stored.
    assert.equal(await store(peer, cStoreRequest(2, ctClass, ctInstance), ctDataset), 0x0000);
    peer.destroy();
  } finally {
    await blocker.end();
    await listener.close();
    await database.close();
  }
});

test('on start-up, transfers left in the temporary folder by a previous run are removed', async () => {
  const stray = join(tmpDir(), 'left-over.part');
  await mkdir(tmpDir(), { recursive: true });
  await writeFile(stray, 'half a transfer');
  await harness.restart();
  assert.equal(await exists(stray), false);
  const site = await createTestSite(harness.db.database);
  const result = await storescu(harness.listener.port, site.aeTitle, [dicomFixture('CT_small.dcm')]);
  assert.equal(result.code, 0, result.stderr);
});

test('a file left at an instance\'s final name with no index row is replaced when the instance arrives', async () => {
  const scratch = await createTestSite(harness.db.database);
  const site = await createTestSite(harness.db.database);
  const peer = await associate(harness.listener.port, scratch.aeTitle, [ctContext]);
  assert.equal(await store(peer, cStoreRequest(1, ctClass, ctInstance), ctDataset), 0x0000);
  peer.destroy();
  const { rows } = await harness.db.database.query<{ storage_path: string }>('SELECT storage_path FROM imaging_instance WHERE site_id = $1', [scratch.siteId]);
  // What a failed store of this instance could leave in the other site: a file nothing indexes.
  const leftover = resolveStoredInstance(harness.services.config.dicomStorageDir, rows[0]!.storage_path.replace(scratch.siteId, site.siteId));
  await mkdir(dirname(leftover), { recursive: true });
  await writeFile(leftover, 'not this instance');
  const second = await associate(harness.listener.port, site.aeTitle, [ctContext]);
  assert.equal(await store(second, cStoreRequest(1, ctClass, ctInstance), ctDataset), 0x0000);
  second.destroy();
  assert.equal(await rowsOf(site.siteId), 1);
  assert.deepEqual(datasetOf(await readFile(leftover)), ctDataset, 'the indexed file holds the instance');
});

test('a deadlock while indexing is retried, and the retried transaction links the file again', async () => {
  const site = await createTestSite(harness.db.database);
  // The first write of the study fails as a deadlock victim would (SQLSTATE 40P01), once: a
  // sequence counts the attempts, since the rollback undoes everything else.
  await harness.db.database.query(`
    CREATE SEQUENCE deadlock_once;
    CREATE FUNCTION deadlock_once() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.site_id = '${site.siteId}' AND nextval('deadlock_once') = 1 THEN
        RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER deadlock_once AFTER INSERT ON imaging_study FOR EACH ROW EXECUTE FUNCTION deadlock_once();`);
  try {
    const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
    assert.equal(await store(peer, cStoreRequest(1, ctClass, ctInstance), ctDataset), 0x0000);
    peer.destroy();
    const { rows } = await harness.db.database.query<{ storage_path: string }>('SELECT storage_path FROM imaging_instance WHERE site_id = $1', [site.siteId]);
    assert.equal((await harness.db.database.query('SELECT last_value::int AS n FROM deadlock_once')).rows[0].n, 2, 'one deadlock, one retry');
    assert.deepEqual(datasetOf(await readFile(resolveStoredInstance(harness.services.config.dicomStorageDir, rows[0]!.storage_path))), ctDataset, 'the indexed file is in place');
  } finally {
    await harness.db.database.query('DROP TRIGGER deadlock_once ON imaging_study; DROP FUNCTION deadlock_once(); DROP SEQUENCE deadlock_once');
  }
});

test('a full disk gives 0xA700 (retry later) and leaves no partial file', async (t) => {
  // A 32 KiB tmpfs as the data directory: CT_small (39 KB) cannot fit. Mounting needs root.
  const mountPoint = await mkdtemp(join(tmpdir(), 'cg-dicom-full-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=32k', 'tmpfs', mountPoint]);
  } catch {
    await rm(mountPoint, { recursive: true, force: true });
    t.skip('cannot mount a small tmpfs here (needs root)');
    return;
  }
  const listener = await startDicomListener({ ...harness.services, config: { ...harness.services.config, dataDir: mountPoint, dicomStorageDir: join(mountPoint, 'dicom') } }, { host: '127.0.0.1', port: 0 });
  try {
    const site = await createTestSite(harness.db.database);
    const peer = await associate(listener.port, site.aeTitle, [ctContext]);
    assert.equal(await store(peer, cStoreRequest(1, ctClass, ctInstance), ctDataset), 0xa700);
    assert.deepEqual(await transferFiles(mountPoint), [], 'no partial transfer');
    const stored = (await listFiles(join(mountPoint, 'dicom'))).filter((file) => !file.startsWith(join(mountPoint, 'dicom', 'tmp')));
    assert.deepEqual(stored, [], 'nothing stored');
    assert.equal(await rowsOf(site.siteId), 0);
    peer.destroy();
  } finally {
    await listener.close();
    await run('umount', [mountPoint]);
    await rm(mountPoint, { recursive: true, force: true });
  }
});

/**
 * Between the service and PostgreSQL: passes everything through until armed, then lets one
 * COMMIT reach the server and drops the connection instead of passing the server's answer back.
 * The commit is applied; the service only learns that the connection went away.
 */
async function startCommitDroppingProxy(target: URL): Promise<{ url: string; arm(): void; dropped(): boolean; close(): Promise<void> }> {
  let armed = false;
  let dropped = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let commitSent = false;
    client.on('data', (chunk: Buffer) => {
      // A simple-protocol Query message ('Q', length, text, NUL) carrying COMMIT.
      if (armed && chunk.includes(Buffer.from('COMMIT\0'))) {
        armed = false;
        commitSent = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (commitSent) {
        dropped = true;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        (socket === client ? upstream : client).destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target.href);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.href,
    arm: () => (armed = true),
    dropped: () => dropped,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test('a COMMIT applied but unanswered (connection lost) keeps the linked file: the retry finds it stored, and its temporary name is settled', async () => {
  const site = await createTestSite(harness.db.database);
  const proxy = await startCommitDroppingProxy(new URL(harness.db.connectionString));
  const database = listenerDatabase(proxy.url);
  const listener = await startDicomListener({ ...harness.services, database }, { host: '127.0.0.1', port: 0 });
  try {
    const peer = await associate(listener.port, site.aeTitle, [ctContext]);
    proxy.arm();
    // The index commit happened, but its answer never arrived: "retry later".
    assert.equal(await store(peer, cStoreRequest(1, ctClass, ctInstance), ctDataset), 0xa700);
    assert.equal(proxy.dropped(), true);
    const { rows } = await harness.db.database.query<{ storage_path: string; sha256: string }>(
      'SELECT storage_path, sha256 FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2',
      [site.siteId, ctInstance],
    );
    assert.equal(rows.length, 1, 'the commit was applied');
    const stored = resolveStoredInstance(harness.services.config.dicomStorageDir, rows[0]!.storage_path);
    assert.equal(await exists(stored), true, 'the file the index points at is still there');
    // The modality retries as told: the instance is found stored, with the same bytes.
    assert.equal(await store(peer, cStoreRequest(2, ctClass, ctInstance), ctDataset), 0x0000);
    assert.equal(createHash('sha256').update(datasetOf(await readFile(stored))).digest('hex'), rows[0]!.sha256);
    await eventually(async () => (await transferFiles(harness.dataDir)).length === 0);
    peer.destroy();
  } finally {
    await listener.close();
    await database.close();
    await proxy.close();
  }
});
