// @ts-check
import { get, query } from '../api.js';
import { badge, formatDateTime, h } from '../dom.js';
import { copyButton, emptyState, section, table } from '../widgets.js';

/** @param {import('../routes.js').PageContext} context */
export async function messagesPage(context) {
  const siteId = context.site.id;
  const before = context.query.get('before') ?? undefined;
  const page = await get(`/api/sites/${siteId}/messages${query({ limit: 50, before })}`);
  const rows = page.messages.map((/** @type {any} */ m) => [
    h('a', { href: `#/sites/${siteId}/messages/${m.id}` }, formatDateTime(m.received_at)),
    m.message_type || '—',
    h('code', null, m.control_id ?? '—'),
    [m.sending_application || '—', ' / ', m.sending_facility || '—'],
    `${m.protocol === 'hl7v3' ? 'HL7 v3' : 'HL7 v2'} · ${m.transport.toUpperCase()}`,
    badge(m.ack_code),
    m.problems.length === 0 ? 'none' : h('span', null, `${m.problems.length}: `, m.problems[0].message),
  ]);
  return {
    title: 'Messages',
    body: [
      h('h1', null, 'Messages'),
      h('p', { class: 'lead' }, 'Every HL7 message the site\'s senders delivered, newest first, with the acknowledgement it got.'),
      table({
        caption: 'HL7 messages',
        columns: ['Received', 'Type', 'Control ID', 'Sender (MSH-3 / MSH-4)', 'Protocol', 'ACK', 'Problems'],
        rows,
        empty: before
          ? emptyState('No older messages', h('p', null, h('a', { href: `#/sites/${siteId}/messages` }, 'Back to the newest')))
          : emptyState('No messages yet', h('p', null, 'Messages appear when an application posts HL7 to the HL7 origin with an API key, or when a registered ', h('a', { href: `#/sites/${siteId}/clients` }, 'integration client'), ' sends over MLLP.')),
      }),
      page.next_before ? h('nav', { class: 'pager', 'aria-label': 'Message pages' }, before ? h('a', { href: `#/sites/${siteId}/messages` }, 'Newest') : null, h('a', { href: `#/sites/${siteId}/messages?before=${page.next_before}` }, 'Older messages')) : null,
    ],
  };
}

/** @param {import('../routes.js').PageContext} context */
export async function messagePage(context) {
  const siteId = context.site.id;
  const m = await get(`/api/sites/${siteId}/messages/${encodeURIComponent(context.params.messageId)}`);
  const problems = m.problems.length === 0
    ? h('p', null, 'None.')
    : table({
        caption: 'Problems',
        columns: ['Severity', 'Code', 'Where', 'Message'],
        rows: m.problems.map((/** @type {any} */ p) => [p.severity, p.code, p.location ?? '—', p.message]),
      });
  return {
    title: `Message ${m.control_id ?? ''}`,
    body: [
      h('p', { class: 'breadcrumb' }, h('a', { href: `#/sites/${siteId}/messages` }, '← Messages')),
      h('h1', null, `${m.message_type || 'Message'} `, h('code', null, m.control_id ?? '')),
      h('dl', { class: 'facts' },
        h('div', null, h('dt', null, 'Received'), h('dd', null, formatDateTime(m.received_at))),
        h('div', null, h('dt', null, 'Sender'), h('dd', null, `${m.sending_application || '—'} / ${m.sending_facility || '—'}`)),
        h('div', null, h('dt', null, 'From'), h('dd', null, `${m.transport.toUpperCase()}${m.remote_address ? ` ${m.remote_address}` : ''}`)),
        h('div', null, h('dt', null, 'Outcome'), h('dd', null, badge(m.ack_code), ' ', m.outcome)),
        h('div', null, h('dt', null, 'Size'), h('dd', null, `${m.raw_size} bytes`)),
      ),
      section('Problems', problems),
      m.raw === null
        ? section('Raw message', h('p', { class: 'hint' }, `Removed ${formatDateTime(m.body_purged_at)} by the site's message body retention; the entry and its acknowledgement are kept.`))
        : section('Raw message', h('div', { class: 'copy-row' }, copyButton(() => m.raw, 'Copy the raw message')), h('pre', { class: 'raw', tabindex: '0', 'aria-label': 'Raw message' }, m.raw)),
      section('Acknowledgement sent', h('pre', { class: 'raw', tabindex: '0', 'aria-label': 'Acknowledgement' }, m.ack)),
    ],
  };
}
