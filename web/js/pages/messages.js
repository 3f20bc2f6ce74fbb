// @ts-check
import { get, post, query } from '../api.js';
import { badge, h } from '../dom.js';
import { field, filterForm, markFieldProblems } from '../forms.js';
import { browserZone, formatInstant, localToIso } from '../time-format.js';
import { announce, confirmDialog, copyButton, emptyState, errorBox, section, table } from '../widgets.js';

const pageSize = 50;
const filterNames = ['from', 'to', 'type', 'outcome', 'control_id', 'patient', 'sender', 'transport', 'sort'];
const instantFilters = new Set(['from', 'to']);

/** The API's parameters from the page's: local date-times become instants. @param {Record<string, string>} filters */
function apiFilters(filters) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [name, value] of Object.entries(filters)) out[name] = instantFilters.has(name) ? (localToIso(value) ?? value) : value;
  return out;
}

/** @param {any} m */
function outcomeText(m) {
  return m.outcome === 'refused' ? 'sender refused' : m.outcome;
}

/** @param {import('../routes.js').PageContext} context */
export async function messagesPage(context) {
  const siteId = context.site.id;
  const base = `/sites/${siteId}/messages`;
  /** @type {Record<string, string>} */
  const filters = {};
  for (const name of filterNames) {
    const value = context.query.get(name);
    if (value) filters[name] = value;
  }
  const after = context.query.get('after') ?? undefined;
  const at = context.query.get('at') ?? undefined;
  const go = (/** @type {Record<string, string>} */ params) => context.navigate(`${base}${query(params)}`);
  const zone = browserZone();

  const form = filterForm({
    label: 'Search the message log',
    submit: 'Search',
    names: filterNames,
    fields: [
      field({ label: `Received from (${zone})`, name: 'from', type: 'datetime-local', value: filters.from, attrs: { step: 1 } }),
      field({ label: `Received before (${zone})`, name: 'to', type: 'datetime-local', value: filters.to, attrs: { step: 1 } }),
      field({ label: 'Message type', name: 'type', value: filters.type, hint: 'Exactly, e.g. ADT^A01', attrs: { maxlength: 200, size: 10 } }),
      field({ label: 'Outcome', name: 'outcome', value: filters.outcome, options: [['', 'Any'], ['AA', 'AA accepted'], ['AE', 'AE error'], ['AR', 'AR rejected'], ['refused', 'Sender refused']] }),
      field({ label: 'Control ID (MSH-10)', name: 'control_id', value: filters.control_id, attrs: { maxlength: 200 } }),
      field({ label: 'Patient identifier (PID-3)', name: 'patient', value: filters.patient, attrs: { maxlength: 200 } }),
      field({ label: 'Sender (MSH-3 or MSH-4)', name: 'sender', value: filters.sender, attrs: { maxlength: 200 } }),
      field({ label: 'Transport', name: 'transport', value: filters.transport, options: [['', 'Any'], ['mllp', 'MLLP'], ['http', 'HTTP']] }),
      field({ label: 'Order', name: 'sort', value: filters.sort, options: [['', 'Newest first'], ['oldest', 'Oldest first']] }),
    ],
    go,
  });

  const jump = h('form', { class: 'filters jump', 'aria-label': 'Go to a date' },
    field({ label: `Go to (${zone})`, name: 'at', type: 'datetime-local', value: at ? toLocalInput(at) : '', attrs: { step: 1 } }),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Go')),
  );
  jump.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = String(new FormData(/** @type {HTMLFormElement} */ (jump)).get('at') ?? '');
    const iso = localToIso(value);
    go({ ...filters, ...(iso ? { at: iso } : {}) });
  });

  let page;
  /** @type {any} */
  let failure = null;
  try {
    page = await get(`/api/sites/${siteId}/messages${query({ ...apiFilters(filters), limit: pageSize, after, at })}`);
  } catch (error) {
    failure = error;
    page = { messages: [], total: 0, total_exact: true };
  }
  // Show a filter problem next to its field instead of failing the page.
  if (failure) markFieldProblems(form, failure.fields);
  const rows = page.messages.map((/** @type {any} */ m) => [
    h('a', { href: `#${base}/${m.id}` }, formatInstant(m.received_at)),
    m.message_type || '—',
    h('code', null, m.control_id ?? '—'),
    m.patient_identifier ?? '—',
    [m.sending_application || '—', ' / ', m.sending_facility || '—'],
    `${m.protocol === 'hl7v3' ? 'HL7 v3' : 'HL7 v2'} · ${m.transport.toUpperCase()}`,
    h('span', null, badge(m.ack_code), ' ', outcomeText(m), m.reprocess_of ? ' (reprocessed)' : ''),
    m.problems.length === 0 ? 'none' : h('span', null, `${m.problems.length}: `, m.problems[0].message),
  ]);
  const filtered = Object.keys(filters).length > 0;
  const total = page.total_exact
    ? `${page.total.toLocaleString()} ${page.total === 1 ? 'message matches' : 'messages match'}${filtered ? ' the filters' : ''}.`
    : `More than ${page.total.toLocaleString()} messages match${filtered ? ' the filters' : ''}; narrow them to count exactly.`;
  const paged = Boolean(after || at);
  return {
    title: 'Messages',
    body: [
      h('h1', null, 'Messages'),
      h('p', { class: 'lead' }, 'Every HL7 message the site\'s senders delivered, with the acknowledgement it got. Connections and senders refused before a message was read are under ', h('a', { href: `#/sites/${siteId}/refused-traffic` }, 'Refused traffic'), '.'),
      form,
      jump,
      failure && !(failure.fields ?? []).length ? errorBox(failure.message) : null,
      h('p', { class: 'result-count', role: 'status' }, total, at ? ` Showing from ${formatInstant(at)}.` : ''),
      table({
        caption: 'HL7 messages',
        columns: ['Received', 'Type', 'Control ID', 'Patient', 'Sender (MSH-3 / MSH-4)', 'Protocol', 'Outcome', 'Problems'],
        rows,
        empty: filtered || paged
          ? emptyState('No messages match', h('p', null, h('a', { href: `#${base}` }, 'Show every message')))
          : emptyState('No messages yet', h('p', null, 'Messages appear when an application posts HL7 to the HL7 origin with an API key, or when a registered ', h('a', { href: `#/sites/${siteId}/clients` }, 'integration client'), ' sends over MLLP.')),
      }),
      page.next || paged
        ? h('nav', { class: 'pager', 'aria-label': 'Message pages' },
            paged ? h('a', { href: `#${base}${query(filters)}` }, filters.sort === 'oldest' ? 'Oldest' : 'Newest') : null,
            page.next ? h('a', { href: `#${base}${query({ ...filters, after: page.next })}` }, filters.sort === 'oldest' ? 'Later messages' : 'Older messages') : null)
        : null,
    ],
  };
}

/** An ISO instant as a datetime-local value in the browser's zone. @param {string} iso */
function toLocalInput(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** @param {import('../routes.js').PageContext} context */
export async function messagePage(context) {
  const siteId = context.site.id;
  const base = `/sites/${siteId}/messages`;
  const m = await get(`/api/sites/${siteId}/messages/${encodeURIComponent(context.params.messageId)}`);
  const problems = m.problems.length === 0
    ? h('p', null, 'None.')
    : table({
        caption: 'Problems',
        columns: ['Severity', 'Code', 'Where', 'Message'],
        rows: m.problems.map((/** @type {any} */ p) => [p.severity, p.code, p.location ?? '—', p.message]),
      });
  const canReprocess = m.outcome !== 'processed' && !m.reprocessed_as && !m.reprocess_of && m.protocol === 'hl7v2';
  const status = h('div', { role: 'status' });
  const reprocess = canReprocess
    ? h('button', {
        type: 'button',
        class: 'primary',
        onclick: async () => {
          const confirmed = await confirmDialog({
            title: 'Reprocess this message?',
            message: 'It runs through the intake again with the site\'s and its integration client\'s configuration as they are now. If it is accepted, its data is stored and it cannot be reprocessed again.',
            confirm: 'Reprocess',
          });
          if (!confirmed) return;
          try {
            const result = await post(`/api/sites/${siteId}/messages/${m.id}/reprocess`, {});
            announce(`Reprocessed: ${result.attempt.ack_code} (${result.attempt.outcome}).`);
            context.refresh();
          } catch (error) {
            status.replaceChildren(errorBox(/** @type {Error} */ (error).message));
          }
        },
      }, 'Reprocess')
    : null;
  const attempts = m.attempts.length === 0
    ? null
    : section('Reprocessed attempts', table({
        caption: 'Reprocessed attempts',
        columns: ['Received', 'Outcome', 'Problems'],
        rows: m.attempts.map((/** @type {any} */ a) => [
          h('a', { href: `#${base}/${a.id}` }, formatInstant(a.received_at)),
          h('span', null, badge(a.ack_code), ' ', outcomeText(a)),
          a.problems.length === 0 ? 'none' : a.problems[0].message,
        ]),
      }));
  return {
    title: `Message ${m.control_id ?? ''}`,
    body: [
      h('p', { class: 'breadcrumb' }, h('a', { href: `#${base}` }, '← Messages')),
      h('h1', null, `${m.message_type || 'Message'} `, h('code', null, m.control_id ?? '')),
      h('dl', { class: 'facts' },
        h('div', null, h('dt', null, 'Received'), h('dd', null, formatInstant(m.received_at))),
        h('div', null, h('dt', null, 'Sender'), h('dd', null, `${m.sending_application || '—'} / ${m.sending_facility || '—'}`)),
        h('div', null, h('dt', null, 'From'), h('dd', null, `${m.transport.toUpperCase()}${m.remote_address ? ` ${m.remote_address}` : ''}`)),
        h('div', null, h('dt', null, 'Patient'), h('dd', null, m.patient_identifier ?? '—')),
        h('div', null, h('dt', null, 'Outcome'), h('dd', null, badge(m.ack_code), ' ', outcomeText(m))),
        h('div', null, h('dt', null, 'Size'), h('dd', null, `${m.raw_size} bytes`)),
        m.reprocess_of ? h('div', null, h('dt', null, 'Reprocessed from'), h('dd', null, h('a', { href: `#${base}/${m.reprocess_of}` }, 'the original message'))) : null,
        m.reprocessed_as ? h('div', null, h('dt', null, 'Accepted as'), h('dd', null, h('a', { href: `#${base}/${m.reprocessed_as}` }, 'its reprocessed attempt'))) : null,
      ),
      canReprocess
        ? section('Reprocess', h('p', null, 'Fix the cause first (the integration client\'s sender, charset or time zone, the site\'s settings), then run the message again. The attempt is logged beside this one with its own acknowledgement.'), reprocess, status)
        : null,
      section('Problems', problems),
      attempts,
      m.raw === null
        ? section('Raw message', h('p', { class: 'hint' }, `Removed ${formatInstant(m.body_purged_at)} by the site's message body retention; the entry and its acknowledgement are kept.`))
        : section('Raw message', h('div', { class: 'copy-row' }, copyButton(() => m.raw, 'Copy the raw message')), h('pre', { class: 'raw', tabindex: '0', 'aria-label': 'Raw message' }, m.raw)),
      section('Acknowledgement sent', h('pre', { class: 'raw', tabindex: '0', 'aria-label': 'Acknowledgement' }, m.ack)),
    ],
  };
}
