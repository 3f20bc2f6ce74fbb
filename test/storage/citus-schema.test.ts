import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { referenceTables, serviceTablesWithSiteColumn } from '../support/citus-tables.ts';

// Citus distributes a table by one column and routes a statement to one shard from that column's
// value (docs.citusdata.com, "Choosing Distribution Column" and "Table Management"). The schema
// is distributable by site_id when, read from the catalogue of a freshly migrated database:
// - every clinical table (a table with a site_id column that is not a named service table) has
//   a primary key that leads with site_id;
// - every foreign key between clinical tables leads with site_id on both sides (co-located);
//   keys from a clinical table to a reference table are fine (Citus supports them), keys from a
//   reference or service table to a clinical table are not;
// - every unique index (constraint or not, partial or not) of a clinical table has site_id
//   among its key columns, since Citus enforces uniqueness only within a shard.

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

interface Table {
  name: string;
  hasSiteColumn: boolean;
}

async function tables(): Promise<Table[]> {
  const { rows } = await db.database.query<{ name: string; has_site_column: boolean }>(
    `SELECT c.relname AS name,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'site_id' AND NOT a.attisdropped) AS has_site_column
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
      ORDER BY c.relname`,
  );
  return rows.map((row) => ({ name: row.name, hasSiteColumn: row.has_site_column }));
}

async function clinicalTables(): Promise<string[]> {
  return (await tables()).filter((table) => table.hasSiteColumn && !serviceTablesWithSiteColumn.has(table.name)).map((table) => table.name);
}

test('every table is either clinical (distributed by site_id) or a named reference or service table', async () => {
  const all = await tables();
  const unclassified = all.filter((table) => !table.hasSiteColumn && !referenceTables.has(table.name)).map((table) => table.name);
  assert.deepEqual(unclassified, [], 'a table without site_id must be named in test/storage/citus-tables.ts with the reason it is not clinical');
  const misnamed = all.filter((table) => table.hasSiteColumn && referenceTables.has(table.name)).map((table) => table.name);
  assert.deepEqual(misnamed, [], 'a table with site_id is clinical, or a service table with its reason');
  const stale = [...referenceTables.keys(), ...serviceTablesWithSiteColumn.keys()].filter((name) => !all.some((table) => table.name === name));
  assert.deepEqual(stale, [], 'the lists name tables that no longer exist');
  assert.ok((await clinicalTables()).includes('clinical_resource'));
});

test('every clinical table has a primary key that leads with site_id', async () => {
  const clinical = await clinicalTables();
  const { rows } = await db.database.query<{ table_name: string; first_column: string | null }>(
    `SELECT c.relname AS table_name,
            (SELECT a.attname FROM pg_constraint k JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
              WHERE k.conrelid = c.oid AND k.contype = 'p') AS first_column
       FROM pg_class c WHERE c.relname = ANY($1) AND c.relnamespace = 'public'::regnamespace`,
    [clinical],
  );
  assert.equal(rows.length, clinical.length);
  const wrong = rows.filter((row) => row.first_column !== 'site_id').map((row) => `${row.table_name} (primary key leads with ${row.first_column ?? 'nothing: no primary key'})`);
  assert.deepEqual(wrong, []);
});

test('foreign keys between clinical tables lead with site_id on both sides; none points from a reference table into a clinical one', async () => {
  const clinical = new Set(await clinicalTables());
  const { rows } = await db.database.query<{ name: string; from_table: string; to_table: string; from_first: string; to_first: string }>(
    `SELECT k.conname AS name, f.relname AS from_table, t.relname AS to_table,
            (SELECT attname FROM pg_attribute WHERE attrelid = k.conrelid AND attnum = k.conkey[1]) AS from_first,
            (SELECT attname FROM pg_attribute WHERE attrelid = k.confrelid AND attnum = k.confkey[1]) AS to_first
       FROM pg_constraint k JOIN pg_class f ON f.oid = k.conrelid JOIN pg_class t ON t.oid = k.confrelid
      WHERE k.contype = 'f' AND f.relnamespace = 'public'::regnamespace
      ORDER BY k.conname`,
  );
  assert.ok(rows.some((row) => clinical.has(row.from_table) && clinical.has(row.to_table)), 'the schema has keys between clinical tables to check');
  const wrong = rows
    .filter((row) => clinical.has(row.to_table) && (!clinical.has(row.from_table) || row.from_first !== 'site_id' || row.to_first !== 'site_id'))
    .map((row) => `${row.name}: ${row.from_table}(${row.from_first}, ...) -> ${row.to_table}(${row.to_first}, ...)`);
  assert.deepEqual(wrong, []);
});

test('every unique index of a clinical table includes site_id', async () => {
  const clinical = await clinicalTables();
  const { rows } = await db.database.query<{ index_name: string; table_name: string; has_site: boolean }>(
    `SELECT i.relname AS index_name, c.relname AS table_name,
            EXISTS (SELECT 1 FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attname = 'site_id'
                       AND a.attnum = ANY ((x.indkey::int2[])[0:x.indnkeyatts - 1])) AS has_site
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
      WHERE x.indisunique AND c.relname = ANY($1) AND c.relnamespace = 'public'::regnamespace
      ORDER BY i.relname`,
    [clinical],
  );
  assert.ok(rows.length > clinical.length, 'the schema has unique indexes besides primary keys to check');
  assert.deepEqual(rows.filter((row) => !row.has_site).map((row) => `${row.index_name} on ${row.table_name}`), []);
});
