// @ts-check
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { field, filterForm } from '../forms.js';
import { formatInstant } from '../time-format.js';
import { emptyState, table } from '../widgets.js';

const kindText = {
  'mllp-address-not-admitted': 'MLLP address not admitted',
  'mllp-sender-not-authorized': 'MLLP sender (MSH-3/MSH-4) not authorized',
  'dicom-called-ae-unknown': 'DICOM called AE title unknown',
  'dicom-association-rejected': 'DICOM association rejected',
  'http-api-key-unknown': 'API key unknown',
  'http-api-key-revoked': 'API key revoked',
};

/** @param {Record<string, string>} details */
function detailText(details) {
  const parts = [];
  if (details.key_prefix) parts.push(`key ${details.key_prefix}`);
  if (details.origin) parts.push(`${details.origin} origin`);
  if (details.request) parts.push(details.request);
  if (details.calling_ae_title !== undefined) parts.push(`calling ${details.calling_ae_title || '—'} → called ${details.called_ae_title || '—'}`);
  if (details.sending_application !== undefined) parts.push(`MSH-3 ${details.sending_application || '—'} / MSH-4 ${details.sending_facility || '—'}`);
  if (details.control_id) parts.push(`MSH-10 ${details.control_id}`);
  return parts.join(' · ') || '—';
}

/**
 * One page for both scopes: a site's refused traffic (its admins), or every entry (service admins).
 * @param {import('../routes.js').PageContext} context
 */
export async function refusedTrafficPage(context) {
  const siteId = context.site?.id && context.params.siteId ? context.site.id : undefined;
  const base = siteId ? `/sites/${siteId}/refused-traffic` : '/refused-traffic';
  const surface = context.query.get('surface') ?? '';
  const scope = context.query.get('scope') ?? '';
  const before = context.query.get('before') ?? undefined;
  const go = (/** @type {Record<string, string>} */ params) => context.navigate(`${base}${query(params)}`);
  const names = siteId ? ['surface'] : ['surface', 'scope'];
  const form = filterForm({
    label: 'Filter refused traffic',
    submit: 'Apply filters',
    names,
    fields: [
      field({ label: 'Surface', name: 'surface', value: surface, options: [['', 'Any'], ['mllp', 'HL7 MLLP'], ['dicom', 'DICOM'], ['http', 'HTTP (API keys)']] }),
      ...(siteId ? [] : [field({ label: 'Site', name: 'scope', value: scope, options: [['', 'Every site and none'], ['no-site', 'No known site']] })]),
    ],
    go,
  });
  const page = await get(`/api${base}${query({ surface, scope, before, limit: 50 })}`);
  const rows = page.entries.map((/** @type {any} */ e) => [
    formatInstant(e.occurred_at),
    /** @type {Record<string, string>} */ (kindText)[e.kind] ?? e.kind,
    h('code', null, e.remote_address),
    e.reason,
    detailText(e.details),
    e.suppressed > 0 ? `${e.suppressed + 1} times, last ${formatInstant(e.last_at)}` : 'once',
  ]);
  return {
    title: 'Refused traffic',
    body: [
      h('h1', null, 'Refused traffic'),
      h('p', { class: 'lead' },
        siteId
          ? 'Connections, associations and requests refused on this site\'s behalf, newest first: MLLP senders its integration clients do not name, API keys of the site that are revoked or wrong.'
          : 'Every refused connection, association and request, newest first, including those that name no site (an address no client admits, an unknown AE title or key).',
        ' Repeats from one address within a minute are counted on one line; entries are kept 30 days.'),
      form,
      table({
        caption: 'Refused traffic',
        columns: ['When', 'What', 'From', 'Why', 'Details', 'Repeats'],
        rows,
        empty: emptyState('Nothing refused', h('p', null, surface || scope ? 'Nothing matches the filters.' : 'No connection, association or request has been refused recently.')),
      }),
      page.next_before
        ? h('nav', { class: 'pager', 'aria-label': 'Refused traffic pages' },
            before ? h('a', { href: `#${base}${query({ surface, scope })}` }, 'Newest') : null,
            h('a', { href: `#${base}${query({ surface, scope, before: page.next_before })}` }, 'Older entries'))
        : null,
    ],
  };
}
