// @ts-check
import { get, query } from '../api.js';
import { formatDateTime, h } from '../dom.js';
import { emptyState, table } from '../widgets.js';

/** The audit log of the site in the URL, or of the whole service. */
/** @param {import('../routes.js').PageContext} context */
export async function auditPage(context) {
  const site = context.site;
  const before = context.query.get('before') ?? undefined;
  const base = site ? `/sites/${site.id}/audit` : '/audit';
  const page = await get(`/api${base}${query({ limit: 50, before })}`);
  const rows = page.events.map((/** @type {any} */ e) => [
    formatDateTime(e.occurred_at),
    e.actor_email ?? e.actor,
    h('code', null, e.action),
    target(e.target_type, e.target_id),
    details(e.details),
  ]);
  return {
    title: site ? 'Audit' : 'Service audit',
    body: [
      h('h1', null, site ? 'Audit' : 'Service audit'),
      h('p', { class: 'lead' }, site ? 'Who did what and when on this site: every administrative change, from this app and from the command line.' : 'Every administrative change on every site, newest first.'),
      table({
        caption: 'Audit events',
        columns: ['When', 'Who', 'Action', 'Target', 'Details'],
        rows,
        empty: emptyState(before ? 'No older events' : 'No events yet', h('p', null, 'Changes to sites, users, keys, clients and reports are recorded here as they happen.')),
      }),
      page.next_before ? h('nav', { class: 'pager', 'aria-label': 'Audit pages' }, h('a', { href: `#${base}?before=${page.next_before}` }, 'Older events')) : null,
    ],
  };
}

/**
 * Ids are UUIDs: the first 8 characters tell events apart on screen; the whole id stays in the
 * element (title, and a visually hidden copy for screen readers and search).
 * @param {string} type @param {string | null} id
 */
function target(type, id) {
  if (!id) return type;
  if (!/^[0-9a-f-]{36}$/.test(id)) return `${type} ${id}`;
  return h('span', { title: id }, `${type} `, h('code', { 'aria-hidden': 'true' }, `${id.slice(0, 8)}…`), h('span', { class: 'visually-hidden' }, id));
}

/** @param {Record<string, unknown>} value */
function details(value) {
  const entries = Object.entries(value ?? {});
  if (entries.length === 0) return '—';
  return h('ul', { class: 'plain' }, entries.map(([k, v]) => h('li', null, `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)));
}
