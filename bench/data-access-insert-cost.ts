import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * What one data access record costs PostgreSQL, piece by piece: the records of FHIR reads written
 * as src/domain/audit/data-access.ts writes them (one INSERT of gathered records from a jsonb
 * parameter) into copies of data_access_audit with fewer and more of its indexes and keys, and by
 * COPY for comparison. The cases alternate (order reversed every other round); the figure is the
 * CPU of this connection's backend per record, medians (docs/performance.md, "FHIR read by id").
 *
 * `node bench/data-access-insert-cost.ts DATABASE_URL [ROUNDS] [INSERTS] [RECORDS_PER_INSERT]`:
 * works in a schema of its own, dropped at the end; the server must run on this machine.
 */
const [databaseUrl, roundsArg, insertsArg, perInsertArg] = process.argv.slice(2);
if (!databaseUrl) {
  process.stderr.write('usage: node bench/data-access-insert-cost.ts DATABASE_URL [ROUNDS] [INSERTS] [RECORDS_PER_INSERT]\n');
  process.exit(2);
}
const [rounds, inserts, perInsert] = [roundsArg ?? 5, insertsArg ?? 150, perInsertArg ?? 200].map(Number) as [number, number, number];
const schema = 'data_access_insert_cost';
const columns = 'site_id, occurred_at, user_id, key_id, remote_address, surface, interaction, resource_type, query, resource_ids, resource_count, patient_ids';
const fromJsonb = `SELECT ${columns.split(', ').map((column) => `r.${column}`).join(', ')} FROM jsonb_to_recordset($1::jsonb) AS r(site_id uuid, occurred_at timestamptz,
  user_id uuid, key_id uuid, remote_address text, surface text, interaction text, resource_type text, query text, resource_ids text[], resource_count integer, patient_ids text[])`;

const client = new pg.Client({ connectionString: databaseUrl });
await client.connect();
const ticksPerSecond = 100;
const backendPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
function backendTicks(): number {
  const stat = readFileSync(`/proc/${backendPid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The table as migrations 0572, 0650, 0670 and 0800 leave it, less what `without` names. */
function tableDdl(name: string, without: { siteKey?: boolean; secondary?: boolean; gin?: boolean; primaryKey?: boolean }): string {
  return `CREATE TABLE ${name} (
      site_id uuid NOT NULL ${without.siteKey ? '' : 'REFERENCES site (id)'}, id bigint GENERATED ALWAYS AS IDENTITY, occurred_at timestamptz NOT NULL,
      user_id uuid, key_id uuid, remote_address text, surface text NOT NULL CHECK (surface IN ('fhir', 'admin', 'dicomweb', 'cli')),
      interaction text NOT NULL CHECK (interaction IN ('read', 'vread', 'history', 'search', 'view', 'export')), resource_type text NOT NULL,
      query text, resource_ids text[] NOT NULL DEFAULT '{}', resource_count integer NOT NULL DEFAULT 0, patient_ids text[] NOT NULL DEFAULT '{}'
      ${without.primaryKey ? '' : ', PRIMARY KEY (site_id, id)'});
    ${without.secondary ? '' : `CREATE INDEX ON ${name} (site_id, occurred_at); CREATE INDEX ON ${name} (site_id, user_id, id) WHERE user_id IS NOT NULL; CREATE INDEX ON ${name} (site_id, key_id, id) WHERE key_id IS NOT NULL;`}
    ${without.gin ? '' : `CREATE INDEX ON ${name} USING gin (patient_ids);`}`;
}

const siteId = randomUUID();
const userId = randomUUID();
const keyId = randomUUID();
const tables = {
  heap: { siteKey: true, secondary: true, gin: true, primaryKey: true },
  'heap+pk': { siteKey: true, secondary: true, gin: true },
  'no GIN': { gin: true },
  'no site key': { siteKey: true },
  full: {},
};
interface Row { site_id: string; occurred_at: string; user_id: string; key_id: string; remote_address: string; surface: string; interaction: string; resource_type: string; query: null; resource_ids: string[]; resource_count: number; patient_ids: string[] }
function readRecord(): Row {
  const patient = randomUUID();
  return { site_id: siteId, occurred_at: new Date().toISOString(), user_id: userId, key_id: keyId, remote_address: '127.0.0.1', surface: 'fhir', interaction: 'read', resource_type: 'Patient', query: null, resource_ids: [`Patient/${patient}`], resource_count: 1, patient_ids: [patient] };
}
/** COPY's text format: these rows hold no tab, newline or backslash, and their ids no quote. */
function copyLine(row: Row): string {
  const array = (values: string[]) => `{${values.map((value) => `"${value}"`).join(',')}}`;
  return [row.site_id, row.occurred_at, row.user_id, row.key_id, row.remote_address, row.surface, row.interaction, row.resource_type, '\\N', array(row.resource_ids), String(row.resource_count), array(row.patient_ids)].join('\t');
}

try {
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}; SET search_path = ${schema}`);
  await client.query('CREATE TABLE site (id uuid PRIMARY KEY)');
  await client.query('INSERT INTO site VALUES ($1)', [siteId]);
  const names = Object.keys(tables).map((label, index) => ({ label, table: `audit_${index}` }));
  for (const { label, table } of names) await client.query(tableDdl(table, tables[label as keyof typeof tables]));
  await client.query(tableDdl('audit_copy', {}));
  const batches = Array.from({ length: inserts }, () => Array.from({ length: perInsert }, readRecord));
  const jsonBatches = batches.map((batch) => JSON.stringify(batch));
  const copyBatches = batches.map((batch) => `${batch.map(copyLine).join('\n')}\n`);

  type Case = { label: string; run: (index: number) => Promise<unknown> };
  const cases: Case[] = [
    { label: 'rows from jsonb only', run: (index) => client.query({ name: 'parse', text: `SELECT count(*) FROM (${fromJsonb}) x`, values: [jsonBatches[index]] }) },
    ...names.map(({ label, table }) => ({ label: `INSERT, ${label}`, run: (index: number) => client.query({ name: table, text: `INSERT INTO ${table} (${columns}) ${fromJsonb}`, values: [jsonBatches[index]] }) })),
    { label: 'COPY, full', run: (index) => pipeline(Readable.from([copyBatches[index]!]), client.query(copyFrom(`COPY audit_copy (${columns}) FROM STDIN`))) },
  ];
  const seen = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const { label, run } of round % 2 === 0 ? cases : [...cases].reverse()) {
      const start = backendTicks();
      for (let index = 0; index < inserts; index++) await run(index);
      const microseconds = ((backendTicks() - start) / ticksPerSecond) * 1e6 / (inserts * perInsert);
      seen.set(label, [...(seen.get(label) ?? []), microseconds]);
    }
  }
  process.stdout.write(`load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}; PostgreSQL backend CPU per record, median (all rounds):\n`);
  for (const [label, values] of seen) {
    const sorted = [...values].sort((a, b) => a - b);
    process.stdout.write(`${label.padEnd(24)} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs (${values.map((value) => value.toFixed(1)).join(' ')})\n`);
  }
} finally {
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
  await client.end();
}
