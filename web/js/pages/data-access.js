// @ts-check
import { get, query } from '../api.js';
import { formatDateTime, h } from '../dom.js';
import { field, filterForm } from '../forms.js';
import { emptyState, table } from '../widgets.js';
import { localInputValue, offsetLabel } from '../time-format.js';

const filterNames = ['patient', 'user', 'key', 'since', 'until'];
/** @type {Record<string, string>} */
const surfaceNames = { fhir: 'FHIR', dicomweb: 'DICOMweb', admin: 'Admin app', cli: 'Command line' };

/**
 * The site's data access log: who read which patient's data, when and from where (every FHIR
 * read and search, and every clinical view of this app), filtered by patient, user, key and time.
 * @param {import('../routes.js').PageContext} context
 */
export async function dataAccessPage(context) {
  const siteId = context.site.id;
  const base = `/sites/${siteId}/data-access`;
  /** @type {Record<string, string>} */
  const filters = {};
  for (const name of filterNames) {
    const value = context.query.get(name);
    if (value) filters[name] = value;
  }
  const before = context.query.get('before') ?? undefined;
  const go = (/** @type {Record<string, string>} */ params) => context.navigate(`${base}${query(params)}`);
  // The form takes the browser's wall-clock date and time; the API takes instants.
  const local = localInputValue;
  const form = filterForm({
    label: 'Filter the data access log',
    submit: 'Search',
    names: filterNames,
    fields: [
      field({ label: 'Patient (FHIR id)', name: 'patient', value: filters.patient, attrs: { maxlength: 128 } }),
      field({ label: 'User (e-mail or id)', name: 'user', value: filters.user, attrs: { maxlength: 320 } }),
      field({ label: 'API key (prefix or id)', name: 'key', value: filters.key, attrs: { maxlength: 100 } }),
      field({ label: `From (${offsetLabel(new Date())})`, name: 'since', type: 'datetime-local', value: local(filters.since) }),
      field({ label: `Until (${offsetLabel(new Date())})`, name: 'until', type: 'datetime-local', value: local(filters.until) }),
    ],
    go,
    normalize: (name, value) => (name === 'since' || name === 'until' ? new Date(value).toISOString() : value),
  });
  const page = await get(`/api/sites/${siteId}/data-access${query({ ...filters, limit: 50, before })}`);
  const rows = page.entries.map((/** @type {any} */ e) => [
    formatDateTime(e.occurred_at),
    e.key_prefix ? [h('code', null, e.key_prefix), h('div', { class: 'meta' }, e.user_email ?? e.user_id ?? '—')] : (e.user_email ?? e.user_id ?? (e.surface === 'cli' ? 'operator' : '—')),
    e.remote_address ?? '—',
    `${surfaceNames[e.surface] ?? e.surface} ${e.interaction}`,
    [e.resource_type, e.query ? h('div', { class: 'meta' }, e.query) : null],
    e.resource_count > e.resource_ids.length ? `${e.resource_ids.length} of ${e.resource_count} shown: ${e.resource_ids.join(', ')}` : (e.resource_ids.join(', ') || 'none'),
    e.patient_ids.length > 0 ? e.patient_ids.join(', ') : '—',
  ]);
  const filtered = Object.keys(filters).length > 0;
  return {
    title: 'Data access',
    body: [
      h('h1', null, 'Data access'),
      h('p', { class: 'lead' }, `Who read this site's clinical data: every FHIR and DICOMweb read and search, every clinical view of this app and every clinical read on the command line. Records are kept ${context.site.data_access_retention_days} days.`),
      form,
      table({
        caption: 'Data access records',
        columns: ['When', 'Who', 'From', 'What', 'Type', 'Resources', 'Patients'],
        rows,
        empty: emptyState(filtered || before ? 'No records match' : 'No records yet', h('p', null, 'Reads and searches of clinical data are recorded here as they happen.')),
      }),
      page.next_before ? h('nav', { class: 'pager', 'aria-label': 'Data access pages' }, h('a', { href: `#${base}${query({ ...filters, before: page.next_before })}` }, 'Older records')) : null,
    ],
  };
}
