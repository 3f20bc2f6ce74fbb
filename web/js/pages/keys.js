// @ts-check
import { get, post } from '../api.js';
import { badge, formatDateTime, h, replace } from '../dom.js';
import { describe, field, form } from '../forms.js';
import { announce, confirmDialog, copyButton, emptyState, errorBox, section, table } from '../widgets.js';

/** A key just created: shown once on the refreshed page, held only in memory until then. */
/** @type {{ key: string; prefix: string; label: string } | null} */
let pendingKey = null;

/** @param {import('../routes.js').PageContext} context */
export async function keysPage(context) {
  const siteId = context.site.id;
  const [{ keys }, { users }] = await Promise.all([get(`/api/sites/${siteId}/keys`), get(`/api/sites/${siteId}/users`)]);
  const notice = h('div', { class: 'notice-area' });
  if (pendingKey) {
    const created = pendingKey;
    pendingKey = null;
    const output = h('input', { type: 'text', readonly: true, value: created.key, class: 'secret', id: 'new-api-key', 'aria-label': 'The new API key' });
    const done = h('button', { type: 'button', onclick: () => replace(notice) }, 'I have stored it');
    replace(notice, h('div', { class: 'callout', role: 'status' },
      h('h2', null, `New API key${created.label ? ` "${created.label}"` : ''}`),
      h('p', null, h('strong', null, 'Copy it now: it is shown only this once.'), ' The gateway keeps only a hash; if it is lost, revoke it and create another. Send it in the X-API-Key header.'),
      h('div', { class: 'copy-row' }, output, copyButton(() => created.key, 'Copy the API key')),
      h('div', { class: 'actions' }, done),
    ));
    setTimeout(() => /** @type {HTMLInputElement} */ (output).select(), 0);
  }

  const active = users.filter((/** @type {any} */ u) => u.active);
  const rows = keys.map((/** @type {any} */ key) => {
    const revoke = key.revoked_at
      ? null
      : h('button', { type: 'button', class: 'danger', onclick: async () => {
          const ok = await confirmDialog({ title: 'Revoke API key', message: `Revoke ${key.prefix}${key.label ? ` (${key.label})` : ''}? Applications using it are refused from their next request. This cannot be undone.`, confirm: 'Revoke key', danger: true });
          if (!ok) return;
          try {
            await post(`/api/sites/${siteId}/keys/${key.id}/revoke`, {});
            announce(`Key ${key.prefix} revoked.`);
            context.refresh();
          } catch (error) {
            replace(notice, errorBox(describe(error)));
          }
        } }, 'Revoke');
    return [
      h('code', null, `${key.prefix}_…`),
      key.label || '—',
      key.user_email,
      formatDateTime(key.created_at),
      key.last_used_at ? formatDateTime(key.last_used_at) : 'never',
      key.revoked_at ? h('span', null, badge('revoked'), ' ', formatDateTime(key.revoked_at)) : badge('active'),
      revoke,
    ];
  });

  const create = active.length === 0
    ? emptyState('Add a user first', h('p', null, 'Every API key belongs to a user of the site (the key acts with that user\'s site). ', h('a', { href: `#/sites/${siteId}/users` }, 'Add a user'), ', then come back.'))
    : form({
        label: 'Create an API key',
        submit: 'Create key',
        children: [
          field({ label: 'Label', name: 'label', hint: 'What uses it, e.g. "EHR FHIR integration". Shown in the list.', attrs: { maxlength: 200 } }),
          field({
            label: 'Owner',
            name: 'user_id',
            required: true,
            options: active.map((/** @type {any} */ u) => [u.id, u.email]),
            value: active.some((/** @type {any} */ u) => u.id === context.user.id) ? context.user.id : active[0].id,
            hint: 'The user the key acts for. Deactivating the user stops the key.',
          }),
        ],
        action: async (values) => {
          const created = await post(`/api/sites/${siteId}/keys`, { user_id: values.user_id, label: values.label });
          pendingKey = { key: created.key, prefix: created.api_key.prefix, label: created.api_key.label };
          context.refresh();
        },
      });

  return {
    title: 'API keys',
    body: [
      h('h1', null, 'API keys'),
      h('p', { class: 'lead' }, 'Applications call the FHIR, HL7 HTTP, MPPS and connectivity endpoints with an API key in the X-API-Key header. A key only ever reaches this site\'s data.'),
      notice,
      table({
        caption: 'API keys of the site',
        columns: ['Key', 'Label', 'Owner', 'Created', 'Last used', 'Status', 'Actions'],
        rows,
        empty: emptyState('No API keys yet', h('p', null, 'Create one below for each application that calls the gateway over HTTP. The key is shown once, when it is created.')),
      }),
      section('Create an API key', create),
    ],
  };
}
