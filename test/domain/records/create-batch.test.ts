import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Observation, Patient, Resource } from '@medplum/fhirtypes';
import { isDomainError } from '../../../src/domain/errors.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { TransientStorageError } from '../../../src/storage/errors.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

function patient(identifier: string): Patient {
  return { resourceType: 'Patient', identifier: [{ system: 'urn:mrn', value: identifier }], name: [{ family: 'Batch', given: [identifier] }], gender: 'female' };
}

function observation(patientId: string, code: string): Observation {
  return { resourceType: 'Observation', status: 'final', code: { coding: [{ system: 'http://loinc.org', code }] }, subject: { reference: `Patient/${patientId}` } };
}

/** Transactions that wrote the site's current rows: fewer than rows means creates shared a commit. */
async function commitsOf(site: SiteContext): Promise<number> {
  const { rows } = await db.database.query<{ commits: number }>(
    'SELECT count(DISTINCT xmin::text)::int AS commits FROM clinical_resource WHERE site_id = $1',
    [site.siteId],
  );
  return rows[0]!.commits;
}

async function versionAndTokenCounts(site: SiteContext, id: string): Promise<{ versions: number; tokens: number }> {
  const { rows } = await db.database.query<{ versions: number; tokens: number }>(
    `SELECT (SELECT count(*)::int FROM clinical_resource_version WHERE site_id = $1 AND id = $2) AS versions,
            (SELECT count(*)::int FROM clinical_resource_token WHERE site_id = $1 AND resource_id = $2) AS tokens`,
    [site.siteId, id],
  );
  return rows[0]!;
}

test('concurrent creates of two sites share commits, and each is stored whole, in its own site', async () => {
  const first = await createTestSite(db.database);
  const second = await createTestSite(db.database);
  const resources: [SiteContext, Patient][] = [];
  for (let i = 0; i < 40; i++) resources.push([i % 2 === 0 ? first : second, patient(`MRN-B${i}`)]);
  const created = await Promise.all(resources.map(([site, resource]) => resourceStore(db.database, site).create(resource)));

  assert.ok((await commitsOf(first)) + (await commitsOf(second)) < 40, 'some creates were committed together');
  for (const [i, stored] of created.entries()) {
    const [site, sent] = resources[i]!;
    const other = site === first ? second : first;
    assert.equal(stored.identifier?.[0]?.value, sent.identifier?.[0]?.value);
    assert.equal(stored.meta?.versionId, '1');
    assert.deepEqual(await resourceStore(db.database, site).read('Patient', stored.id!), stored);
    assert.equal(await resourceStore(db.database, other).read('Patient', stored.id!), undefined);
    assert.deepEqual(await versionAndTokenCounts(site, stored.id!), { versions: 1, tokens: 2 });
    assert.equal((await resourceStore(db.database, site).findPatientByBusinessIdentifier(`MRN-B${i}`))?.id, stored.id);
    const { rows } = await db.database.query<{ last_updated: Date; name_search: string }>(
      'SELECT last_updated, name_search FROM clinical_resource WHERE site_id = $1 AND id = $2',
      [site.siteId, stored.id],
    );
    assert.equal(rows[0]!.last_updated.toISOString(), stored.meta!.lastUpdated);
    assert.match(rows[0]!.name_search, new RegExp(`mrn-b${i}\\b`));
  }
});

test('a batch holding a duplicate business identifier answers each create on its own: one conflict, the rest stored', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  const sent = Array.from({ length: 20 }, (_, i) => patient(i === 11 ? 'MRN-D5' : `MRN-D${i}`));
  const outcomes = await Promise.allSettled(sent.map((resource) => store.create(resource)));

  const rejected = outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [{ i, reason: outcome.reason as unknown }] : []));
  assert.equal(rejected.length, 1);
  assert.ok([5, 11].includes(rejected[0]!.i));
  assert.ok(isDomainError(rejected[0]!.reason, 'conflict'));
  const { rows } = await db.database.query<{ count: number }>('SELECT count(*)::int AS count FROM clinical_resource WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0]!.count, 19);
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') assert.ok(await store.read('Patient', outcome.value.id!));
  }
});

test('in a batch, a resource whose subject is not a patient of its site is refused alone', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  const own = await store.create(patient('MRN-S1'));
  const foreign = await resourceStore(db.database, other).create(patient('MRN-S2'));
  const sent: Resource[] = Array.from({ length: 16 }, (_, i) => observation(i === 9 ? foreign.id! : own.id!, `C-${i}`));
  const outcomes = await Promise.allSettled(sent.map((resource) => store.create(resource)));

  outcomes.forEach((outcome, i) => {
    if (i === 9) {
      assert.equal(outcome.status, 'rejected');
      assert.ok(isDomainError((outcome as PromiseRejectedResult).reason, 'business-rule'));
      assert.match(String((outcome as PromiseRejectedResult).reason.message), /not a patient of this site/);
    } else {
      assert.equal(outcome.status, 'fulfilled', `create ${i}`);
    }
  });
  assert.equal((await store.listPatientCompartment(own.id!)).length, 15);
  assert.equal((await resourceStore(db.database, other).listPatientCompartment(foreign.id!)).length, 0);
  assert.ok((await commitsOf(site)) < 16, 'the observations were committed together');
});

test('a batch that fails for a reason of the server fails each of its creates as transient, writes nothing and is not retried row by row', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  // Every write to the token table fails as a full disk would (class 53, not a row's doing);
  // a sequence, which no rollback undoes, counts the statements that got that far.
  await db.database.query('CREATE SEQUENCE token_write_attempts');
  await db.database.query(`CREATE FUNCTION refuse_tokens() RETURNS trigger LANGUAGE plpgsql AS
    $$ BEGIN PERFORM nextval('token_write_attempts'); RAISE EXCEPTION 'no space' USING ERRCODE = '53100'; END $$`);
  await db.database.query('CREATE TRIGGER refuse_tokens BEFORE INSERT ON clinical_resource_token FOR EACH ROW EXECUTE FUNCTION refuse_tokens()');
  try {
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => store.create(patient(`MRN-F${i}`))));
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected');
      assert.ok((outcome as PromiseRejectedResult).reason instanceof TransientStorageError);
    }
    const { rows: attempts } = await db.database.query<{ last_value: string }>('SELECT last_value FROM token_write_attempts');
    assert.ok(Number(attempts[0]!.last_value) < 12, `${attempts[0]!.last_value} statements for 12 creates`);
  } finally {
    await db.database.query('DROP TRIGGER refuse_tokens ON clinical_resource_token');
    await db.database.query('DROP FUNCTION refuse_tokens()');
    await db.database.query('DROP SEQUENCE token_write_attempts');
  }
  const { rows } = await db.database.query<{ count: number }>('SELECT count(*)::int AS count FROM clinical_resource WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0]!.count, 0);
  // Nothing is left behind: the next creates go through.
  await Promise.all(Array.from({ length: 6 }, (_, i) => store.create(patient(`MRN-F${i}`))));
});

test('large creates go in smaller batches, each stored whole', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  // About 300 KB each: no more than three fit in a batch's megabyte.
  const large = (i: number): Patient => ({ ...patient(`MRN-L${i}`), address: [{ text: `${i} `.padEnd(300_000, 'x') }] });
  const created = await Promise.all(Array.from({ length: 12 }, (_, i) => store.create(large(i))));
  const { rows } = await db.database.query<{ together: number }>(
    'SELECT count(*)::int AS together FROM clinical_resource WHERE site_id = $1 GROUP BY xmin::text',
    [site.siteId],
  );
  assert.ok(rows.every((row) => row.together <= 3), `creates per commit: ${rows.map((row) => row.together).join(', ')}`);
  assert.ok(rows.some((row) => row.together > 1), 'some large creates were still committed together');
  for (const [i, stored] of created.entries()) {
    assert.equal((await store.read<Patient>('Patient', stored.id!))?.address?.[0]?.text, large(i).address![0]!.text);
  }
});

test('a batch held up by a lock does not hold up the creates queued behind it', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  const rollBack = new Error('roll back');
  let held: Promise<Patient> | undefined;
  let others: Patient[] = [];
  await assert.rejects(
    db.database.transaction(async (tx) => {
      // An uncommitted patient with this identifier: a create of the same identifier waits on the
      // unique index until this transaction ends.
      await resourceStore(tx, site).create(patient('MRN-H1'));
      held = store.create(patient('MRN-H1'));
      await delay(50);
      const timeout = delay(5_000).then(() => {
        throw new Error('the creates behind the held batch did not complete');
      });
      others = await Promise.race([Promise.all([2, 3, 4].map((i) => store.create(patient(`MRN-H${i}`)))), timeout]);
      throw rollBack;
    }),
    (error) => error === rollBack,
  );
  assert.equal(others.length, 3);
  // The holder rolled back, so the held create goes through.
  const created = await held!;
  assert.equal((await store.findPatientByBusinessIdentifier('MRN-H1'))?.id, created.id);
});
