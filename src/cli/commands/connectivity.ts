import { loadConfig } from '../../config/env.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

/**
 * connectivity show: what a modality of the site needs (the DICOM listener's public address and
 * the site's called AE title) and the MLLP port, as the admin app's Connectivity page shows them,
 * from this configuration (CG_DICOM_PUBLIC_*, the port variables).
 */
export async function connectivityCommand({ options, json }: CommandContext): Promise<void> {
  const config = loadConfig();
  const site = await withDatabase((db) => resolveSite(db, options.required('site')));
  const { host, port, ip } = config.dicomPublic;
  const out = {
    dicom: { host, port, ...(ip ? { ip } : {}), called_ae_title: site.aeTitle, listening: config.ports.dicom !== undefined },
    mllp: { port: config.ports.mllp ?? 0, listening: config.ports.mllp !== undefined },
  };
  print(out, json, () => formatRecord({ site: site.name, dicom_host: host, dicom_port: port, dicom_ip: ip, called_ae_title: site.aeTitle, mllp_port: out.mllp.port }));
}
