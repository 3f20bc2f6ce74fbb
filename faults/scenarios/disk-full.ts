import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { storescu } from '../clients/storescu.ts';
import { generateInstance, type GeneratedInstance } from '../samples/dicom-instances.ts';
import { createEnvironment, requireSurfaces } from '../harness/environment.ts';
import { provisionSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';
import { Ledger } from '../load/ledger.ts';
import { checkDicom, checkNoOrphans, transferFilesIn } from '../verify/data-check.ts';

const filesystemBytes = 4 * 1024 * 1024;
/** Room left after the filler: about fifteen MR_small instances (10 kB each) fit, the rest do not. */
const roomLeft = 160 * 1024;

/**
 * Issue 9 point 3. The DICOM storage (CG_DATA_DIR/dicom) is a 4 MiB tmpfs, nearly filled by a
 * filler file; a batch of instances then runs into ENOSPC. PS3.4 B.2.3: the SCP answers
 * "Refused: Out of Resources" (A7xx), so the modality keeps the instance and sends it again; the
 * failed instances must leave no index row and no file; once space is freed, the same instances
 * are accepted.
 */
export const diskFull: Scenario = {
  id: 'disk',
  title: '3. Disk full (DICOM storage on a 4 MiB tmpfs)',
  budgetMs: 3 * 60_000,
  async run(context, report) {
    const dataDir = join(context.workDir, 'data');
    const dicomDir = join(dataDir, 'dicom');
    mkdirSync(dicomDir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${filesystemBytes},mode=0755`, 'tmpfs', dicomDir]);
    // The free-space floors (CG_DICOM_MIN_FREE_DISK, 1 GiB, and the service-wide CG_MIN_FREE_DISK,
    // 256 MiB) are measured in the DICOM storage folder, here the 4 MiB tmpfs: they would refuse
    // every store before the disk is full. What is tested is the disk running out under a
    // transfer, so both floors are off.
    const env = await createEnvironment(context, 'disk', { dataDir, env: { CG_DICOM_MIN_FREE_DISK: '0', CG_MIN_FREE_DISK: '0' } });
    try {
      const site = await provisionSite(env.gateway, 'disk');
      await env.gateway.start();
      if (requireSurfaces(report, env.gateway, ['dicom']).length) return;
      const free = () => statfsSync(dicomDir).bavail * statfsSync(dicomDir).bsize;
      const filler = join(dicomDir, 'filler.bin');
      writeFileSync(filler, Buffer.alloc(Math.max(0, free() - roomLeft)));
      const instancesDir = join(context.workDir, 'instances');
      mkdirSync(instancesDir, { recursive: true });
      const count = 30;
      const ledger = new Ledger<GeneratedInstance>((i) => {
        const instance = generateInstance(instancesDir, { patientId: `DISK-${i}` });
        return { key: instance.sopInstanceUid, data: instance };
      });
      const items = Array.from({ length: count }, () => ledger.take(true)!);
      const first = await storescu({ port: env.gateway.ports.dicom, calledAe: site.aeTitle, files: items.map((i) => i.data.path) });
      first.outcomes.forEach((outcome, index) => {
        const status = outcome.status ?? 'no response';
        // storescu ends the association after a refusal; the files after it get no response at all.
        const verdict = outcome.acknowledged ? 'ack' : outcome.status === undefined ? 'no-answer' : /resources|A7/i.test(status) ? 'retry-later' : 'permanent';
        ledger.settle(items[index]!, { verdict, detail: status });
      });
      const refused = items.filter((i) => !i.acknowledged);
      const answeredRefusals = refused.filter((i) => i.answers.at(-1)!.verdict !== 'no-answer');
      if (refused.length > answeredRefusals.length) report.notes.push(`storescu releases the association after the first refusal, so ${refused.length - answeredRefusals.length} instance(s) of the batch were not sent in the first round; they are sent with the retry.`);
      const statuses = [...new Set(refused.map((i) => i.answers.at(-1)!.detail))];
      report.injected = `DICOM storage on a ${filesystemBytes / 1024 / 1024} MiB tmpfs filled to ${Math.round(roomLeft / 1024)} KiB free; ${count} MR instances (10 KiB) in one association; then the filler removed and the refused instances sent again`;
      check(report, 'the full disk is reached (some instances refused)', refused.length > 0 && refused.length < count, `${count - refused.length} stored, ${refused.length} refused`);
      check(report, 'every refusal is "out of resources" (A7xx), never a permanent failure', answeredRefusals.length > 0 && answeredRefusals.every((i) => i.answers.at(-1)!.verdict === 'retry-later'), statuses.join('; ') || 'none refused');
      const indexedRefused = await env.sql.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = ANY($2)', [site.id, refused.map((i) => i.key)]);
      check(report, 'nothing is indexed for the refused instances', indexedRefused.rows[0].n === 0, `${indexedRefused.rows[0].n} index rows`);
      const leftInTmp = transferFilesIn(dicomDir);
      check(report, 'no temporary file is left by the failed transfers (without a restart)', leftInTmp.length === 0, leftInTmp.length ? leftInTmp.slice(0, 3).join(', ') : 'no transfer in dicom/tmp');
      check(report, 'the service keeps running on a full disk', env.gateway.running, env.gateway.unexpectedExits.join('; ') || `pid ${env.gateway.pid}`);

      rmSync(filler);
      const retried = refused.map((i) => ledger.take(false)!).filter(Boolean);
      const second = await storescu({ port: env.gateway.ports.dicom, calledAe: site.aeTitle, files: retried.map((i) => i.data.path) });
      second.outcomes.forEach((outcome, index) => {
        ledger.settle(retried[index]!, { verdict: outcome.acknowledged ? 'ack' : 'permanent', detail: outcome.status ?? 'no response' });
      });
      check(report, 'after space is freed, the refused instances are accepted', retried.every((i) => i.acknowledged), `${retried.filter((i) => i.acknowledged).length}/${retried.length} accepted`);
      report.tallies.push(await checkDicom(report, env.sql, site.id, dicomDir, ledger, 'disk'));
      await checkNoOrphans(report, env.sql, dicomDir, 'disk');
      report.figures['instances refused while full'] = refused.length;
      report.figures['refusal statuses'] = statuses.join('; ');
    } finally {
      await env.close();
      try {
        execFileSync('umount', ['-l', dicomDir]);
      } catch {
        // not mounted
      }
    }
  },
};
