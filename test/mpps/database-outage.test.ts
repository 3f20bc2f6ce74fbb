import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { mppsSurface } from '../../src/mpps/surface.ts';
import { Database } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { uid } from '../domain/imaging/fixtures.ts';

type ProxyMode = 'pass' | 'fail-after-one-query' | 'refuse';

/**
 * A TCP proxy in front of PostgreSQL that plays an outage starting mid-request. In
 * 'fail-after-one-query' mode it lets one query through (the API-key lookup), cuts that connection
 * once the server has answered it (ReadyForQuery), and refuses every connection after that: the
 * step's transaction then meets a database that has gone away.
 */
function outageProxy(target: URL): Promise<{ server: Server; port: number; state: { mode: ProxyMode } }> {
  const state: { mode: ProxyMode } = { mode: 'pass' };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (state.mode === 'refuse') return void client.destroy();
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    let pending = Buffer.alloc(0);
    let readyForQuery = 0;
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      client.write(chunk);
      if (state.mode !== 'fail-after-one-query') return;
      // PostgreSQL backend messages: type byte, int32 length (including itself), body.
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
        if (pending[0] === 0x5a) readyForQuery++;
        pending = pending.subarray(1 + pending.readInt32BE(1));
      }
      // The first ReadyForQuery ends the start-up; the second answers the first query.
      if (readyForQuery >= 2) {
        state.mode = 'refuse';
        cut();
      }
    });
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
  });
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port, state })));
}

let db: TestDatabase;
let proxied: Database;
let proxy: Awaited<ReturnType<typeof outageProxy>>;
let app: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  const target = new URL(db.connectionString);
  proxy = await outageProxy(target);
  const via = new URL(db.connectionString);
  via.hostname = '127.0.0.1';
  via.port = String(proxy.port);
  proxied = new Database({ connectionString: via.toString(), maxConnections: 4 });
  app = await buildTestOrigin(mppsSurface, proxied);
});
after(async () => {
  await app.close();
  await proxied.close();
  proxy.server.close();
  await db.drop();
});

test('a database lost mid-request is 503 with Retry-After, records nothing, and the retry succeeds', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const step = { sop_instance_uid: uid(), study_uid: uid(), status: 'IN PROGRESS' };
  const send = () => app.inject({ method: 'POST', url: '/ingest', headers: { 'content-type': 'application/json', 'x-api-key': key }, payload: step });

  proxy.state.mode = 'fail-after-one-query';
  const refused = await send();
  assert.equal(refused.statusCode, 503);
  assert.equal(refused.headers['retry-after'], '5');
  assert.equal(refused.json().error.code, 'unavailable');
  assert.doesNotMatch(refused.body, /Connection terminated|\.ts:/);
  assert.equal(proxy.state.mode, 'refuse', 'the outage began after the key lookup, inside the request');
  const { rows } = await db.database.query('SELECT 1 FROM imaging_procedure_step WHERE site_id = $1', [site.siteId]);
  assert.equal(rows.length, 0);

  proxy.state.mode = 'pass';
  const retried = await send();
  assert.equal(retried.statusCode, 201);
});
