// A batch (BHS ... BTS) in one MLLP frame: each message authorized and applied as if framed
// alone, and one frame of ACKs in the same envelope in answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createIntegrationClient } from '../../../src/domain/clients/integration-clients.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { frame } from '../../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../../src/hl7v2/mllp/listener.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { testServices } from '../../support/http.ts';
import { createTestSite } from '../../support/sites.ts';
import { RawPeer } from './support.ts';

let db: TestDatabase;
let listener: RunningMllpListener;
let site: SiteContext;
before(async () => {
  db = await createTestDatabase();
  site = await createTestSite(db.database);
  await createIntegrationClient(db.database, site.siteId, { name: 'lab', protocol: 'hl7-mllp', allowedIps: '127.0.0.1' }, { kind: 'operator' });
  listener = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0 });
});
after(async () => {
  await listener.close();
  await db.drop();
});

const adt = (id: string) => `MSH|^~\\&|LAB|HOSP|GW|SITE|20241005123045-0500||ADT^A08^ADT_A01|${id}|P|2.5.1\rEVN|A08\rPID|1||${id}^^^HOSP^MR||Doe^Jane||19800101|F\r`;

test('a batch in one frame is answered by one frame holding the batch of ACKs', async () => {
  const peer = await RawPeer.open(listener.port);
  peer.write(frame(Buffer.from(`BHS|^~\\&|LAB|HOSP|GW|SITE|20241005||||MB-1\r${adt('MB1')}${adt('MB2')}BTS|2\r`)));
  const answer = (await peer.next())!.split('\r');
  peer.end();
  assert.match(answer[0]!, /^BHS\|\^~\\&\|GW\|SITE\|LAB\|HOSP\|.*\|MB-1$/);
  assert.deepEqual(answer.filter((s) => s.startsWith('MSA|')), ['MSA|AA|MB1|message accepted', 'MSA|AA|MB2|message accepted']);
  assert.equal(answer.at(-1), 'BTS|2');
  const store = resourceStore(db.database, site);
  assert.ok(await store.findPatientByBusinessIdentifier('MB1'));
  assert.ok(await store.findPatientByBusinessIdentifier('MB2'));
});
