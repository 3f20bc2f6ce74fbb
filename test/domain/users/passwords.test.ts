import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isDomainError } from '../../../src/domain/errors.ts';
import { hashPassword, verifyPassword } from '../../../src/domain/users/password.ts';
import { createUser, setPassword } from '../../../src/domain/users/users.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const operator = { kind: 'operator' } as const;

test('common, pattern and breached-style passwords are refused, however long', async () => {
  const site = await createTestSite(db.database);
  for (const password of ['password1234', 'Password123!', 'qwertyuiop123', 'iloveyou2024!', '111111111111', 'abcdefghijkl', 'P@ssw0rd12345']) {
    await assert.rejects(
      createUser(db.database, { siteId: site.siteId, email: `weak-${Math.random().toString(36).slice(2)}@example.test`, role: 'clinician', password }, operator),
      (error: unknown) => isDomainError(error, 'invalid') && /too easy to guess/.test(error.message) && error.issues[0]?.location === 'password',
      password,
    );
  }
  const { user } = await createUser(db.database, { siteId: site.siteId, email: `strong-${Math.random().toString(36).slice(2)}@example.test`, role: 'clinician', password: 'violet kettle drums at noon' }, operator);
  assert.equal(user.role, 'clinician');
});

test('a password containing the e-mail address or its local part is refused, on creation and on change', async () => {
  const site = await createTestSite(db.database);
  const email = `marguerite.lindqvist-${Math.random().toString(36).slice(2, 6)}@example.test`;
  await assert.rejects(
    createUser(db.database, { siteId: site.siteId, email, role: 'clinician', password: `${email.toUpperCase()}#42` }, operator),
    (error: unknown) => isDomainError(error, 'invalid') && error.message === 'the password must not contain the e-mail address',
  );
  const { user } = await createUser(db.database, { siteId: site.siteId, email, role: 'clinician', password: 'violet kettle drums at noon' }, operator);
  await assert.rejects(
    setPassword(db.database, user.id, `zz${email.split('@')[0]}zz`, operator),
    (error: unknown) => isDomainError(error, 'invalid') && error.message === 'the password must not contain the e-mail address',
  );
  await assert.rejects(setPassword(db.database, user.id, 'letmein12345', operator), (error: unknown) => isDomainError(error, 'invalid'));
  await setPassword(db.database, user.id, 'amber lantern over the fjord', operator);
});

test('password hashes beyond the running and waiting bound are refused at once as busy, not queued without end', async () => {
  const stored = await hashPassword('violet kettle drums at noon');
  const outcomes = await Promise.allSettled(Array.from({ length: 60 }, () => verifyPassword('violet kettle drums at noon', stored)));
  const busy = outcomes.filter((outcome) => outcome.status === 'rejected' && (outcome.reason as Error).name === 'ServiceBusyError');
  const verified = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value === true);
  assert.ok(busy.length > 0, 'some verifications were refused as busy');
  assert.equal(busy.length + verified.length, 60, 'every other verification completed with the right answer');
  // Once the burst has drained, hashing works again.
  assert.equal(await verifyPassword('violet kettle drums at noon', stored), true);
});
