// @ts-check
import { get, post } from '../api.js';
import { formatDateTime, h } from '../dom.js';
import { checkbox, field, form } from '../forms.js';
import { emptyState, section, table } from '../widgets.js';
import { timeZoneField, timeZoneProblem } from '../time-zone-field.js';

export const siteTimeZoneHint =
  'Where the site\'s systems send times without a UTC offset (HL7 v2 times, DICOM study date and time), they are read in this IANA zone, daylight saving included. An integration client may set its own. Blank: read as UTC.';

export const aeTitleHint = 'The called AE title its modalities use: 1 to 16 characters (letters, digits, spaces, punctuation; no backslash). Unique across sites.';

/** @param {import('../routes.js').PageContext} context */
export async function sitesPage(context) {
  const { sites } = await get('/api/sites');
  const create = form({
    label: 'Create a site',
    submit: 'Create site',
    children: [
      field({ label: 'Name', name: 'name', required: true, hint: 'How people know the site, e.g. "St Mary\'s Radiology". Unique.', attrs: { maxlength: 200 } }),
      field({ label: 'DICOM AE title', name: 'ae_title', required: true, hint: aeTitleHint, attrs: { maxlength: 16, autocapitalize: 'characters' } }),
      checkbox({ label: 'FHIR PUT may create patients', name: 'patient_put_creates', hint: 'PUT /fhir/Patient/{id} with a body without id creates a patient.' }),
      checkbox({ label: 'Integration clients may allow any IP (*)', name: 'mllp_allow_any_ip', hint: 'Leave off unless the network in front of the service restricts senders.' }),
      timeZoneField({ label: 'Time zone', hint: siteTimeZoneHint }),
    ],
    action: async (values) => {
      const problem = timeZoneProblem(values.time_zone);
      if (problem) throw { fields: [{ field: 'time_zone', message: problem }] };
      const site = await post('/api/sites', {
        name: values.name,
        ae_title: values.ae_title,
        patient_put_creates: values.patient_put_creates,
        mllp_allow_any_ip: values.mllp_allow_any_ip,
        time_zone: values.time_zone.trim() || null,
      });
      context.forgetSites();
      context.navigate(`/sites/${site.id}`);
    },
  });
  return {
    title: 'Sites',
    body: [
      h('h1', null, 'Sites'),
      table({
        caption: 'Sites',
        columns: ['Name', 'DICOM AE title', 'Time zone', 'Policies', 'Created'],
        rows: sites.map((/** @type {any} */ site) => [
          [
            h('a', { href: `#/sites/${site.id}` }, site.name),
            site.purge_after ? h('div', { class: 'hint', 'data-offboarding': '' }, h('strong', null, 'Marked for offboarding'), ': purged after ', formatDateTime(site.purge_after)) : null,
          ],
          h('code', null, site.ae_title),
          site.time_zone ?? 'UTC (not set)',
          policies(site),
          formatDateTime(site.created_at),
        ]),
        empty: emptyState('No sites yet', h('p', null, 'A site is a hospital, imaging centre or clinic whose data the gateway keeps apart from every other. Create the first one below; then add its users, API keys and integration clients.')),
      }),
      section('Create a site', create),
    ],
  };
}

/** @param {any} site */
export function policies(site) {
  const list = [site.patient_put_creates ? 'PUT creates patients' : null, site.mllp_allow_any_ip ? 'any-IP clients allowed' : null].filter(Boolean);
  return list.length > 0 ? list.join(', ') : 'defaults';
}
