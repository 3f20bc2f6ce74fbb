import { siteJson } from '../../domain/sites/site-json.ts';
import { createSite, listSites, resolveSite, updateSite } from '../../domain/sites/sites.ts';
import { readStorageUsage, refreshStorageUsage, storageUsageView } from '../../domain/retention/storage-usage.ts';
import { UsageError } from '../cli-error.ts';
import { offboardingCommand, siteExportCommand } from './site-offboarding.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { integerOption, switchOf } from '../switches.ts';
import { withDatabase } from '../with-database.ts';

/** A whole number, or "" (null: for ever, or the service-wide value). */
function optionalRetention(value: string | undefined, explanation: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') return null;
  if (!/^\d{1,5}$/.test(value.trim())) throw new UsageError(explanation);
  return Number(value.trim());
}

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
    const bodyRetention = optionalRetention(options.optional('message-body-retention-days'), '--message-body-retention-days must be a whole number of days (1 to 36500), or "" to keep bodies for ever');
    const exportRetention = optionalRetention(options.optional('export-retention-hours'), '--export-retention-hours must be a whole number of hours (1 to 8760), or "" for the service-wide CG_EXPORT_RETENTION_HOURS');
    const refusalRetention = optionalRetention(options.optional('refused-traffic-retention-days'), '--refused-traffic-retention-days must be a whole number of days (1 to 3650), or "" for the service default (30)');
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
            ...(bodyRetention !== undefined ? { messageBodyRetentionDays: bodyRetention } : {}),
            ...(exportRetention !== undefined ? { exportRetentionHours: exportRetention } : {}),
            ...(refusalRetention !== undefined ? { refusedTrafficRetentionDays: refusalRetention } : {}),
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
  if (action === 'usage') {
    const target = positionals[0];
    if (!target) throw new UsageError('site usage needs the site: site usage SITE [--refresh]');
    const refresh = options.flag('refresh');
    const usage = await withDatabase(async (db) => {
      const site = await resolveSite(db, target);
      if (refresh) await refreshStorageUsage(db);
      return storageUsageView(await readStorageUsage(db, site.id));
    });
    print(usage, json, () => formatUsage(usage));
    return;
  }
  if (action === 'export') {
    await siteExportCommand(positionals[0], options, json);
    return;
  }
  if (action === 'offboard' || action === 'purge') {
    await offboardingCommand(action, positionals[0], options, json);
    return;
  }
  const rows = (await withDatabase((db) => listSites(db))).map(siteJson);
  print(rows, json, () => formatTable(rows, ['id', 'name', 'ae_title', 'patient_put_creates', 'mllp_allow_any_ip', 'time_zone']));
}

function formatUsage(usage: ReturnType<typeof storageUsageView>): string {
  const when = usage.computed_at ? `computed ${usage.computed_at.toISOString()}` : 'not computed yet: the service computes it hourly, or run site usage SITE --refresh';
  const summary = formatRecord({ database_rows: usage.database_rows, database_bytes: usage.database_bytes, dicom_instances: usage.dicom_instances, dicom_bytes: usage.dicom_bytes, figures: when });
  return usage.items.length > 0 ? `${summary}\n\n${formatTable(usage.items.map((item) => ({ ...item })), ['item', 'rows', 'bytes'])}` : summary;
}
