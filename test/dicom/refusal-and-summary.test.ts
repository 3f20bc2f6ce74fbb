import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { startDicomListener } from '../../src/dicom/listener.ts';
import { createTestSite } from '../support/sites.ts';
import { listFiles, transferFiles, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';
import { writeSyntheticInstance } from './support/synthetic-instance.ts';

// A refused instance leaves no file behind, whichever step refused it, and the association's one
// log line counts it. (A failure after the move, such as a full disk, is in c-store-failures.)
let harness: DicomHarness;
let filesDir: string;
before(async () => {
  harness = await startHarness();
  filesDir = await mkdtemp(join(tmpdir(), 'cg-dicom-move-'));
});
after(async () => {
  await harness.stop();
  await rm(filesDir, { recursive: true, force: true });
});

const root = `1.2.826.0.1.3680043.9.${process.pid}`;

async function instance(name: string, uids: { study: string; series: string; instance: string }): Promise<string> {
  const path = join(filesDir, `${name}.dcm`);
  await writeSyntheticInstance(path, uids, 8, 8);
  return path;
}

test('an instance whose series belongs to another study is refused and leaves no file', async () => {
  const site = await createTestSite(harness.db.database);
  const series = `${root}.1.2`;
  const first = await instance('first', { study: `${root}.1`, series, instance: `${root}.1.2.1` });
  const stray = await instance('stray', { study: `${root}.9`, series, instance: `${root}.9.2.1` });
  const stored = await storescu(harness.listener.port, site.aeTitle, [first, stray], ['-v']);
  assert.equal(stored.stderr.match(/Received Store Response \(Success\)/g)?.length, 1, stored.stderr);
  assert.match(stored.stderr, /Received Store Response \(Error: CannotUnderstand\)/);
  const { rows } = await harness.db.database.query('SELECT sop_instance_uid FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  assert.deepEqual(rows, [{ sop_instance_uid: `${root}.1.2.1` }]);
  const files = await listFiles(join(harness.dataDir, 'dicom', site.siteId));
  assert.deepEqual(
    files.map((file) => file.slice(file.lastIndexOf('/') + 1)),
    [`${root}.1.2.1.dcm`],
  );
  assert.deepEqual(await transferFiles(harness.dataDir), []);
});

test('an association is logged once at info, with what it stored and refused; each instance only at debug', async () => {
  const lines: { level: number; msg: string; stored?: number; storedBytes?: number; refused?: number }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const listener = await startDicomListener({ ...harness.services, logger }, { host: '127.0.0.1', port: 0 });
  try {
    const site = await createTestSite(harness.db.database);
    const a = await instance('a', { study: `${root}.3`, series: `${root}.3.1`, instance: `${root}.3.1.1` });
    const b = await instance('b', { study: `${root}.3`, series: `${root}.3.1`, instance: `${root}.3.1.2` });
    const stray = await instance('c', { study: `${root}.4`, series: `${root}.3.1`, instance: `${root}.4.1.1` });
    const result = await storescu(listener.port, site.aeTitle, [a, b, stray], ['-v']);
    assert.equal(result.stderr.match(/Received Store Response \(Success\)/g)?.length, 2, result.stderr);
  } finally {
    await listener.close();
  }
  const released = lines.filter((line) => line.msg === 'association released');
  assert.equal(released.length, 1);
  assert.equal(released[0]!.stored, 2);
  assert.equal(released[0]!.refused, 1);
  assert.ok(released[0]!.storedBytes! > 2 * 8 * 8 * 2);
  assert.deepEqual(
    lines.filter((line) => line.msg === 'instance stored'),
    [],
  );
});
