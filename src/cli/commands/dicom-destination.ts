import { createDicomDestination, deleteDicomDestination, listDicomDestinations, type DicomDestination } from '../../domain/imaging/dicom-destinations.ts';
import { resolveSite, siteContextFor } from '../../domain/sites/sites.ts';
import { UsageError } from '../cli-error.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

function present(destination: DicomDestination) {
  return { id: destination.id, site_id: destination.siteId, ae_title: destination.aeTitle, host: destination.host, port: destination.port };
}

export async function dicomDestinationCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'create') {
    const destination = await withDatabase(async (db) => {
      const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
      return db.transaction((tx) => createDicomDestination(tx, site, { aeTitle: options.required('ae-title'), host: options.required('host'), port: options.required('port') }));
    });
    const out = present(destination);
    print(out, json, () => formatRecord(out));
    return;
  }
  if (action === 'delete') {
    const target = positionals[0];
    if (!target) throw new UsageError('dicom-destination delete needs the destination: dicom-destination delete ID_OR_AE_TITLE --site SITE');
    const destination = await withDatabase(async (db) => {
      const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
      return db.transaction((tx) => deleteDicomDestination(tx, site, target));
    });
    const out = present(destination);
    print(out, json, () => `deleted ${out.ae_title} (${out.id})`);
    return;
  }
  const destinations = await withDatabase(async (db) => listDicomDestinations(db, siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' })));
  const rows = destinations.map(present);
  print(rows, json, () => formatTable(rows, ['id', 'ae_title', 'host', 'port']));
}
