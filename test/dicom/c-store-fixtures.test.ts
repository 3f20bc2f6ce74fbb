import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestSite } from '../support/sites.ts';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';
import { datasetOf, dcmtk, dumpElements, dicomFixture, fixturesDir, listFiles, transferFiles, metaTransferSyntax, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';

// storescu proposes the file's own transfer syntax first with these options, so it sends the
// dataset as it is in the file (no "Converting transfer syntax").
const proposeOption: Record<string, string> = {
  '1.2.840.10008.1.2': '-xi',
  '1.2.840.10008.1.2.1': '-xe',
  '1.2.840.10008.1.2.2': '-xb',
  '1.2.840.10008.1.2.1.99': '-xd',
  '1.2.840.10008.1.2.5': '-xr',
  '1.2.840.10008.1.2.4.50': '-xy',
  '1.2.840.10008.1.2.4.51': '-xx',
  '1.2.840.10008.1.2.4.70': '-xs',
  '1.2.840.10008.1.2.4.80': '-xt',
  '1.2.840.10008.1.2.4.90': '-xv',
  '1.2.840.10008.1.2.4.91': '-xw',
};

const fixtures = readdirSync(fixturesDir).filter((name) => name.endsWith('.dcm')).sort();

let harness: DicomHarness;
let proxy: RecordingProxy;
before(async () => {
  harness = await startHarness();
  proxy = await startRecordingProxy(harness.listener.port);
});
after(async () => {
  await proxy.close();
  await harness.stop();
});

/**
 * dcmtk re-encodes a little while sending a file: it drops Data Set Trailing Padding, writes
 * sequences with explicit lengths and re-compresses a deflated dataset. So the bytes to compare
 * with are the ones on the wire (recorded by the proxy); against the file, the content is compared.
 */
async function assertSameContent(stored: string, source: string): Promise<void> {
  const expected = await dumpElements(source);
  assert.ok(expected.length >= 10, 'dcmdump listed too few elements to compare');
  assert.deepEqual(await dumpElements(stored), expected);
}

test('the fixture set covers every transfer syntax storescu can send unchanged', async () => {
  assert.equal(fixtures.length, 16);
  const syntaxes = new Set(await Promise.all(fixtures.map((name) => metaTransferSyntax(dicomFixture(name)))));
  assert.deepEqual([...syntaxes].sort(), Object.keys(proposeOption).sort());
});

for (const name of fixtures) {
  test(`C-STORE of ${name} stores the dataset bytes exactly as sent, indexed in the called site`, async () => {
    const site = await createTestSite(harness.db.database);
    const source = dicomFixture(name);
    const syntax = await metaTransferSyntax(source);
    const before = proxy.datasets.length;
    const result = await storescu(proxy.port, site.aeTitle, [source], ['-v', proposeOption[syntax]!]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Received Store Response \(Success\)/);
    const conversion = /Converting transfer syntax: (.+) -> (.+)/.exec(result.stderr);
    assert.ok(conversion && conversion[1] === conversion[2], `storescu converted: ${conversion?.[0]}`);

    const stored = await listFiles(join(harness.dataDir, 'dicom', site.siteId));
    assert.equal(stored.length, 1);
    assert.equal(proxy.datasets.length, before + 1);
    const sent = proxy.datasets[before]!;
    const kept = await readFile(stored[0]!);
    assert.ok(datasetOf(kept).equals(sent), 'stored dataset bytes differ from the bytes sent on the wire');
    assert.equal(await metaTransferSyntax(stored[0]!), syntax);
    // dcmtk reads the stored file as a valid Part-10 file, with the content of the sent one.
    const dump = await dcmtk('dcmdump', ['-q', stored[0]!]);
    assert.equal(dump.code, 0, dump.stderr);
    await assertSameContent(stored[0]!, source);

    const { rows } = await harness.db.database.query(
      'SELECT storage_path, size_bytes, sha256, transfer_syntax_uid, calling_ae_title, remote_address FROM imaging_instance WHERE site_id = $1',
      [site.siteId],
    );
    assert.equal(rows.length, 1);
    assert.equal(resolveStoredInstance(harness.services.config.dicomStorageDir, rows[0].storage_path), stored[0]);
    assert.equal(Number(rows[0].size_bytes), kept.length);
    assert.equal(rows[0].sha256, createHash('sha256').update(sent).digest('hex'));
    assert.equal(rows[0].transfer_syntax_uid, syntax);
    assert.equal(rows[0].calling_ae_title, 'MODALITY1');
    assert.equal(rows[0].remote_address, '127.0.0.1');
    assert.deepEqual(await transferFiles(harness.dataDir), []);
  });
}
