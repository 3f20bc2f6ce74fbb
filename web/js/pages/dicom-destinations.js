// @ts-check
import { del, get, post } from '../api.js';
import { formatDateTime, h, replace } from '../dom.js';
import { describe, field, form } from '../forms.js';
import { announce, confirmDialog, emptyState, errorBox, section, table } from '../widgets.js';

/** @param {import('../routes.js').PageContext} context */
export async function dicomDestinationsPage(context) {
  const siteId = context.site.id;
  const { destinations } = await get(`/api/sites/${siteId}/dicom-destinations`);
  const notice = h('div', { class: 'notice-area' });
  const rows = destinations.map((/** @type {any} */ destination) => [
    h('code', null, destination.ae_title),
    destination.host,
    String(destination.port),
    formatDateTime(destination.created_at),
    h('button', { type: 'button', class: 'danger', onclick: async () => {
      const ok = await confirmDialog({ title: 'Remove destination', message: `Remove ${destination.ae_title}? A C-MOVE to it is refused from then on.`, confirm: 'Remove destination', danger: true });
      if (!ok) return;
      try {
        await del(`/api/sites/${siteId}/dicom-destinations/${destination.id}`);
        announce(`Destination ${destination.ae_title} removed.`);
        context.refresh();
      } catch (error) {
        replace(notice, errorBox(describe(error)));
      }
    } }, 'Remove'),
  ]);
  const create = form({
    label: 'Register a DICOM destination',
    submit: 'Register destination',
    children: [
      field({ label: 'AE title', name: 'ae_title', required: true, hint: 'The AE title a C-MOVE names as its destination (up to 16 characters).', attrs: { maxlength: 16 } }),
      field({ label: 'Host', name: 'host', required: true, hint: 'Where that AE listens: a host name or an IP address.', attrs: { maxlength: 253 } }),
      field({ label: 'Port', name: 'port', required: true, hint: 'Its DICOM port, for example 104 or 11112.', attrs: { inputmode: 'numeric', maxlength: 5 } }),
    ],
    action: async (values) => {
      await post(`/api/sites/${siteId}/dicom-destinations`, { ae_title: values.ae_title, host: values.host, port: values.port });
      announce(`Destination ${values.ae_title} registered.`);
      context.refresh();
    },
  });
  return {
    title: 'DICOM destinations',
    body: [
      h('h1', null, 'DICOM destinations'),
      h('p', { class: 'lead' }, 'The AE titles this site\'s studies may be sent to with C-MOVE, and where each listens. A C-MOVE to any other AE title is refused.'),
      notice,
      table({
        caption: 'DICOM destinations of the site',
        columns: ['AE title', 'Host', 'Port', 'Registered', 'Actions'],
        rows,
        empty: emptyState('No DICOM destinations yet', h('p', null, 'Register each PACS or workstation that retrieves studies from this site with C-MOVE.')),
      }),
      section('Register a DICOM destination', create),
    ],
  };
}
