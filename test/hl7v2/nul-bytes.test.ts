// Issue 26 point 6: a NUL byte in a message is a content error (AE with its location), over HTTP
// and MLLP, never "retry later" (AR, 503) that would stall the sender's queue for ever.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { listMessages } from '../../src/domain/messages/message-log.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { frame } from '../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../src/hl7v2/mllp/listener.ts';
import { hl7v2OnlySurface } from '../../src/hl7v2/surface.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey, testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { msa, RawPeer } from './mllp/support.ts';

let db: TestDatabase;
let app: FastifyInstance;
let mllp: RunningMllpListener;
let site: SiteContext;
let key: string;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(hl7v2OnlySurface, db.database);
  mllp = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0 });
  site = await createTestSite(db.database);
  key = await createTestApiKey(db.database, site);
  await createIntegrationClient(db.database, site.siteId, { name: 'lab', protocol: 'hl7-mllp', allowedIps: '127.0.0.1' }, { kind: 'operator' });
});
after(async () => {
  await mllp.close();
  await app.close();
  await db.drop();
});

/** An ADT^A01 with a NUL placed in one field; `\X00\` is the same NUL written as a hex escape. */
const cases: { field: string; build: (id: string, nul: string) => string; location: RegExp }[] = [
  { field: 'PID-3', build: (id, nul) => adt(id, `PID|1||MRN${nul}1^^^H^MR||Doe^Jane||19800101|F`), location: /PID\[1\]-3/ },
  { field: 'MSH-10', build: (id, nul) => adt(`${id}${nul}X`, 'PID|1||MRN2^^^H^MR||Doe^Jane||19800101|F'), location: /MSH\[1\]-10/ },
  { field: 'PID-7', build: (id, nul) => adt(id, `PID|1||MRN3^^^H^MR||Doe^Jane||1980${nul}0101|F`), location: /PID\[1\]-7/ },
];

function adt(controlId: string, pid: string): string {
  return [`MSH|^~\\&|LAB|HOSP|GATEWAY|SITE|20240102030405||ADT^A01^ADT_A01|${controlId}|P|2.5.1`, 'EVN|A01|20240102030405', pid, 'PV1|1|I'].join('\r');
}

for (const { field, build, location } of cases) {
  for (const [form, nul] of [['a NUL byte', '\u0000'], ['a \\X00\\ escape', '\\X00\\']] as const) {
    test(`${form} in ${field}: AE with the location over HTTP (422) and MLLP, and the message is logged`, async () => {
      const id = `NUL-${field}-${form.length}-${Math.random().toString(36).slice(2, 8)}`;
      const response = await app.inject({ method: 'POST', url: '/v2/ingest', headers: { 'content-type': 'text/plain', 'x-api-key': key }, payload: Buffer.from(build(id, nul), 'utf8') });
      assert.equal(response.statusCode, 422, response.body);
      const body = response.json();
      assert.equal(body.ack_code, 'AE');
      assert.ok(body.errors.some((e: { location?: string; message: string }) => location.test(e.location ?? '') && /NUL/.test(e.message)), response.body);
      assert.ok(!body.ack.includes('\u0000'));

      const peer = await RawPeer.open(mllp.port);
      try {
        peer.write(frame(Buffer.from(build(`${id}-M`, nul), 'utf8')));
        const ack = await peer.next();
        assert.equal(msa(ack).code, 'AE', ack);
        assert.match(ack ?? '', /\rERR\|/);
      } finally {
        peer.end();
      }
      const logged = await listMessages(db.database, site, { limit: 500 });
      assert.ok(logged.messages.filter((m) => m.ackCode === 'AE' && (m.controlId ?? "").startsWith(id.slice(0, 12))).length >= 1);
    });
  }
}
