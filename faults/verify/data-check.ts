import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { http } from '../clients/http.ts';
import { datasetSha256, type GeneratedInstance } from '../samples/dicom-instances.ts';
import type { Ledger } from '../load/ledger.ts';
import type { FhirItem, Hl7Item } from '../load/senders.ts';
import { check, type ScenarioReport, type Tally } from '../harness/scenario.ts';
import { canonicalStoragePath, resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';

/**
 * The data check of issue 9 point 1: every acknowledged item is present and intact, nothing is
 * there twice, and nothing half-applied was left behind. It reads the service's database and data
 * directory directly (the checks must not trust the service under test to report on itself) and,
 * for FHIR, also reads each acknowledged resource back through the API.
 */
export async function checkHl7(report: ScenarioReport, sql: pg.Pool, siteId: string, ledger: Ledger<Hl7Item>, label: string): Promise<Tally> {
  let lost = 0;
  let duplicated = 0;
  let found = 0;
  let halfApplied = 0;
  const problems: string[] = [];
  const messagesByControlId = await countsBy(sql, 'SELECT control_id AS key, count(*)::int AS n FROM inbound_message WHERE site_id = $1 GROUP BY control_id', siteId);
  const patientsByIdentifier = await patientCountsByIdentifier(sql, siteId);
  for (const item of ledger.items) {
    const m = messagesByControlId.get(item.data.controlId) ?? 0;
    const p = patientsByIdentifier.get(item.data.mrn) ?? 0;
    if (m > 0 && p > 0) found++;
    if (item.acknowledged && (m === 0 || p === 0)) {
      lost++;
      if (problems.length < 5) problems.push(`${item.key}: acknowledged, ${m} log row(s), ${p} patient(s)`);
    }
    if (m > 1 || p > 1) {
      duplicated++;
      if (problems.length < 5) problems.push(`${item.key}: ${m} log rows, ${p} patients`);
    }
    // Half-applied: the log says processed but the patient is missing, or the reverse.
    if ((m > 0) !== (p > 0)) {
      halfApplied++;
      if (problems.length < 5) problems.push(`${item.key}: half-applied (${m} log row(s), ${p} patient(s))`);
    }
  }
  const unacknowledged = ledger.items.filter((i) => !i.acknowledged).length;
  check(report, `${label}: every acknowledged HL7 message is stored once and applied whole`, lost === 0 && duplicated === 0 && halfApplied === 0, problems.join('; ') || `${ledger.acknowledged} acknowledged, ${found} found`);
  check(report, `${label}: every HL7 message acknowledged after the senders' retries`, unacknowledged === 0, `${unacknowledged} never acknowledged`);
  return { item: `${label} HL7 v2 messages (MLLP)`, sent: ledger.sent, acknowledged: ledger.acknowledged, found, lost, duplicated };
}

export async function checkFhir(report: ScenarioReport, sql: pg.Pool, siteId: string, ledger: Ledger<FhirItem>, port: number, apiKey: string, label: string): Promise<Tally> {
  let lost = 0;
  let duplicated = 0;
  let found = 0;
  const problems: string[] = [];
  const patientsByIdentifier = await patientCountsByIdentifier(sql, siteId);
  const verifyItem = async (item: Ledger<FhirItem>['items'][number]) => {
    const copies = patientsByIdentifier.get(item.data.identifier) ?? 0;
    if (copies > 0) found++;
    if (copies > 1) {
      duplicated++;
      if (problems.length < 5) problems.push(`${item.key}: ${copies} copies`);
    }
    if (!item.acknowledged) return;
    const read = item.receipt ? await http({ port, path: `/fhir/Patient/${item.receipt}`, headers: { 'x-api-key': apiKey } }).catch(() => undefined) : undefined;
    const intact = read?.status === 200 && read.body.includes(item.data.identifier);
    if (!intact || copies === 0) {
      lost++;
      if (problems.length < 5) problems.push(`${item.key}: acknowledged as ${item.receipt}, read back ${read?.status ?? 'failed'}, ${copies} row(s)`);
    }
  };
  // Read back through the API a few at a time: tens of thousands one after another took minutes.
  const queue = [...ledger.items];
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let item = queue.shift(); item; item = queue.shift()) await verifyItem(item);
  }));
  const unacknowledged = ledger.items.filter((i) => !i.acknowledged).length;
  check(report, `${label}: every acknowledged FHIR create is readable, intact and single`, lost === 0 && duplicated === 0, problems.join('; ') || `${ledger.acknowledged} acknowledged, ${found} found`);
  check(report, `${label}: every FHIR create acknowledged after the writers' retries`, unacknowledged === 0, `${unacknowledged} never acknowledged`);
  return { item: `${label} FHIR Patient creates`, sent: ledger.sent, acknowledged: ledger.acknowledged, found, lost, duplicated };
}

/**
 * `storage`: the DICOM storage folder (CG_DICOM_STORAGE_DIR, by default the data directory's
 * dicom folder), shared by every node; or each node's, when nodes keep their own: a file is then
 * looked for in each.
 */
export async function checkDicom(report: ScenarioReport, sql: pg.Pool, siteId: string, storage: string | string[], ledger: Ledger<GeneratedInstance>, label: string): Promise<Tally> {
  const roots = typeof storage === 'string' ? [storage] : storage;
  let lost = 0;
  let duplicated = 0;
  let found = 0;
  const problems: string[] = [];
  for (const item of ledger.items) {
    const rows = await sql.query('SELECT storage_path, sha256 FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2', [siteId, item.data.sopInstanceUid]);
    if (rows.rowCount! > 1) duplicated++;
    const row = rows.rows[0] as { storage_path: string; sha256: string } | undefined;
    let intact = false;
    if (row) {
      const path = roots.map((root) => resolveStoredInstance(root, row.storage_path)).find((candidate) => existsSync(candidate)) ?? resolveStoredInstance(roots[0]!, row.storage_path);
      intact = existsSync(path) && datasetSha256(readFileSync(path)) === item.data.datasetSha256 && row.sha256 === item.data.datasetSha256;
      if (intact) found++;
      else if (problems.length < 5) problems.push(`${item.key}: indexed but the file is ${existsSync(path) ? 'different from what was sent' : 'missing'}`);
    }
    if (item.acknowledged && !intact) {
      lost++;
      if (!row && problems.length < 5) problems.push(`${item.key}: acknowledged but not indexed`);
    }
  }
  const unacknowledged = ledger.items.filter((i) => !i.acknowledged).length;
  check(report, `${label}: every acknowledged DICOM instance is indexed once and its file hash matches`, lost === 0 && duplicated === 0, problems.join('; ') || `${ledger.acknowledged} acknowledged, ${found} found intact`);
  check(report, `${label}: every DICOM instance acknowledged after the senders' retries`, unacknowledged === 0, `${unacknowledged} never acknowledged`);
  return { item: `${label} DICOM instances (C-STORE)`, sent: ledger.sent, acknowledged: ledger.acknowledged, found, lost, duplicated };
}

/**
 * Counts per key in one query: the checks look every item up in these maps instead of one query
 * an item (the identifier look-ups were scans of the site's resources, minutes for a long run).
 */
async function countsBy(sql: pg.Pool, text: string, siteId: string): Promise<Map<string, number>> {
  const { rows } = await sql.query<{ key: string; n: number }>(text, [siteId]);
  return new Map(rows.map((row) => [row.key, row.n]));
}

/** How many Patient resources of the site carry each identifier value (any system). */
function patientCountsByIdentifier(sql: pg.Pool, siteId: string): Promise<Map<string, number>> {
  return countsBy(
    sql,
    `SELECT identifier->>'value' AS key, count(DISTINCT r.id)::int AS n
       FROM clinical_resource r
      CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(r.content->'identifier') = 'array' THEN r.content->'identifier' ELSE '[]'::jsonb END) AS identifier
      WHERE r.site_id = $1 AND r.resource_type = 'Patient' AND identifier->>'value' IS NOT NULL
      GROUP BY 1`,
    siteId,
  );
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Temporary DICOM files holding a transfer (under the storage folder's tmp, per node and worker):
 * those with content. While it runs, the gateway keeps a few empty ones ready for each site that
 * stored in the last seconds (spares), which hold none.
 */
export function transferFilesIn(storageDir: string): string[] {
  return listFiles(join(storageDir, 'tmp')).filter((file) => existsSync(file) && statSync(file).size > 0);
}

/**
 * No stray files (every stored file indexed, no temporary file left) and no orphan rows.
 * `storage` as for checkDicom: a stored file may be in any of the folders, and in one only.
 */
export async function checkNoOrphans(report: ScenarioReport, sql: pg.Pool, storage: string | string[], label: string): Promise<void> {
  const roots = typeof storage === 'string' ? [storage] : storage;
  const left = () => roots.flatMap((root) => transferFilesIn(root).map((f) => relative(root, f)));
  // Temporary names go asynchronously: after a commit (not awaited), and a name kept while a
  // commit's outcome was unknown once a sweep of its worker, at most a second later, finds it indexed.
  let temporary = left();
  for (const deadline = Date.now() + 5_000; temporary.length > 0 && Date.now() < deadline; temporary = left()) await sleep(250);
  check(report, `${label}: no temporary DICOM file left behind`, temporary.length === 0, temporary.length ? `${temporary.length} left: ${temporary.slice(0, 3).join(', ')}` : 'no transfer in the storage tmp folder');
  const stored = roots.flatMap((root) => listFiles(root).filter((f) => !f.startsWith(join(root, 'tmp'))).map((f) => relative(root, f)));
  const indexed = new Set(((await sql.query('SELECT storage_path FROM imaging_instance')).rows as { storage_path: string }[]).map((r) => canonicalStoragePath(r.storage_path)));
  const stray = stored.filter((f, index) => !indexed.has(f) || stored.indexOf(f) !== index);
  check(report, `${label}: every stored DICOM file is indexed (no stray file)`, stray.length === 0, stray.length ? `${stray.length} stray or stored twice: ${stray.slice(0, 3).join(', ')}` : `${stored.length} files, all indexed`);
  const present = (p: string) => roots.some((root) => existsSync(resolveStoredInstance(root, p)) && statSync(resolveStoredInstance(root, p)).size > 0);
  const missing = [...indexed].filter((p) => !present(p));
  check(report, `${label}: every indexed DICOM instance has its file`, missing.length === 0, missing.length ? `${missing.length} missing: ${missing.slice(0, 3).join(', ')}` : `${indexed.size} indexed`);
  const orphanQueries: [string, string][] = [
    ['series without instances', 'SELECT count(*)::int AS n FROM imaging_series s WHERE NOT EXISTS (SELECT 1 FROM imaging_instance i WHERE i.site_id = s.site_id AND i.series_instance_uid = s.series_instance_uid)'],
    ['studies without series', 'SELECT count(*)::int AS n FROM imaging_study s WHERE NOT EXISTS (SELECT 1 FROM imaging_series r WHERE r.site_id = s.site_id AND r.study_instance_uid = s.study_instance_uid) AND NOT EXISTS (SELECT 1 FROM imaging_procedure_step p WHERE p.site_id = s.site_id AND p.study_instance_uid = s.study_instance_uid)'],
    ['resources without their current version', 'SELECT count(*)::int AS n FROM clinical_resource r WHERE NOT EXISTS (SELECT 1 FROM clinical_resource_version v WHERE v.site_id = r.site_id AND v.resource_type = r.resource_type AND v.id = r.id AND v.version_id = r.version_id)'],
    ['search tokens without their resource', 'SELECT count(*)::int AS n FROM clinical_resource_token t WHERE NOT EXISTS (SELECT 1 FROM clinical_resource r WHERE r.site_id = t.site_id AND r.resource_type = t.resource_type AND r.id = t.resource_id)'],
  ];
  for (const [name, query] of orphanQueries) {
    try {
      const n = (await sql.query(query)).rows[0].n as number;
      check(report, `${label}: no ${name}`, n === 0, `${n} found`);
    } catch (error) {
      check(report, `${label}: no ${name}`, false, `query failed (schema changed?): ${(error as Error).message}`);
    }
  }
}
