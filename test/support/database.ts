import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Database } from '../../src/storage/database.ts';
import { migrate } from '../../src/storage/migrations.ts';

export interface TestDatabase {
  database: Database;
  connectionString: string;
  drop(): Promise<void>;
}

/**
 * The server tests run against: CG_TEST_DATABASE_URL when set, else the embedded server that
 * test/run.ts started for this run (CG_TEST_SERVER_URL).
 */
export function testServerUrl(): string {
  const url = process.env.CG_TEST_DATABASE_URL || process.env.CG_TEST_SERVER_URL;
  if (!url) throw new Error('no test database: run the tests through `npm test`, or set CG_TEST_DATABASE_URL');
  return url;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** A new, migrated database of its own on the test server; drop() removes it. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const server = testServerUrl();
  const name = `cg_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const connectionString = withDatabase(server, name);
  const database = new Database({ connectionString, maxConnections: 20 });
  if (options.migrate !== false) await migrate(database);
  return {
    database,
    connectionString,
    async drop() {
      await database.close();
      const client = new pg.Client({ connectionString: server });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
