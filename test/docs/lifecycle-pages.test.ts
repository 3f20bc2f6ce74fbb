import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { runCliJson } from '../support/cli.ts';
import { runDocumentedSteps, startDocumentedService, type DocumentedService } from '../support/documented-commands.ts';
import { readDocument } from '../support/markdown.ts';

// docs/backup-and-restore.md and docs/upgrades.md, run as a reader runs them
// (test/support/documented-commands.ts): a backup of a running service on the embedded database,
// restored into a new data folder.
let documented: DocumentedService;
const restoredDirs: string[] = [];

before(async () => {
  documented = await startDocumentedService();
  await runCliJson(['site', 'create', '--name', 'Lakeside', '--ae-title', 'LAKESIDE'], { CG_DATA_DIR: documented.dataDir });
});
after(async () => {
  await documented?.service.stop();
  if (documented) rmSync(documented.dataDir, { recursive: true, force: true });
  for (const dir of restoredDirs) rmSync(dir, { recursive: true, force: true });
});

test('docs/backup-and-restore.md: a backup of the running service restores into a new data folder', async () => {
  const values: Record<string, string> = {};
  let backedUpSites = 0;
  await runDocumentedSteps(
    readDocument('docs/backup-and-restore.md'),
    documented,
    [
      {
        name: 'backup while the service runs',
        command: /clinical-gateway backup --to/,
        check({ stdout }) {
          const summary = JSON.parse(stdout) as { counts: { site: number }; dicom_missing: number };
          backedUpSites = summary.counts.site;
          assert.ok(backedUpSites >= 1);
          assert.equal(summary.dicom_missing, 0);
        },
      },
      {
        name: 'restore into a new data folder',
        command: /clinical-gateway restore --from/,
        check({ stdout }) {
          const summary = JSON.parse(stdout) as { counts: { site: number }; migrations_applied: string[] };
          assert.equal(summary.counts.site, backedUpSites);
          assert.deepEqual(summary.migrations_applied, []);
        },
      },
    ],
    { values },
  );
  if (values.CG_DATA_DIR) restoredDirs.push(values.CG_DATA_DIR);
  if (values.BACKUP) restoredDirs.push(values.BACKUP);
  const sites = await runCliJson<{ name: string }[]>(['site', 'list'], { CG_DATA_DIR: values.CG_DATA_DIR });
  assert.ok(sites.some((site) => site.name === 'Lakeside'), 'the restored data folder has the site');
});

test('docs/upgrades.md: its one shell block is the upgrade of a node under systemd, not run here', async () => {
  await runDocumentedSteps(readDocument('docs/upgrades.md'), documented, [], { notRun: [/systemctl stop clinical-gateway/] });
});
