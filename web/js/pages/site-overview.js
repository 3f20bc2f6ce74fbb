// @ts-check
import { get, patch } from '../api.js';
import { formatDateTime, h } from '../dom.js';
import { checkbox, field, form } from '../forms.js';
import { announce, confirmDialog, section } from '../widgets.js';
import { aeTitleHint, siteTimeZoneHint } from './sites.js';
import { timeZoneField, timeZoneProblem } from '../time-zone-field.js';
import { storageUsageSection } from './site-usage.js';

/** @param {number | null} value a setting that may be unset, as the text of its field */
const optionalNumber = (value) => (value === null ? '' : String(value));
/** @param {unknown} text a field's value: empty is null (the setting unset) */
const numberOrNull = (text) => (String(text).trim() === '' ? null : Number(text));

/**
 * A site's start page for admins: its settings, and what remains to set it up.
 * @param {import('../routes.js').PageContext} context
 */
export async function siteOverviewPage(context) {
  const site = await get(`/api/sites/${context.site.id}`);
  const base = `#/sites/${site.id}`;
  const [users, keys, clients, usage] = await Promise.all([
    get(`/api/sites/${site.id}/users`),
    get(`/api/sites/${site.id}/keys`),
    get(`/api/sites/${site.id}/clients`),
    get(`/api/sites/${site.id}/usage`),
  ]);
  const step = (/** @type {boolean} */ done, /** @type {string} */ text, /** @type {string} */ href, /** @type {string} */ link) =>
    h('li', { class: done ? 'done' : 'todo' }, h('span', { class: 'visually-hidden' }, done ? 'Done: ' : 'To do: '), text, ' ', h('a', { href }, link));
  const checklist = h(
    'ol',
    { class: 'checklist' },
    step(users.users.length > 0, `Users: ${users.users.length}.`, `${base}/users`, 'Add clinicians and admins'),
    step(keys.keys.some((/** @type {any} */ k) => !k.revoked_at), `API keys: ${keys.keys.filter((/** @type {any} */ k) => !k.revoked_at).length} active.`, `${base}/keys`, 'Create a key for each FHIR or HL7 HTTP application'),
    step(clients.clients.length > 0, `Integration clients: ${clients.clients.length}.`, `${base}/clients`, 'Register each MLLP sender'),
    step(true, `Modalities send to AE title ${site.ae_title}.`, `${base}/connectivity`, 'See the DICOM settings'),
  );
  const serviceAdmin = context.user.role === 'service-admin';
  const settings = form({
    label: 'Site settings',
    submit: 'Save settings',
    children: [
      field({ label: 'Name', name: 'name', required: true, value: site.name, attrs: { maxlength: 200 } }),
      field({ label: 'DICOM AE title', name: 'ae_title', required: true, value: site.ae_title, hint: aeTitleHint, attrs: { maxlength: 16 } }),
      checkbox({ label: 'FHIR PUT may create patients', name: 'patient_put_creates', checked: site.patient_put_creates, hint: 'PUT /fhir/Patient/{id} with a body without id creates a patient.' }),
      // Whose feeds a site could receive is the service administrator's decision.
      serviceAdmin
        ? checkbox({ label: 'Integration clients may allow any IP (*)', name: 'mllp_allow_any_ip', checked: site.mllp_allow_any_ip, hint: 'Leave off unless the network in front of the service restricts senders.' })
        : h('p', { class: 'hint' }, `Integration clients ${site.mllp_allow_any_ip ? 'may' : 'may not'} allow any IP (*): a service administrator sets this.`),
      timeZoneField({ label: 'Time zone', value: site.time_zone, hint: siteTimeZoneHint }),
      // How long the record of reads is kept must not be the readers' own choice.
      serviceAdmin
        ? field({ label: 'Data access log retention (days)', name: 'data_access_retention_days', type: 'number', required: true, value: String(site.data_access_retention_days), hint: 'Who read which patient\'s data is kept this long (2190 days: six years).', attrs: { min: 1, max: 36500, step: 1 } })
        : h('p', { class: 'hint' }, `The data access log is kept ${site.data_access_retention_days} days: a service administrator sets this.`),
      field({ label: 'Message body retention (days)', name: 'message_body_retention_days', type: 'number', value: optionalNumber(site.message_body_retention_days), hint: 'Raw HL7 message bodies older than this are removed from the message log; each entry and its acknowledgement stay. Empty: kept for ever.', attrs: { min: 1, max: 36500, step: 1 } }),
      field({ label: 'Export file retention (hours)', name: 'export_retention_hours', type: 'number', value: optionalNumber(site.export_retention_hours), hint: 'Bulk Data export files are deleted this long after their export finished. Empty: the service-wide setting (CG_EXPORT_RETENTION_HOURS).', attrs: { min: 1, max: 8760, step: 1 } }),
      field({ label: 'Refused traffic retention (days)', name: 'refused_traffic_retention_days', type: 'number', value: optionalNumber(site.refused_traffic_retention_days), hint: 'Records of connections and requests the service refused for this site are kept this long. Empty: the service default, 30 days.', attrs: { min: 1, max: 3650, step: 1 } }),
    ],
    action: async (values) => {
      const problem = timeZoneProblem(values.time_zone);
      if (problem) throw { fields: [{ field: 'time_zone', message: problem }] };
      const newAeTitle = String(values.ae_title).trim();
      if (newAeTitle !== site.ae_title && !(await confirmDialog({
        title: 'Change the DICOM AE title',
        message: `Modalities and PACS that send to ${site.ae_title} will be refused (unknown called AE title) once you save, until each is reconfigured to send to ${newAeTitle || 'the new title'}. Change it?`,
        confirm: 'Change the AE title',
        danger: true,
      }))) return;
      await patch(`/api/sites/${site.id}`, {
        name: values.name,
        ae_title: values.ae_title,
        patient_put_creates: values.patient_put_creates,
        ...(serviceAdmin ? { mllp_allow_any_ip: values.mllp_allow_any_ip, data_access_retention_days: Number(values.data_access_retention_days) } : {}),
        time_zone: values.time_zone.trim() || null,
        message_body_retention_days: numberOrNull(values.message_body_retention_days),
        export_retention_hours: numberOrNull(values.export_retention_hours),
        refused_traffic_retention_days: numberOrNull(values.refused_traffic_retention_days),
      });
      context.forgetSites();
      announce('Site settings saved.');
      context.refresh();
    },
  });
  return {
    title: 'Overview',
    body: [
      h('h1', null, site.name),
      h('p', { class: 'meta' }, 'Created ', formatDateTime(site.created_at), ' · last changed ', formatDateTime(site.updated_at)),
      offboardingWarning(site),
      section('Setting up', checklist),
      section('Settings', settings),
      storageUsageSection(usage),
    ],
  };
}

/**
 * A site marked for offboarding still takes traffic until its purge: everyone who opens it is
 * told, so that no one keeps sending or setting up what will be removed.
 * @param {any} site
 */
export function offboardingWarning(site) {
  if (!site.purge_after) return null;
  return h(
    'p',
    { class: 'warning', role: 'note', 'data-offboarding': '' },
    h('strong', null, 'Marked for offboarding. '),
    'Marked ',
    formatDateTime(site.offboarding_marked_at),
    '; every record and file of this site is purged after ',
    formatDateTime(site.purge_after),
    '. A service administrator can cancel it with ',
    h('code', null, `clinical-gateway site offboard ${site.name} --cancel`),
    '.',
  );
}
