import { createSite, listSites } from '../../domain/sites/sites.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export async function siteCommand({ action, options, json }: CommandContext): Promise<void> {
  if (action === 'create') {
    const site = await withDatabase((db) =>
      createSite(
        db,
        {
          name: options.required('name'),
          aeTitle: options.required('ae-title'),
          patientPutCreates: options.flag('patient-put-creates'),
          mllpAllowAnyIp: options.flag('allow-any-ip'),
        },
        { kind: 'operator' },
      ),
    );
    const out = { id: site.id, name: site.name, ae_title: site.aeTitle, patient_put_creates: site.policies.patientPutCreates, mllp_allow_any_ip: site.policies.mllpAllowAnyIp };
    print(out, json, () => formatRecord(out));
    return;
  }
  const sites = await withDatabase((db) => listSites(db));
  const rows = sites.map((site) => ({ id: site.id, name: site.name, ae_title: site.aeTitle, patient_put_creates: site.policies.patientPutCreates, mllp_allow_any_ip: site.policies.mllpAllowAnyIp }));
  print(rows, json, () => formatTable(rows, ['id', 'name', 'ae_title', 'patient_put_creates', 'mllp_allow_any_ip']));
}
