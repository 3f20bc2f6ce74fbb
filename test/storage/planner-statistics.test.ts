import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Patient } from '@medplum/fhirtypes';
import { activePatientByBusinessIdentifier } from '../../src/domain/records/read.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { searchSql } from '../../src/domain/records/search.ts';
import { Database } from '../../src/storage/database.ts';
import { startPlannerStatistics, type PlannerStatistics } from '../../src/storage/planner-statistics.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { createTestSite } from '../support/sites.ts';

let db: TestDatabase;
let statistics: PlannerStatistics;
before(async () => {
  db = await createTestDatabase();
  // Autovacuum analysing a table of this test between its inserts and refresh() would make the
  // outcome depend on when it came by.
  await db.database.query('ALTER TABLE clinical_resource SET (autovacuum_enabled = false)');
  // No timer passes during the test: it drives refresh() itself.
  statistics = startPlannerStatistics(db.database, { intervalMs: 3_600_000, minimumChanges: 500 });
});
after(async () => {
  await statistics.stop();
  await db.drop();
});

async function changesSinceAnalysis(table: string): Promise<number> {
  const { rows } = await db.database.query<{ n: string }>('SELECT n_mod_since_analyze AS n FROM pg_stat_user_tables WHERE relname = $1', [table]);
  return Number(rows[0]?.n ?? 0);
}

/** Backends publish their table counters about once a second; this waits for `table`'s. */
async function changesVisible(table: string, atLeast: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if ((await changesSinceAnalysis(table)) >= atLeast) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`the changes to ${table} never showed in pg_stat_user_tables`);
}

async function insertRows(table: string, count: number): Promise<void> {
  await db.database.transaction(async (tx) => {
    await tx.query(`INSERT INTO ${table} (site, code) SELECT 1, 'c' || g FROM generate_series(1, ${count}) g`);
    await tx.query('SELECT pg_stat_force_next_flush()');
  });
  await changesVisible(table, count);
}

test('a table with fewer changes than the minimum is left to autovacuum; a never-analysed one from 50', async () => {
  await db.database.query('CREATE TABLE small_growth (site int NOT NULL, code text NOT NULL) WITH (autovacuum_enabled = false)');
  await insertRows('small_growth', 40);
  assert.deepEqual(await statistics.refresh(), [], 'a never-analysed table with 40 changes');
  await insertRows('small_growth', 20);
  await changesVisible('small_growth', 60);
  assert.deepEqual(await statistics.refresh(), ['small_growth'], 'a never-analysed table with 60 changes');
  await insertRows('small_growth', 100);
  assert.deepEqual(await statistics.refresh(), [], 'an analysed table with 100 changes, below the minimum of 500');
});

test('a table grows past its statistics: analysed once, then again only when it doubles', async () => {
  await db.database.query('CREATE TABLE fast_growth (site int NOT NULL, code text NOT NULL) WITH (autovacuum_enabled = false)');
  await insertRows('fast_growth', 600);
  assert.ok((await statistics.refresh()).includes('fast_growth'));
  const analysed = await db.database.query<{ rows: number }>("SELECT reltuples::int AS rows FROM pg_class WHERE relname = 'fast_growth'");
  assert.equal(analysed.rows[0]!.rows, 600);
  await insertRows('fast_growth', 500);
  assert.ok(!(await statistics.refresh()).includes('fast_growth'), '500 changes on 600 analysed rows: not yet');
  await insertRows('fast_growth', 100);
  assert.ok((await statistics.refresh()).includes('fast_growth'), '600 changes on 600 analysed rows: the statistics describe half the table');
});

test('a table the role may not analyse is never chosen, so it is not retried on every pass', async () => {
  // A role that owns one table and neither the other nor the database, as a service sharing a
  // database with other applications' tables would be.
  const role = `cg_planner_${process.pid}_${Date.now().toString(36)}`;
  await db.database.query(`CREATE ROLE ${role} NOLOGIN`);
  const asRole = new URL(db.connectionString);
  asRole.searchParams.set('options', `-c role=${role}`);
  const restricted = new Database({ connectionString: asRole.toString(), maxConnections: 2 });
  const keeper = startPlannerStatistics(restricted, { intervalMs: 3_600_000, minimumChanges: 500 });
  try {
    await db.database.query('CREATE TABLE owned_by_role (site int NOT NULL, code text NOT NULL) WITH (autovacuum_enabled = false)');
    await db.database.query(`ALTER TABLE owned_by_role OWNER TO ${role}`);
    await db.database.query('CREATE TABLE owned_by_another (site int NOT NULL, code text NOT NULL) WITH (autovacuum_enabled = false)');
    await insertRows('owned_by_role', 600);
    await insertRows('owned_by_another', 600);
    const analysed = await keeper.refresh();
    assert.ok(analysed.includes('owned_by_role'));
    assert.ok(!analysed.includes('owned_by_another'));
    assert.ok(!(await keeper.refresh()).includes('owned_by_another'));
  } finally {
    await keeper.stop();
    await restricted.close();
    await db.database.query('DROP TABLE IF EXISTS owned_by_role, owned_by_another');
    await db.database.query(`DROP ROLE ${role}`);
  }
});

test('after a fresh site loads its patients, the business-identifier lookup uses its own index', async () => {
  const site = await createTestSite(db.database);
  for (let batch = 0; batch < 6; batch++) {
    await db.database.transaction(async (tx) => {
      const store = resourceStore(tx, site);
      for (let i = 0; i < 100; i++) {
        const n = batch * 100 + i;
        await store.create<Patient>({ resourceType: 'Patient', identifier: [{ system: 'urn:mrn', value: `MRN${n}` }], name: [{ family: `Family${n % 7}` }], birthDate: '1970-01-01' });
      }
      await tx.query('SELECT pg_stat_force_next_flush()');
    });
  }
  await changesVisible('clinical_resource', 600);
  assert.ok((await statistics.refresh()).includes('clinical_resource'));
  // The lookup the writers and HL7 intake use, planned for these parameters.
  const { rows } = await db.database.query<{ 'QUERY PLAN': unknown[] }>(`EXPLAIN (FORMAT JSON) ${activePatientByBusinessIdentifier}`, [site.siteId, 'MRN42']);
  assert.match(JSON.stringify(rows[0]!['QUERY PLAN']), /"Index Name":"clinical_resource_patient_business_identifier_key"/);
});

/** `count` patients of `site` straight into the current-row table, as a bulk load would. */
async function insertPatients(site: string, prefix: string, count: number): Promise<void> {
  await db.database.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, business_identifier, name_search, birth_date_start, birth_date_end)
       SELECT $1, 'Patient', gen_random_uuid(), 1, now(), jsonb_build_object('resourceType', 'Patient'), $2 || g, 'family' || (g % 7), '1970-01-01', '1970-01-01'
         FROM generate_series(1, $3::int) g`,
      [site, prefix, count],
    );
    await tx.query('SELECT pg_stat_force_next_flush()');
  });
}

async function listedSites(): Promise<string> {
  const { rows } = await db.database.query<{ sites: string | null }>(
    "SELECT most_common_vals::text AS sites FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'clinical_resource' AND attname = 'site_id'",
  );
  return rows[0]?.sites ?? '';
}

test('a site new to a large analysed table is analysed in once it reaches the bound, not before', async () => {
  // An established site makes the table large and analysed, so that a new site's rows are far
  // fewer than the rows the statistics saw and the first rule stays quiet.
  const established = await createTestSite(db.database);
  await insertPatients(established.siteId, 'E', 6_000);
  await changesVisible('clinical_resource', 6_000);
  assert.ok((await statistics.refresh()).includes('clinical_resource'));
  assert.equal(await changesSinceAnalysis('clinical_resource'), 0);

  // Enough changes in the table to look, but no unlisted site with the bound's 500 rows.
  const small = await createTestSite(db.database);
  await insertPatients(small.siteId, 'S', 300);
  await db.database.query("UPDATE clinical_resource SET version_id = 2 WHERE site_id = $1 AND business_identifier LIKE 'E1___'", [established.siteId]);
  await db.database.query('SELECT pg_stat_force_next_flush()');
  await changesVisible('clinical_resource', 1_300);
  assert.ok(!(await statistics.refresh()).includes('clinical_resource'), 'a site of 300 rows is below the bound');

  const fresh = await createTestSite(db.database);
  await insertPatients(fresh.siteId, 'N', 600);
  await changesVisible('clinical_resource', 1_900);
  assert.ok(!(await listedSites()).includes(fresh.siteId));
  assert.ok((await statistics.refresh()).includes('clinical_resource'), 'a site of 600 unlisted rows reaches the bound');
  assert.ok((await listedSites()).includes(fresh.siteId), 'the analysis lists the new site');
  const { rows } = await db.database.query<{ 'QUERY PLAN': unknown[] }>(`EXPLAIN (FORMAT JSON) ${activePatientByBusinessIdentifier}`, [fresh.siteId, 'N42']);
  assert.match(JSON.stringify(rows[0]!['QUERY PLAN']), /"Index Name":"clinical_resource_patient_business_identifier_key"/);

  // Listed now, so more of its rows do not make the table analysed again.
  await insertPatients(fresh.siteId, 'M', 600);
  await changesVisible('clinical_resource', 600);
  assert.ok(!(await statistics.refresh()).includes('clinical_resource'));
});

/** The index names of a plan, from EXPLAIN (FORMAT JSON) of `text`. */
async function indexesOfPlan(on: Database, text: string, values: unknown[]): Promise<string[]> {
  const { rows } = await on.query<{ 'QUERY PLAN': unknown[] }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
  return [...JSON.stringify(rows[0]!['QUERY PLAN']).matchAll(/"Index Name":"([^"]+)"/g)].map((match) => match[1]!);
}

test('a fresh database is analysed after its first few hundred patients, and both identifier lookups use their keys', async () => {
  // A database of its own: the other tests have analysed theirs already.
  const fresh = await createTestDatabase();
  // The service's thresholds, not the lowered ones of the tests above.
  const keeper = startPlannerStatistics(fresh.database, { intervalMs: 3_600_000 });
  try {
    await fresh.database.query('ALTER TABLE clinical_resource SET (autovacuum_enabled = false)');
    await fresh.database.query('ALTER TABLE clinical_resource_token SET (autovacuum_enabled = false)');
    const site = await createTestSite(fresh.database);
    await fresh.database.transaction(async (tx) => {
      const store = resourceStore(tx, site);
      for (let n = 0; n < 300; n++) {
        await store.create<Patient>({ resourceType: 'Patient', identifier: [{ system: 'urn:mrn', value: `MRN${n}` }], name: [{ family: `Family${n % 7}` }], birthDate: '1970-01-01' });
      }
      await tx.query('SELECT pg_stat_force_next_flush()');
    });
    for (let attempt = 0; attempt < 100; attempt++) {
      const { rows } = await fresh.database.query<{ n: string }>("SELECT n_mod_since_analyze AS n FROM pg_stat_user_tables WHERE relname = 'clinical_resource'");
      if (Number(rows[0]?.n ?? 0) >= 300) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const analysed = await keeper.refresh();
    assert.ok(analysed.includes('clinical_resource'), `analysed: ${analysed.join(', ')}`);
    assert.ok(analysed.includes('clinical_resource_token'), `analysed: ${analysed.join(', ')}`);

    // Until then every partial index looked empty: the lookup went through the birth-date index
    // and filtered every patient of the site.
    assert.deepEqual(await indexesOfPlan(fresh.database, activePatientByBusinessIdentifier, [site.siteId, 'MRN42']), [
      'clinical_resource_patient_business_identifier_key',
    ]);
    const search = searchSql(site, { type: 'Patient', conditions: [{ kind: 'token', param: 'identifier', values: [{ system: 'urn:mrn', code: 'MRN42' }] }], sort: [], count: 20, total: 'bounded' });
    for (const statement of [search.page, search.count]) {
      const indexes = await indexesOfPlan(fresh.database, statement.text, statement.values);
      assert.ok(indexes.includes('clinical_resource_token_pkey'), `identifier search driven from the token key: ${indexes.join(', ')}`);
      assert.ok(!indexes.includes('clinical_resource_birth_date_idx'), `no birth-date scan: ${indexes.join(', ')}`);
    }
  } finally {
    await keeper.stop();
    await fresh.drop();
  }
});
