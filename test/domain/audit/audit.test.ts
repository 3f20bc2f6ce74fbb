import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listAudit, recordAudit } from '../../../src/domain/audit/audit.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('audit events come newest first by their numeric id (event 10 after 9, not before)', async () => {
  for (let n = 1; n <= 12; n++) await recordAudit(db.database, { actor: { kind: 'operator' }, action: `step.${n}`, targetType: 'test' });
  const events = await listAudit(db.database, { limit: 12 });
  assert.deepEqual(events.map((event) => event.action), Array.from({ length: 12 }, (_, index) => `step.${12 - index}`));
  const older = await listAudit(db.database, { limit: 5, beforeId: events[9]!.id });
  assert.deepEqual(older.map((event) => event.action), ['step.2', 'step.1']);
});
