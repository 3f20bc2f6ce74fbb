import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadMigrations } from '../../src/storage/migrations.ts';

/**
 * Rolling upgrades run nodes of version N and N-1 on one database (docs/upgrades.md): a migration
 * must leave the schema usable by the previous version's code. Statements that break that code
 * (it still reads or writes what they remove, rename, retype or newly require) belong in a
 * contract step, released once no node of the previous version runs, and marked in the file with
 *   -- contract step: <why it is safe now>
 */
const contractMarker = /^--\s*contract step:\s*\S/im;

/** Migrations before this check, reviewed one by one in docs/upgrades.md. */
const reviewedBeforeTheCheck = 670;

const destructive: { rule: string; pattern: RegExp }[] = [
  { rule: 'DROP TABLE', pattern: /\bDROP\s+TABLE\b/i },
  { rule: 'DROP COLUMN', pattern: /\bDROP\s+COLUMN\b/i },
  { rule: 'RENAME', pattern: /\bRENAME\s+(COLUMN\s+|CONSTRAINT\s+)?\w+\s+TO\b|\bRENAME\s+TO\b/i },
  { rule: 'ALTER COLUMN ... TYPE', pattern: /\bALTER\s+(COLUMN\s+)?\w+\s+(SET\s+DATA\s+)?TYPE\b/i },
  { rule: 'SET NOT NULL', pattern: /\bSET\s+NOT\s+NULL\b/i },
];

/** The breaking statements of one migration, unless it is marked as a contract step. */
function breakingStatements(sql: string): string[] {
  if (contractMarker.test(sql)) return [];
  const code = sql.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
  const found = destructive.filter(({ pattern }) => pattern.test(code)).map(({ rule }) => rule);
  const createdHere = new Set([...code.matchAll(/\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/gi)].map((match) => match[1]!.toLowerCase()));
  for (const alter of code.matchAll(/\bALTER\s+TABLE\s+(?:ONLY\s+)?(?:IF\s+EXISTS\s+)?(\w+)([\s\S]*?);/gi)) {
    if (createdHere.has(alter[1]!.toLowerCase())) continue;
    for (const column of alter[2]!.matchAll(/\bADD\s+COLUMN\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)([^,]*)/gi)) {
      const definition = column[2]!;
      if (/\bNOT\s+NULL\b/i.test(definition) && !/\bDEFAULT\b|\bGENERATED\b/i.test(definition)) found.push(`ADD COLUMN ${column[1]} NOT NULL without DEFAULT on existing table ${alter[1]}`);
    }
  }
  return found;
}

test('new migrations only expand the schema, unless marked as a contract step', async () => {
  const offending = (await loadMigrations())
    .filter((migration) => migration.version > reviewedBeforeTheCheck)
    .map((migration) => ({ file: `${String(migration.version).padStart(4, '0')}_${migration.name}.sql`, statements: breakingStatements(migration.sql) }))
    .filter((result) => result.statements.length > 0);
  assert.deepEqual(offending, [], 'a previous version still running during a rolling upgrade would break: split into expand now, contract in a later release (docs/upgrades.md)');
});

test('the check flags each destructive kind of statement and lets expanding ones and marked contract steps pass', () => {
  assert.deepEqual(breakingStatements('ALTER TABLE site DROP COLUMN name;'), ['DROP COLUMN']);
  assert.deepEqual(breakingStatements('DROP TABLE IF EXISTS old_thing;'), ['DROP TABLE']);
  assert.deepEqual(breakingStatements('ALTER TABLE site RENAME COLUMN name TO title;'), ['RENAME']);
  assert.deepEqual(breakingStatements('ALTER TABLE site RENAME TO clinic;'), ['RENAME']);
  assert.deepEqual(breakingStatements('ALTER TABLE site ALTER COLUMN name TYPE varchar(10);'), ['ALTER COLUMN ... TYPE']);
  assert.deepEqual(breakingStatements('ALTER TABLE site ALTER name SET DATA TYPE varchar(10);'), ['ALTER COLUMN ... TYPE']);
  assert.deepEqual(breakingStatements('ALTER TABLE site ALTER COLUMN name SET NOT NULL;'), ['SET NOT NULL']);
  assert.deepEqual(breakingStatements('ALTER TABLE site ADD COLUMN region text NOT NULL;'), ['ADD COLUMN region NOT NULL without DEFAULT on existing table site']);
  assert.deepEqual(breakingStatements("ALTER TABLE site ADD COLUMN region text NOT NULL DEFAULT 'eu', ADD COLUMN note text;"), []);
  assert.deepEqual(breakingStatements('CREATE TABLE thing (id int);\nALTER TABLE thing ADD COLUMN name text NOT NULL;'), [], 'a table of the same migration has no rows yet');
  assert.deepEqual(breakingStatements('-- the old column is gone: DROP COLUMN x\nALTER TABLE site ADD COLUMN region text;'), [], 'comments are not statements');
  assert.deepEqual(breakingStatements('-- contract step: no release since 0.3 reads site.legacy\nALTER TABLE site DROP COLUMN legacy;'), []);
});
