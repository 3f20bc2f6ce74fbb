import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { storescu } from '../clients/storescu.ts';
import { generateInstance } from '../samples/dicom-instances.ts';
import { createEnvironment, requireSurfaces } from '../harness/environment.ts';
import { provisionSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';
import { sleep, waitUntil } from '../harness/timing.ts';
import { checkNoOrphans } from '../verify/data-check.ts';

/**
 * Issue 9 point 1, the narrowest window of all: a crash after the DICOM file has been linked to
 * its final name and before the index transaction commits. Random kills rarely land there, so it
 * is opened on purpose: a deferred constraint trigger, added to this scenario's own database,
 * holds the COMMIT of the index rows; once the file is in place, the service is killed and its
 * database session terminated, exactly what a power cut does to both. Start-up recovery must then
 * leave no file that the index does not know (the sender was never told Success, and a modality
 * that gives up on the instance must not leave an unindexed copy behind for ever).
 */
export const commitWindow: Scenario = {
  id: 'commit-window',
  title: '1b. Crash between the DICOM file link into place and the index commit',
  budgetMs: 4 * 60_000,
  async run(context, report) {
    const env = await createEnvironment(context, 'commit-window');
    try {
      const site = await provisionSite(env.gateway, 'window');
      await env.gateway.start();
      if (requireSurfaces(report, env.gateway, ['dicom']).length) return;
      await env.sql.query(`
        CREATE FUNCTION faults_hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(120); RETURN NULL; END $$;
        CREATE CONSTRAINT TRIGGER faults_hold_commit AFTER INSERT ON imaging_instance
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION faults_hold_commit();`);
      mkdirSync(join(context.workDir, 'instances'), { recursive: true });
      const instance = generateInstance(join(context.workDir, 'instances'), { patientId: 'WINDOW-1' });
      const sending = storescu({ port: env.gateway.ports.dicom, calledAe: site.aeTitle, files: [instance.path], timeoutSeconds: 150 });
      const siteDir = join(env.gateway.dataDir, 'dicom', site.id);
      const findFile = () => (existsSync(siteDir) ? readdirSync(siteDir, { recursive: true }).map(String).find((f) => f.endsWith(`${instance.sopInstanceUid}.dcm`)) : undefined);
      const inPlace = await waitUntil(90_000, () => findFile() !== undefined, 50);
      check(report, 'the file reaches its final place while the commit is held', inPlace, inPlace ? `dicom/${site.id}/${findFile()}` : 'never appeared');
      await env.gateway.kill();
      // The power cut takes the database session with it: the held transaction never commits.
      await sleep(200);
      await env.sql.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'clinical-gateway'");
      await env.sql.query('DROP TRIGGER faults_hold_commit ON imaging_instance; DROP FUNCTION faults_hold_commit()');
      const answer = await sending;
      check(report, 'the sender was not told Success', answer.outcomes[0]?.acknowledged !== true, answer.outcomes[0]?.status ?? 'no response');
      const indexed = await env.sql.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2', [site.id, instance.sopInstanceUid]);
      check(report, 'the instance is not indexed (its transaction never committed)', indexed.rows[0].n === 0, `${indexed.rows[0].n} row(s)`);
      await env.gateway.start();
      const left = findFile();
      report.injected = 'COMMIT of the index rows held by a deferred trigger; SIGKILL of the service and termination of its database session once the file was in its final place; restart';
      check(report, 'after start-up recovery no unindexed copy of the instance is left', left === undefined, left ? `stray file dicom/${site.id}/${left}` : 'none');
      await checkNoOrphans(report, env.sql, join(env.gateway.dataDir, 'dicom'), 'commit window');
      report.tallies.push({ item: 'DICOM instance caught in the commit window', sent: 1, acknowledged: answer.outcomes[0]?.acknowledged ? 1 : 0, found: indexed.rows[0].n, lost: 0, duplicated: 0 });
      if (left) report.notes.push(`Stray file: ${relative(env.gateway.dataDir, join(siteDir, left))}. src/dicom/services/c-store.ts links the file to its final name inside the index transaction, before COMMIT, and keeps its temporary name until after; src/storage/dicom/layout.ts prepare() must remove the final name of every temporary file that has one unless the index points there.`);
    } finally {
      await env.close();
    }
  },
};
