import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { StorageLayout } from '../../src/storage/dicom/layout.ts';
import { lockStoredPath, whileStoredPathLocked } from '../../src/domain/imaging/stored-path-lock.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { placedTransfer } from './support/placed-transfer.ts';

// Node A restarts after a crash that left a file linked at an instance's final name, never
// indexed; meanwhile the sender re-sends that instance to node B, which finds the name taken and
// replaces the file under its claim. A's recovery and B's replacement are serialised by the
// stored path's lock, so A never removes the file B has just put there.
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

/** Resolves once some session waits for an advisory lock (bounded). */
async function someoneWaitsForTheLock(): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const { rows } = await db.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`);
    if (rows[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail('nobody waited for the lock');
}

test("a node's recovery and another node's replacement of the same final name never interleave", async () => {
  const storage = testServices(db.database).config.dicomStorageDir;
  const siteId = randomUUID();
  const nodeA = new StorageLayout(storage, join(storage, 'tmp', 'node-a', 'worker-1'));
  await nodeA.prepare(async () => true);
  const leftover = await placedTransfer(nodeA, siteId, { study: '1.2.7', series: '1.2.7.1', instance: '1.2.7.1.1' });
  const target = nodeA.absolute(leftover.path);

  let storeOnB: Promise<void> | undefined;
  const removed = await nodeA.prepare(
    async () => {
      // Inside A's window (the file checked, not yet removed), B stores the same instance.
      storeOnB = db.database.transaction(async (tx) => {
        await lockStoredPath(tx, leftover.path);
        await unlink(target).catch(() => {});
        await writeFile(target, "node B's copy");
      });
      await Promise.race([storeOnB, someoneWaitsForTheLock()]);
      return false; // not indexed (B has not committed)
    },
    (path, work) => whileStoredPathLocked(db.database, path, work),
  );
  await storeOnB;
  assert.equal(removed, 1, "A removed its own unindexed file");
  assert.equal(await readFile(target, 'utf8'), "node B's copy", "B's file is in place");
  await nodeA.close();
});
