// @ts-check
import { get, patch, post } from '../api.js';
import { badge, formatDateTime, h, replace } from '../dom.js';
import { describe, field, form } from '../forms.js';
import { automationTokensSection } from './automation-tokens.js';
import { announce, confirmDialog, copyButton, emptyState, errorBox, section, table } from '../widgets.js';

/** @type {{ email: string; password: string } | null} */
let pendingPassword = null;

/** The people who administer every site. @param {import('../routes.js').PageContext} context */
export async function serviceAdminsPage(context) {
  const [{ users }, tokens] = await Promise.all([get('/api/service-admins'), automationTokensSection(context)]);
  const notice = h('div', { class: 'notice-area' });
  const showPassword = (/** @type {string} */ email, /** @type {string} */ password) => {
    const output = h('input', { type: 'text', readonly: true, value: password, class: 'secret', 'aria-label': `Password for ${email}` });
    replace(notice, h('div', { class: 'callout', role: 'status' },
      h('p', null, h('strong', null, `Password for ${email}`), ' — shown only now. Hand it over securely; they should change it under Account.'),
      h('div', { class: 'copy-row' }, output, copyButton(() => password, `Copy the password for ${email}`)),
    ));
    /** @type {HTMLElement} */ (output).focus();
  };
  if (pendingPassword) {
    const { email, password } = pendingPassword;
    pendingPassword = null;
    setTimeout(() => showPassword(email, password), 0);
  }
  const rows = users.map((/** @type {any} */ user) => {
    const self = user.id === context.user.id;
    const reset = h('button', { type: 'button', onclick: async () => {
      if (!(await confirmDialog({ title: 'Reset password', message: `Generate a new password for ${user.email}? Their current password stops working and their sessions end.`, confirm: 'Reset password' }))) return;
      try {
        showPassword(user.email, (await post(`/api/service-admins/${user.id}/password`, {})).generated_password);
      } catch (error) {
        replace(notice, errorBox(describe(error)));
      }
    } }, 'Reset password');
    const toggle = self
      ? h('span', { class: 'hint' }, 'you')
      : h('button', { type: 'button', class: user.active ? 'danger' : '', onclick: async () => {
          if (user.active && !(await confirmDialog({ title: 'Deactivate service admin', message: `Deactivate ${user.email}? They are signed out at once and cannot sign in.`, confirm: 'Deactivate', danger: true }))) return;
          try {
            await patch(`/api/service-admins/${user.id}`, { active: !user.active });
            announce(`${user.email} ${user.active ? 'deactivated' : 'reactivated'}.`);
            context.refresh();
          } catch (error) {
            replace(notice, errorBox(describe(error)));
          }
        } }, user.active ? 'Deactivate' : 'Reactivate');
    return [user.email, badge(user.active ? 'active' : 'inactive'), formatDateTime(user.created_at), h('div', { class: 'row-actions' }, reset, toggle)];
  });
  const create = form({
    label: 'Add a service admin',
    submit: 'Add service admin',
    children: [
      field({ label: 'E-mail', name: 'email', type: 'email', required: true, autocomplete: 'off' }),
      field({ label: 'Initial password', name: 'password', type: 'password', autocomplete: 'new-password', hint: 'Optional. Leave empty to have a strong one generated and shown once. At least 12 characters.' }),
    ],
    action: async (values) => {
      const created = await post('/api/service-admins', { email: values.email.trim(), ...(values.password ? { password: values.password } : {}) });
      pendingPassword = created.generated_password ? { email: created.user.email, password: created.generated_password } : null;
      announce(`${created.user.email} was added.`);
      context.refresh();
    },
  });
  return {
    title: 'Service admins',
    body: [
      h('h1', null, 'Service admins'),
      h('p', { class: 'lead' }, 'Service admins manage every site. Give each person their own account rather than sharing the first-run admin@localhost.'),
      notice,
      table({ caption: 'Service admins', columns: ['E-mail', 'Status', 'Created', 'Actions'], rows, empty: emptyState('No service admins', h('p', null, 'Add one below.')) }),
      section('Add a service admin', create),
      ...tokens,
    ],
  };
}
