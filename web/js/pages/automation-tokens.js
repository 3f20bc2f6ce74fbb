// @ts-check
import { get, post } from '../api.js';
import { badge, formatDateTime, h, replace } from '../dom.js';
import { describe, field, form } from '../forms.js';
import { announce, confirmDialog, copyButton, emptyState, errorBox, section, table } from '../widgets.js';

/** A token just created: shown once on the refreshed page, held only in memory until then. */
/** @type {{ token: string; label: string } | null} */
let pendingToken = null;

/**
 * The service administrators' automation tokens, for scripts calling the admin JSON API with
 * Authorization: Bearer. Part of the service admins' page.
 * @param {import('../routes.js').PageContext} context
 */
export async function automationTokensSection(context) {
  const { tokens } = await get('/api/automation-tokens');
  const notice = h('div', { class: 'notice-area' });
  if (pendingToken) {
    const created = pendingToken;
    pendingToken = null;
    const output = h('input', { type: 'text', readonly: true, value: created.token, class: 'secret', id: 'new-automation-token', 'aria-label': 'The new automation token' });
    replace(notice, h('div', { class: 'callout', role: 'status' },
      h('h3', null, `New automation token${created.label ? ` "${created.label}"` : ''}`),
      h('p', null, h('strong', null, 'Copy it now: it is shown only this once.'), ' The gateway keeps only a hash. Send it as Authorization: Bearer <token>; it acts as a service admin on every site.'),
      h('div', { class: 'copy-row' }, output, copyButton(() => created.token, 'Copy the automation token')),
      h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => replace(notice) }, 'I have stored it')),
    ));
    setTimeout(() => /** @type {HTMLInputElement} */ (output).select(), 0);
  }
  const status = (/** @type {any} */ token) => {
    if (token.revoked_at) return h('span', null, badge('revoked'), ' ', formatDateTime(token.revoked_at));
    if (token.expires_at && Date.parse(token.expires_at) <= Date.now()) return badge('expired');
    return badge('active');
  };
  const rows = tokens.map((/** @type {any} */ token) => [
    h('code', null, `${token.prefix}_…`),
    token.label || '—',
    formatDateTime(token.created_at),
    token.expires_at ? formatDateTime(token.expires_at) : 'never',
    token.last_used_at ? formatDateTime(token.last_used_at) : 'never',
    status(token),
    token.revoked_at
      ? null
      : h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${token.prefix}`, onclick: async () => {
          const ok = await confirmDialog({ title: 'Revoke automation token', message: `Revoke ${token.prefix}${token.label ? ` (${token.label})` : ''}? Scripts using it are refused from their next request. This cannot be undone.`, confirm: 'Revoke token', danger: true });
          if (!ok) return;
          try {
            await post(`/api/automation-tokens/${token.id}/revoke`, {});
            announce(`Token ${token.prefix} revoked.`);
            context.refresh();
          } catch (error) {
            replace(notice, errorBox(describe(error)));
          }
        } }, 'Revoke'),
  ]);
  const create = form({
    label: 'Create an automation token',
    submit: 'Create token',
    children: [
      field({ label: 'Label', name: 'label', hint: 'What uses it, e.g. "fleet provisioning". Shown in the list.', attrs: { maxlength: 200 } }),
      field({ label: 'Expires', name: 'expires_at', options: [['90d', 'in 90 days'], ['30d', 'in 30 days'], ['365d', 'in a year'], ['', 'never']], value: '90d' }),
    ],
    action: async (values) => {
      const created = await post('/api/automation-tokens', { label: values.label, expires_at: values.expires_at || null });
      pendingToken = { token: created.token, label: created.automation_token.label };
      context.refresh();
    },
  });
  return [
    h('h2', { id: 'automation-tokens' }, 'Automation tokens'),
    h('p', null, 'Scripts call the admin JSON API with a token instead of signing in (Authorization: Bearer). Each token acts as a service admin; every use is in the audit log. The command line does the same: clinical-gateway automation-token create.'),
    notice,
    table({
      caption: 'Automation tokens',
      columns: ['Token', 'Label', 'Created', 'Expires', 'Last used', 'Status', 'Actions'],
      rows,
      empty: emptyState('No automation tokens', h('p', null, 'Create one below for each script or pipeline. The token is shown once, when it is created.')),
    }),
    section('Create an automation token', create),
  ];
}
