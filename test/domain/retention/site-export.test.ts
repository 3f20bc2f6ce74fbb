// Data lifecycle, site offboarding's first step: `site export SITE --to DIR` writes the whole site
// (FHIR NDJSON, its DICOM files byte for byte, the message log, settings, clients, destinations,
// the audit and data access logs, a manifest), nothing of another site, and is audited.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, test } from 'node:test';
import type { SiteExportManifest } from '../../../src/domain/retention/site-export.ts';
import { runCli } from '../../support/cli.ts';
import { createTestSite } from '../../support/sites.ts';
import { useFilledSites } from './filled-sites.ts';

const filled = useFilledSites();
const workDir = mkdtempSync(join(tmpdir(), 'cg-site-export-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

const cliEnv = () => ({ CG_DATABASE_URL: filled.db.connectionString, CG_DICOM_STORAGE_DIR: filled.services.config.dicomStorageDir });
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((entry) => statSync(join(folder, entry)).isFile())
    .map((entry) => relative(folder, join(folder, entry)).split('\\').join('/'))
    .sort();
}

function ndjson(folder: string, prefix: string): Record<string, unknown>[] {
  return filesUnder(folder)
    .filter((file) => file.startsWith(prefix))
    .flatMap((file) => readFileSync(join(folder, file), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function count(sql: string, siteId: string): Promise<number> {
  const { rows } = await filled.db.database.query<{ n: number }>(sql, [siteId]);
  return rows[0]!.n;
}

test('site export writes every record of the site and its DICOM files, nothing of another site, then a manifest; audited', { timeout: 180_000 }, async () => {
  const { database } = filled.db;
  const leaving = await createTestSite(database);
  const staying = await createTestSite(database);
  await filled.fill(leaving, '127.0.0.1');
  await filled.fill(staying, '127.0.0.2');
  const auditBefore = await count('SELECT count(*)::int AS n FROM audit_event WHERE site_id = $1', leaving.siteId);

  const target = join(workDir, 'leaving');
  const result = await runCli(['site', 'export', leaving.siteName, '--to', target, '--json'], cliEnv());
  assert.equal(result.status, 0, result.stderr);
  const summary = JSON.parse(result.stdout) as { site_id: string; fhir: Record<string, number>; records: Record<string, number>; dicom_files: number; dicom_missing: number };
  assert.equal(summary.site_id, leaving.siteId);

  // FHIR: one line per stored resource of each type, and DiagnosticReport per imaging report.
  const { rows: types } = await database.query<{ type: string; n: number }>(
    'SELECT resource_type AS type, count(*)::int AS n FROM clinical_resource WHERE site_id = $1 GROUP BY 1',
    [leaving.siteId],
  );
  assert.ok(types.length > 0);
  for (const { type, n } of types) {
    const lines = ndjson(target, `fhir/${type}-`);
    assert.equal(lines.length, n, type);
    assert.ok(lines.every((resource) => resource.resourceType === type));
  }
  const reports = await count('SELECT count(*)::int AS n FROM imaging_report WHERE site_id = $1', leaving.siteId);
  assert.ok(reports > 0);
  assert.equal(ndjson(target, 'fhir/DiagnosticReport-').length, reports);
  assert.equal(summary.fhir.DiagnosticReport, reports);

  // The other records: one line per row of the site.
  const tables: [string, string][] = [
    ['messages', 'inbound_message'],
    ['integration-clients', 'integration_client'],
    ['api-keys', 'api_key'],
    ['dicom-destinations', 'dicom_destination'],
    ['dicom-instances', 'imaging_instance'],
    ['imaging-studies', 'imaging_study'],
    ['procedure-steps', 'imaging_procedure_step'],
    ['patient-visits', 'patient_visit'],
    ['data-access-log', 'data_access_audit'],
  ];
  for (const [file, table] of tables) {
    const rows = await count(`SELECT count(*)::int AS n FROM ${table} WHERE site_id = $1`, leaving.siteId);
    assert.ok(rows > 0, `the fill left ${table} empty`);
    assert.equal(ndjson(target, `records/${file}-`).length, rows, file);
    assert.equal(summary.records[file], rows, file);
  }
  assert.equal(ndjson(target, 'records/audit-log-').length, auditBefore);
  assert.ok(ndjson(target, 'records/api-keys-').every((key) => !('secret_hash' in key)));
  const { rows: bodies } = await database.query<{ id: string; raw: Buffer }>('SELECT id, raw FROM inbound_message WHERE site_id = $1', [leaving.siteId]);
  const messages = ndjson(target, 'records/messages-');
  for (const { id, raw } of bodies) assert.deepEqual(Buffer.from(messages.find((entry) => entry.id === id)!.raw_base64 as string, 'base64'), raw);
  const aeTitles = ndjson(target, 'records/ae-titles-').map((entry) => `${entry.role as string}:${entry.ae_title as string}`);
  assert.ok(aeTitles.includes(`site:${leaving.aeTitle}`) && aeTitles.includes('destination:PACS'));
  assert.equal((JSON.parse(readFileSync(join(target, 'settings.json'), 'utf8')) as { id: string }).id, leaving.siteId);

  // DICOM files byte for byte: the copy's SHA-256 is the stored file's, and the list says so.
  const { rows: instances } = await database.query<{ storage_path: string }>('SELECT storage_path FROM imaging_instance WHERE site_id = $1', [leaving.siteId]);
  const listed = ndjson(target, 'manifest/dicom-files-') as { path: string; sha256: string }[];
  assert.equal(summary.dicom_files, instances.length);
  assert.equal(summary.dicom_missing, 0);
  assert.equal(listed.length, instances.length);
  for (const instance of instances) {
    const stored = instance.storage_path.replace(/^dicom\//, '');
    const original = sha256(readFileSync(join(filled.services.config.dicomStorageDir, stored)));
    assert.equal(sha256(readFileSync(join(target, 'dicom', stored))), original, stored);
    assert.equal(listed.find((file) => file.path === `dicom/${stored}`)?.sha256, original);
  }

  // The manifest, written last, names every other file with its SHA-256.
  const manifest = JSON.parse(readFileSync(join(target, 'manifest.json'), 'utf8')) as SiteExportManifest;
  const others = filesUnder(target).filter((file) => file !== 'manifest.json' && !file.startsWith('dicom/'));
  assert.deepEqual(manifest.files.map((file) => file.path).sort(), others);
  for (const file of manifest.files) assert.equal(sha256(readFileSync(join(target, file.path))), file.sha256, file.path);

  // Nothing of the other site.
  for (const file of filesUnder(target)) assert.ok(!readFileSync(join(target, file)).includes(staying.siteId), `${file} names the other site`);

  const { rows: audit } = await database.query<{ details: { folder: string } }>("SELECT details FROM audit_event WHERE action = 'site.export' AND site_id = $1", [leaving.siteId]);
  assert.equal(audit.length, 1);
  assert.equal(audit[0]!.details.folder, target);
});

test('site export refuses a folder that is not empty (exit 1) and a call without the site or the folder (exit 2)', async () => {
  const site = await createTestSite(filled.db.database);
  const occupied = join(workDir, 'occupied');
  const first = await runCli(['site', 'export', site.siteId, '--to', occupied], cliEnv());
  assert.equal(first.status, 0, first.stderr);
  const again = await runCli(['site', 'export', site.siteId, '--to', occupied], cliEnv());
  assert.equal(again.status, 1);
  assert.match(again.stderr, /is not empty: a site export goes into a new or empty folder/);
  const holdsAFile = join(workDir, 'holds-a-file');
  mkdirSync(holdsAFile);
  writeFileSync(join(holdsAFile, 'notes.txt'), 'mine');
  assert.equal((await runCli(['site', 'export', site.siteId, '--to', holdsAFile], cliEnv())).status, 1);
  assert.deepEqual(readdirSync(holdsAFile), ['notes.txt']);

  const other = join(workDir, 'other');
  const noFolder = await runCli(['site', 'export', site.siteId], cliEnv());
  assert.equal(noFolder.status, 2);
  assert.match(noFolder.stderr, /site export needs the folder/);
  const noSite = await runCli(['site', 'export', '--to', other], cliEnv());
  assert.equal(noSite.status, 2);
  assert.match(noSite.stderr, /site export needs the site/);
  const unknown = await runCli(['site', 'export', 'No such site', '--to', other], cliEnv());
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /no site with id or name/);
});
