// @ts-check
import { get } from '../api.js';
import { h } from '../dom.js';
import { copyButton, section } from '../widgets.js';

/** @param {import('../routes.js').PageContext} context */
export async function connectivityPage(context) {
  const { dicom, mllp } = await get(`/api/sites/${context.site.id}/connectivity`);
  const row = (/** @type {string} */ term, /** @type {string} */ value, /** @type {string} */ what) =>
    h('div', null, h('dt', null, term), h('dd', null, h('code', { class: 'copyable' }, value), ' ', copyButton(() => value, `Copy the ${what}`)));
  const snippet = `Called AE title: ${dicom.called_ae_title}\nHost: ${dicom.host}\nPort: ${dicom.port}${dicom.ip ? `\nIP address: ${dicom.ip}` : ''}`;
  const example = `storescu -aec ${dicom.called_ae_title} ${dicom.ip ?? dicom.host} ${dicom.port} image.dcm`;
  return {
    title: 'Connectivity',
    body: [
      h('h1', null, 'Connectivity'),
      section('DICOM (modalities)',
        dicom.listening ? null : h('p', { class: 'warning' }, 'The DICOM listener is not enabled on this deployment (CG_DICOM_PORT is blank).'),
        h('p', null, 'Enter these in the modality\'s DICOM node (storage destination) settings. The called AE title selects this site; the calling AE title can be anything.'),
        h('dl', { class: 'facts copy-list' },
          row('Called AE title', dicom.called_ae_title, 'AE title'),
          row('Host', dicom.host, 'host'),
          row('Port', String(dicom.port), 'port'),
          dicom.ip ? row('IP address', dicom.ip, 'IP address') : null,
        ),
        h('h3', null, 'All settings'),
        h('div', { class: 'copy-row' }, copyButton(() => snippet, 'Copy all DICOM settings')),
        h('pre', { class: 'raw' }, snippet),
        h('h3', null, 'Test from a workstation with DCMTK'),
        h('pre', { class: 'raw' }, example),
      ),
      section('HL7 v2 over MLLP (interface engines)',
        mllp.listening
          ? h('p', null, `Senders connect to port ${mllp.port} on the same host. They are admitted by their registered `, h('a', { href: `#/sites/${context.site.id}/clients` }, 'integration client'), ' (allowed IPs, MSH-3/MSH-4), not by a title.')
          : h('p', { class: 'warning' }, 'The MLLP listener is not enabled on this deployment (CG_MLLP_PORT is blank).'),
      ),
    ],
  };
}
