import { connect } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { loadConfig, type GatewayConfig } from '../../src/config/env.ts';
import { createApiKey } from '../../src/domain/keys/api-keys.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createUser } from '../../src/domain/users/users.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import type { HttpSurface } from '../../src/platform/http/surface.ts';
import type { Services } from '../../src/platform/services.ts';
import type { Database } from '../../src/storage/database.ts';

/** Services as the composition root builds them, on a test database and a fresh data directory. */
export function testServices(database: Database, env: NodeJS.ProcessEnv = {}): Services {
  const config: GatewayConfig = loadConfig({ CG_DATA_DIR: mkdtempSync(join(tmpdir(), 'cg-test-data-')), ...env });
  return { database, config, logger: pino({ level: process.env.CG_TEST_LOG_LEVEL ?? 'silent' }) };
}

/** A ready origin for one surface: use app.inject, or app.listen({ port: 0, host: '127.0.0.1' }). */
export async function buildTestOrigin(surface: HttpSurface, database: Database, env: NodeJS.ProcessEnv = {}): Promise<FastifyInstance> {
  return createOrigin(surface, testServices(database, env));
}

/** A key of a fresh clinician of the site; returns the key string for X-API-Key. */
export async function createTestApiKey(database: Database, site: SiteContext): Promise<string> {
  const { user } = await createUser(
    database,
    { siteId: site.siteId, email: `user-${Math.random().toString(36).slice(2)}@example.test`, role: 'clinician', password: 'correct horse battery staple' },
    { kind: 'operator' },
  );
  const { key } = await createApiKey(database, { siteId: site.siteId, userId: user.id, label: 'test' }, { kind: 'operator' });
  return key;
}

/**
 * Writes raw bytes to a listening origin and reads until the server closes the connection: for
 * requests no HTTP client will send (bytes outside ASCII in the target, broken header lines).
 */
export function rawHttpExchange(port: number, request: Buffer): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 5 s')), 5000);
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ head, body });
    });
    socket.on('error', reject);
  });
}
