import { siteJson } from '../../domain/sites/site-json.ts';
import { createSite, listSites, resolveSite, updateSite } from '../../domain/sites/sites.ts';
import { UsageError } from '../cli-error.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { integerOption, switchOf } from '../switches.ts';
import { withDatabase } from '../with-database.ts';

export async function siteCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'create') {
    const timeZone = options.optional('time-zone');
    const site = await withDatabase((db) =>
      createSite(
        db,
        {
          name: options.required('name'),
          aeTitle: options.required('ae-title'),
          patientPutCreates: options.flag('patient-put-creates'),
          mllpAllowAnyIp: options.flag('allow-any-ip'),
          ...(timeZone !== undefined ? { timeZone } : {}),
        },
        { kind: 'operator' },
      ),
    );
    const out = siteJson(site);
    print(out, json, () => formatRecord(out));
    return;
  }
  if (action === 'update') {
    const target = positionals[0];
    if (!target) throw new UsageError('site update needs the site: site update SITE [--name N] [--ae-title AET] [--time-zone TZ]');
    const [name, aeTitle, timeZone] = [options.optional('name'), options.optional('ae-title'), options.optional('time-zone')];
    const patientPutCreates = switchOf(options, 'patient-put-creates', 'no-patient-put-creates');
    const mllpAllowAnyIp = switchOf(options, 'allow-any-ip', 'no-allow-any-ip');
    const dataAccessRetentionDays = integerOption(options, 'data-access-retention-days');
    const site = await withDatabase(async (db) => {
      const current = await resolveSite(db, target);
      return db.transaction((tx) =>
        updateSite(
          tx,
          current.id,
          {
            ...(name !== undefined ? { name } : {}),
            ...(aeTitle !== undefined ? { aeTitle } : {}),
            ...(timeZone !== undefined ? { timeZone } : {}),
            ...(patientPutCreates !== undefined ? { patientPutCreates } : {}),
            ...(mllpAllowAnyIp !== undefined ? { mllpAllowAnyIp } : {}),
            ...(dataAccessRetentionDays !== undefined ? { dataAccessRetentionDays } : {}),
          },
          { kind: 'operator' },
        ),
      );
    });
    const out = siteJson(site);
    print(out, json, () => formatRecord(out));
    return;
  }
  if (action === 'show') {
    const target = positionals[0];
    if (!target) throw new UsageError('site show needs the site: site show SITE');
    const out = siteJson(await withDatabase((db) => resolveSite(db, target)));
    print(out, json, () => formatRecord(out));
    return;
  }
  const rows = (await withDatabase((db) => listSites(db))).map(siteJson);
  print(rows, json, () => formatTable(rows, ['id', 'name', 'ae_title', 'patient_put_creates', 'mllp_allow_any_ip', 'time_zone']));
}
