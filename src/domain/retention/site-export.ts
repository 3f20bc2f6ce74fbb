/**
 * Exports a whole site into an empty folder, the first step of offboarding (docs/data-lifecycle.md):
 *
 *   fhir/<Type>-<n>.ndjson       every stored FHIR resource of the site, and its imaging reports as
 *                                DiagnosticReport (the Bulk Data export's reader and writer)
 *   dicom/<site>/<study>/…       every indexed DICOM file, byte for byte as stored
 *   records/<name>-<n>.ndjson    FHIR history, visits, the imaging index and procedure steps, the
 *                                message log (raw bodies in base64 where kept), integration clients,
 *                                API keys (no secret hashes), AE titles, DICOM destinations, the
 *                                audit log and the data access log
 *   settings.json                the site's row
 *   manifest/dicom-files-<n>.ndjson  path, bytes and SHA-256 of each copied DICOM file (as read)
 *   manifest.json                written last: counts, and bytes and SHA-256 of every file above
 *                                other than the DICOM files (which the lines above give)
 *
 * Everything comes from one REPEATABLE READ snapshot through server-side cursors, a batch of rows
 * at a time, so memory holds one batch whatever the site's size. Audited as `site.export`.
 */
import { writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database } from '../../storage/database.ts';
import { copyStoredFile, prepareEmptyFolder } from '../../storage/backup/create-backup.ts';
import { sha256OfFile } from '../../storage/backup/manifest.ts';
import { recordAudit } from '../audit/audit.ts';
import { NdjsonFileSeries } from '../bulk-export/export-files.ts';
import { withExportSnapshot, type ExportSnapshot } from '../bulk-export/export-reader.ts';
import { diagnosticReportOf } from '../imaging/diagnostic-report-view.ts';
import { canonicalStoragePath, resolveStoredInstance } from '../imaging/stored-instance-file.ts';
import { isStoredResourceType } from '../records/search-parameters.ts';
import type { Actor } from '../site-context.ts';
import type { Site } from '../sites/sites.ts';

export const siteExportFormat = 'clinical-gateway-site-export/1';
const manifestFileName = 'manifest.json';
/** An NDJSON file is continued in the next one past this size (as the Bulk Data export does). */
const ndjsonFileMaxBytes = 1024 ** 3;
const parallelCopies = 4;
const privateModes = { file: 0o600, folder: 0o700 };

export interface ExportedFile {
  /** Relative to the export folder, with forward slashes. */
  path: string;
  /** Lines, for an NDJSON file. */
  count?: number;
  bytes: number;
  sha256: string;
}

export interface SiteExportManifest {
  format: typeof siteExportFormat;
  site: { id: string; name: string };
  /** The snapshot's instant: the export holds the site as it was then. */
  snapshotAt: string;
  counts: { fhir: Record<string, number>; records: Record<string, number>; dicomFiles: number; dicomBytes: number };
  /** Indexed DICOM files not found in the storage folder (none of them copied). */
  dicomMissing: string[];
  /** Every file but the DICOM files, whose bytes and SHA-256 are in manifest/dicom-files-*.ndjson. */
  files: ExportedFile[];
}

/**
 * The site's other records, each a query rendering one JSON line per row ($1: the site id).
 * PostgreSQL renders the JSON, so every column is exported, including ones added later.
 */
const recordQueries: { name: string; sql: string }[] = [
  { name: 'fhir-history', sql: 'SELECT to_jsonb(v)::text AS line FROM clinical_resource_version v WHERE site_id = $1 ORDER BY resource_type, id, version_id' },
  { name: 'patient-visits', sql: 'SELECT to_jsonb(v)::text AS line FROM patient_visit v WHERE site_id = $1 ORDER BY id' },
  { name: 'imaging-studies', sql: 'SELECT to_jsonb(s)::text AS line FROM imaging_study s WHERE site_id = $1 ORDER BY study_instance_uid' },
  { name: 'imaging-series', sql: 'SELECT to_jsonb(s)::text AS line FROM imaging_series s WHERE site_id = $1 ORDER BY series_instance_uid' },
  { name: 'dicom-instances', sql: 'SELECT to_jsonb(i)::text AS line FROM imaging_instance i WHERE site_id = $1 ORDER BY storage_path' },
  { name: 'procedure-steps', sql: 'SELECT to_jsonb(p)::text AS line FROM imaging_procedure_step p WHERE site_id = $1 ORDER BY sop_instance_uid' },
  {
    name: 'messages',
    sql: `SELECT (to_jsonb(m) - 'raw' || jsonb_build_object('raw_base64', translate(encode(m.raw, 'base64'), E'\\n', '')))::text AS line
            FROM inbound_message m WHERE site_id = $1 ORDER BY seq`,
  },
  { name: 'integration-clients', sql: 'SELECT to_jsonb(c)::text AS line FROM integration_client c WHERE site_id = $1 ORDER BY created_at, id' },
  { name: 'api-keys', sql: `SELECT (to_jsonb(k) - 'secret_hash')::text AS line FROM api_key k WHERE site_id = $1 ORDER BY created_at, id` },
  {
    name: 'ae-titles',
    sql: `SELECT jsonb_build_object('ae_title', ae_title, 'role', 'site')::text AS line FROM site WHERE id = $1
          UNION ALL
          SELECT jsonb_build_object('ae_title', ae_title, 'role', 'destination', 'host', host, 'port', port)::text FROM dicom_destination WHERE site_id = $1
          UNION ALL
          SELECT jsonb_build_object('ae_title', calling_ae_title, 'role', 'sender', 'instances', count(*))::text
            FROM imaging_instance WHERE site_id = $1 AND calling_ae_title IS NOT NULL GROUP BY calling_ae_title`,
  },
  { name: 'dicom-destinations', sql: 'SELECT to_jsonb(d)::text AS line FROM dicom_destination d WHERE site_id = $1 ORDER BY created_at, id' },
  { name: 'audit-log', sql: 'SELECT to_jsonb(a)::text AS line FROM audit_event a WHERE site_id = $1 ORDER BY id' },
  { name: 'data-access-log', sql: 'SELECT to_jsonb(d)::text AS line FROM data_access_audit d WHERE site_id = $1 ORDER BY id' },
];

export async function exportSite(database: Database, site: Site, target: string, dicomStorageDir: string, actor: Actor): Promise<SiteExportManifest> {
  await prepareEmptyFolder(target, 'a site export');
  const files: ExportedFile[] = [];
  const manifest = await withExportSnapshot(database.pool, { siteId: site.id, level: 'system', since: null }, async (snapshot) => {
    const fhir = await writeFhir(snapshot, site.id, target, files);
    const records: Record<string, number> = {};
    for (const { name, sql } of recordQueries) {
      const series = new NdjsonFileSeries(join(target, 'records'), 'records', name, ndjsonFileMaxBytes);
      for await (const batch of snapshot.rows<{ line: string }>(sql, [site.id])) await series.writeLines(batch.map((row) => row.line));
      await series.close();
      records[name] = series.count;
      files.push(...listed(series));
    }
    const settings = await snapshotLine(snapshot, 'SELECT to_jsonb(s)::text AS line FROM site s WHERE id = $1', site.id);
    await writeFile(join(target, 'settings.json'), `${settings}\n`, { flag: 'wx', mode: privateModes.file });
    files.push({ path: 'settings.json', bytes: Buffer.byteLength(settings) + 1, sha256: '' });
    const dicom = await copyDicomFiles(snapshot, site.id, dicomStorageDir, target);
    files.push(...dicom.listFiles);
    return {
      format: siteExportFormat,
      site: { id: site.id, name: site.name },
      snapshotAt: snapshot.transactionTime.toISOString(),
      counts: { fhir, records, dicomFiles: dicom.copied, dicomBytes: dicom.bytes },
      dicomMissing: dicom.missing,
      files,
    } satisfies SiteExportManifest;
  });
  // The NDJSON files and the settings are hashed once written, closed and synced.
  for (const file of files) if (file.sha256 === '') file.sha256 = await sha256OfFile(join(target, file.path));
  const partial = join(target, `${manifestFileName}.partial`);
  await writeFile(partial, `${JSON.stringify(manifest, null, 1)}\n`, { flag: 'wx', mode: privateModes.file });
  await rename(partial, join(target, manifestFileName));
  await recordAudit(database, {
    siteId: site.id,
    actor,
    action: 'site.export',
    targetType: 'site',
    targetId: site.id,
    details: { folder: target, snapshotAt: manifest.snapshotAt, counts: manifest.counts, dicomMissing: manifest.dicomMissing.length },
  });
  return manifest;
}

/** A series' files, to be hashed once closed. */
function listed(series: NdjsonFileSeries): ExportedFile[] {
  return series.files.map(({ file, count, bytes }) => ({ path: file, count, bytes, sha256: '' }));
}

async function snapshotLine(snapshot: ExportSnapshot, sql: string, siteId: string): Promise<string> {
  for await (const batch of snapshot.rows<{ line: string }>(sql, [siteId])) if (batch[0]) return batch[0].line;
  throw new Error('the site is gone');
}

/** One file series per FHIR type: the stored resources, then DiagnosticReport from the imaging reports. */
async function writeFhir(snapshot: ExportSnapshot, siteId: string, target: string, files: ExportedFile[]): Promise<Record<string, number>> {
  const types: string[] = [];
  for await (const batch of snapshot.rows<{ type: string }>('SELECT DISTINCT resource_type AS type FROM clinical_resource WHERE site_id = $1 ORDER BY 1', [siteId])) {
    types.push(...batch.map((row) => row.type).filter(isStoredResourceType));
  }
  const counts: Record<string, number> = {};
  const write = async (type: string, batches: AsyncGenerator<string[]>) => {
    const series = new NdjsonFileSeries(join(target, 'fhir'), 'fhir', type, ndjsonFileMaxBytes);
    for await (const lines of batches) await series.writeLines(lines);
    await series.close();
    if (series.count > 0) counts[type] = series.count;
    files.push(...listed(series));
  };
  for (const type of types) await write(type, snapshot.storedResources(type));
  // Never a stored type: a view over the imaging reports, as in the Bulk Data export.
  await write('DiagnosticReport', reportLines(snapshot));
  return counts;
}

async function* reportLines(snapshot: ExportSnapshot): AsyncGenerator<string[]> {
  for await (const reports of snapshot.imagingReports()) yield reports.map((report) => JSON.stringify(diagnosticReportOf(report)));
}

/**
 * Copies the site's indexed DICOM files (hashing each as it is read), a few at a time; each copied
 * file's path, bytes and SHA-256 go to the DICOM file list as they are copied (memory holds one
 * batch of the index, however many files the site has).
 */
async function copyDicomFiles(snapshot: ExportSnapshot, siteId: string, storageDir: string, target: string) {
  const missing: string[] = [];
  let [copied, bytes] = [0, 0];
  const dicomDir = join(target, 'dicom');
  const list = new NdjsonFileSeries(join(target, 'manifest'), 'manifest', 'dicom-files', ndjsonFileMaxBytes);
  for await (const batch of snapshot.rows<{ storage_path: string }>('SELECT storage_path FROM imaging_instance WHERE site_id = $1 ORDER BY storage_path', [siteId])) {
    const paths = batch.map((row) => canonicalStoragePath(row.storage_path));
    for (let i = 0; i < paths.length; i += parallelCopies) {
      const copies = await Promise.all(
        paths.slice(i, i + parallelCopies).map(async (path) => ({ path, copy: await copyStoredFile(resolveStoredInstance(storageDir, path), resolveStoredInstance(dicomDir, path), privateModes) })),
      );
      const lines: string[] = [];
      for (const { path, copy } of copies) {
        if (!copy) {
          missing.push(path);
          continue;
        }
        lines.push(JSON.stringify({ path: `dicom/${path}`, bytes: copy.bytes, sha256: copy.sha256 }));
        copied++;
        bytes += copy.bytes;
      }
      await list.writeLines(lines);
    }
  }
  await list.close();
  return { copied, bytes, missing, listFiles: listed(list) };
}
