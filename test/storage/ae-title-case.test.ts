import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createSite, findSiteByAeTitle, updateSite } from '../../src/domain/sites/sites.ts';
import { isDomainError } from '../../src/domain/errors.ts';
import { migrate } from '../../src/storage/migrations.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

/** Issue 26 point 13: AE titles that differ only in letter case are refused (migration 0560). */

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const operator = { kind: 'operator' } as const;
const unique = () => Math.random().toString(36).slice(2, 8).toUpperCase();

test('a second site whose AE title differs only in case is refused, on create and on update; look-up stays exact', async () => {
  const title = `RAD${unique()}`;
  const first = await createSite(db.database, { name: `first ${title}`, aeTitle: title }, operator);
  await assert.rejects(
    createSite(db.database, { name: `second ${title}`, aeTitle: title.toLowerCase() }, operator),
    (error) => isDomainError(error, 'conflict') && error.issues[0]!.location === 'ae_title',
  );
  const other = await createSite(db.database, { name: `other ${title}`, aeTitle: `OTH${unique()}` }, operator);
  await assert.rejects(
    updateSite(db.database, other.id, { aeTitle: `${title.slice(0, 3).toLowerCase()}${title.slice(3)}` }, operator),
    (error) => isDomainError(error, 'conflict'),
  );
  assert.equal((await findSiteByAeTitle(db.database, title))?.id, first.id);
  assert.equal(await findSiteByAeTitle(db.database, title.toLowerCase()), undefined);
});

test('the migration stops with the colliding titles named when existing sites differ only in case, and applies once they are fixed', async () => {
  // The schema as it was before 0560, with two sites that collide by case.
  await db.database.query('DROP INDEX site_ae_title_any_case_key');
  await db.database.query('CREATE UNIQUE INDEX site_ae_title_key ON site (ae_title)');
  await db.database.query('DELETE FROM schema_migration WHERE version = 560');
  const title = `CASE${unique()}`;
  await createSite(db.database, { name: `upper ${title}`, aeTitle: title }, operator);
  const lower = await createSite(db.database, { name: `lower ${title}`, aeTitle: title.toLowerCase() }, operator);

  await assert.rejects(migrate(db.database), (error: Error) => {
    assert.match(error.message, /differ only in letter case/);
    assert.ok(error.message.includes(title) && error.message.includes(title.toLowerCase()), error.message);
    return true;
  });
  await db.database.query('UPDATE site SET ae_title = $2 WHERE id = $1', [lower.id, `OTHER${unique()}`]);
  const report = await migrate(db.database);
  assert.ok(report.applied.some((name) => name.includes('site_ae_title_case_insensitive')), report.applied.join(', '));
  const { rows } = await db.database.query("SELECT indexname FROM pg_indexes WHERE tablename = 'site' AND indexname LIKE 'site_ae_title%'");
  assert.deepEqual(rows.map((row) => row.indexname), ['site_ae_title_any_case_key']);
});
