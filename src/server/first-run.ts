import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { countUsers, createUser } from '../domain/users/users.ts';
import type { Database } from '../storage/database.ts';

export const initialAdminEmail = 'admin@localhost';

/**
 * On the very first start (no users at all), create a service admin with a random password and
 * leave the password in a file only the service's user can read, as Jenkins does.
 */
export async function ensureInitialAdmin(database: Database, dataDir: string, logger: Logger): Promise<void> {
  await database.transaction(async (tx) => {
    // Two starts racing on one database must not both create an admin.
    await tx.query('SELECT pg_advisory_xact_lock(7355608002)');
    if ((await countUsers(tx)) > 0) return;
    const { generatedPassword } = await createUser(tx, { siteId: null, email: initialAdminEmail, role: 'service-admin' }, { kind: 'operator' });
    const file = join(dataDir, 'initial-admin-password');
    writeFileSync(file, `${generatedPassword}\n`, { mode: 0o600 });
    logger.warn({ email: initialAdminEmail, passwordFile: file }, `first run: created the service admin ${initialAdminEmail}; its password is in ${file} (readable only by this user). Sign in and change it.`);
  });
}
