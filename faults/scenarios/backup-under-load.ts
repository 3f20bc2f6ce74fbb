import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { runCli } from '../../test/support/cli.ts';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { createEnvironment, createScenarioDatabase, requireSurfaces, type Environment } from '../harness/environment.ts';
import { GatewayProcess } from '../harness/gateway-process.ts';
import { provisionSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';
import { sleep } from '../harness/timing.ts';
import { Ledger } from '../load/ledger.ts';
import { MixedLoad } from '../load/mixed-load.ts';
import { checkDicom, checkFhir, checkHl7, checkNoOrphans } from '../verify/data-check.ts';

/**
 * Data lifecycle, backup and restore (docs/backup-and-restore.md). `backup` runs while MLLP
 * senders, DICOM associations and FHIR writers keep the service busy; the backup is restored into
 * a new database and a new data folder, a service is started there, and everything acknowledged
 * before the backup began must be in it (DICOM files byte for byte), with nothing stray. The
 * restored service must then take new traffic with the old credentials: the API key, the MLLP
 * client and the AE title.
 */
export const backupUnderLoad: Scenario = {
  id: 'backup',
  title: 'Backup under load, restore on a fresh node',
  budgetMs: 12 * 60_000,
  async run(context, report) {
    const env = await createEnvironment(context, 'backup');
    let restored: Environment | undefined;
    let load: MixedLoad | undefined;
    let afterRestore: MixedLoad | undefined;
    try {
      const site = await provisionSite(env.gateway, 'backup');
      await env.gateway.start();
      if (requireSurfaces(report, env.gateway, ['mllp', 'dicom', 'fhir']).length) return;
      load = new MixedLoad(env, site, context.workDir, `B${Date.now().toString(36)}`);
      load.start({ mllpSenders: 4, dicomAssociations: 2, fhirWriters: 8 });
      await sleep(Math.max(3_000, 15_000 * context.scale));

      // What the senders hold as acknowledged when the backup starts: all of it must be restored.
      const before = { hl7: acknowledgedNow(load.hl7), dicom: acknowledgedNow(load.dicom), fhir: acknowledgedNow(load.fhir) };
      const backupDir = join(context.workDir, 'backup');
      const t0 = Date.now();
      const backup = await runCli(['backup', '--to', backupDir, '--json'], env.gateway.env());
      const backupMs = Date.now() - t0;
      const acknowledgedDuringBackup = load.hl7.acknowledged + load.dicom.acknowledged + load.fhir.acknowledged - before.hl7.items.length - before.dicom.items.length - before.fhir.items.length;
      if (!check(report, 'backup under load succeeds', backup.status === 0, backup.status === 0 ? backup.stdout.replace(/\s+/g, ' ').slice(0, 300) : `exit ${backup.status}: ${backup.stderr}`)) return;
      await load.drain(60_000);
      await env.gateway.stop();
      report.injected = 'clinical-gateway backup while 4 MLLP senders, 2 DICOM associations and 8 FHIR writers run; restore into a new database and data folder; a service started on it';

      const databaseUrl = await createScenarioDatabase(context, 'restored');
      const gateway = await GatewayProcess.create({ dataDir: join(context.workDir, 'restored', 'data'), logDir: join(context.workDir, 'restored', 'logs'), databaseUrl });
      const restore = await runCli(['restore', '--from', backupDir, '--json'], gateway.env());
      if (!check(report, 'restore on a fresh node succeeds', restore.status === 0, restore.status === 0 ? '' : `exit ${restore.status}: ${restore.stderr}`)) return;
      const sql = new pg.Pool({ connectionString: databaseUrl, max: 4 });
      sql.on('error', () => {});
      restored = { gateway, databaseUrl, sql, close: async () => { await gateway.stop(); await sql.end().catch(() => {}); } };
      await gateway.start();
      const restoredStorage = join(gateway.dataDir, 'dicom');
      report.tallies.push(await checkHl7(report, sql, site.id, before.hl7, 'restored'));
      report.tallies.push(await checkDicom(report, sql, site.id, restoredStorage, before.dicom, 'restored'));
      report.tallies.push(await checkFhir(report, sql, site.id, before.fhir, gateway.ports.fhir, site.apiKey, 'restored'));
      await checkNoOrphans(report, sql, restoredStorage, 'restored');
      await checkByteExact(report, sql, site.id, before.dicom, join(env.gateway.dataDir, 'dicom'), restoredStorage);

      // The old API key, MLLP client and AE title, on the restored node.
      afterRestore = new MixedLoad(restored, site, join(context.workDir, 'after'), `R${Date.now().toString(36)}`);
      afterRestore.start({ mllpSenders: 1, dicomAssociations: 1, fhirWriters: 2 });
      await sleep(3_000);
      await afterRestore.drain(60_000);
      await afterRestore.verify(report, 'after restore', restoredStorage);

      report.figures['acknowledged before the backup began'] = before.hl7.items.length + before.dicom.items.length + before.fhir.items.length;
      report.figures['acknowledged while the backup ran'] = acknowledgedDuringBackup;
      report.figures['backup, ms (under load)'] = backupMs;
    } finally {
      load?.stop();
      afterRestore?.stop();
      await restored?.close();
      await env.close();
    }
  },
};

/** A ledger of the items acknowledged so far only (the same item objects). */
function acknowledgedNow<Data>(ledger: Ledger<Data>): Ledger<Data> {
  const copy = new Ledger<Data>(() => {
    throw new Error('a snapshot of a ledger makes no items');
  });
  copy.items.push(...ledger.items.filter((item) => item.acknowledged).map((item) => ({ ...item, answers: [...item.answers] })));
  return copy;
}

/** The restored file of each instance is the original file, byte for byte. */
async function checkByteExact(report: Parameters<Scenario['run']>[1], sql: pg.Pool, siteId: string, ledger: Ledger<{ sopInstanceUid: string }>, originalStorage: string, restoredStorage: string): Promise<void> {
  const differing: string[] = [];
  for (const item of ledger.items) {
    const row = (await sql.query('SELECT storage_path FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2', [siteId, item.data.sopInstanceUid])).rows[0] as { storage_path: string } | undefined;
    const original = row && resolveStoredInstance(originalStorage, row.storage_path);
    const copy = row && resolveStoredInstance(restoredStorage, row.storage_path);
    const same = original && copy && existsSync(original) && existsSync(copy) && sha256(readFileSync(original)) === sha256(readFileSync(copy));
    if (!same) differing.push(item.key);
  }
  check(report, 'restored: every DICOM file acknowledged before the backup is byte-exact (SHA-256 of the whole file)', differing.length === 0, differing.length ? `${differing.length} differ: ${differing.slice(0, 3).join(', ')}` : `${ledger.items.length} files`);
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
