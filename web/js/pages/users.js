// @ts-check
import { get, patch, post } from '../api.js';
import { badge, formatDateTime, h, replace } from '../dom.js';
import { describe, field, form } from '../forms.js';
import { roleLabel } from '../navigation.js';
import { announce, confirmDialog, copyButton, emptyState, errorBox, section, table } from '../widgets.js';

const roles = /** @type {[string, string][]} */ ([['clinician', 'Clinician'], ['site-admin', 'Site admin']]);

/** @type {{ email: string; password: string } | null} */
let pendingPassword = null;

/** @param {import('../routes.js').PageContext} context */
export async function usersPage(context) {
  const siteId = context.site.id;
  const { users } = await get(`/api/sites/${siteId}/users`);
  const notice = h('div', { class: 'notice-area' });

  /** Shows a password once, with a copy button; it is not kept anywhere. */
  const showPassword = (/** @type {string} */ email, /** @type {string} */ password) => {
    const output = h('input', { type: 'text', readonly: true, value: password, class: 'secret', 'aria-label': `Password for ${email}` });
    replace(notice, h('div', { class: 'callout', role: 'status' },
      h('p', null, h('strong', null, `Password for ${email}`), ' — shown only now. Give it to the user in person or over a secure channel; they should change it under Account.'),
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
    const roleSelect = h('select', { 'aria-label': `Role of ${user.email}`, disabled: self || !user.active }, roles.map(([value, text]) => h('option', { value, selected: value === user.role }, text)));
    // Choosing a role only selects it (arrowing through the options must not change anyone's
    // access, WCAG 3.2.2); the change is made by its own Save button.
    const saveRole = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', class: 'save-role', disabled: true }, 'Save role'));
    roleSelect.addEventListener('change', () => {
      saveRole.disabled = /** @type {HTMLSelectElement} */ (roleSelect).value === user.role;
    });
    saveRole.addEventListener('click', async () => {
      const role = /** @type {HTMLSelectElement} */ (roleSelect).value;
      if (role === user.role) return;
      saveRole.disabled = true;
      try {
        await patch(`/api/sites/${siteId}/users/${user.id}`, { role });
        user.role = role;
        announce(`${user.email} is now ${roleLabel(role)}.`);
      } catch (error) {
        replace(notice, errorBox(describe(error)));
        /** @type {HTMLSelectElement} */ (roleSelect).value = user.role;
      }
    });
    const roleCell = self || !user.active ? roleSelect : h('div', { class: 'role-edit' }, roleSelect, saveRole);
    const reset = h('button', { type: 'button', onclick: async () => {
      if (!(await confirmDialog({ title: 'Reset password', message: `Generate a new password for ${user.email}? Their current password stops working and their sessions end.`, confirm: 'Reset password' }))) return;
      try {
        const result = await post(`/api/sites/${siteId}/users/${user.id}/password`, {});
        showPassword(user.email, result.generated_password);
      } catch (error) {
        replace(notice, errorBox(describe(error)));
      }
    } }, 'Reset password');
    const toggle = self
      ? h('span', { class: 'hint' }, 'you')
      : h('button', { type: 'button', class: user.active ? 'danger' : '', onclick: async () => {
          if (user.active && !(await confirmDialog({ title: 'Deactivate user', message: `Deactivate ${user.email}? They are signed out at once, cannot sign in, and their API keys stop working.`, confirm: 'Deactivate', danger: true }))) return;
          try {
            await patch(`/api/sites/${siteId}/users/${user.id}`, { active: !user.active });
            announce(`${user.email} ${user.active ? 'deactivated' : 'reactivated'}.`);
            context.refresh();
          } catch (error) {
            replace(notice, errorBox(describe(error)));
          }
        } }, user.active ? 'Deactivate' : 'Reactivate');
    return [user.email, roleCell, badge(user.active ? 'active' : 'inactive'), formatDateTime(user.created_at), h('div', { class: 'row-actions' }, reset, toggle)];
  });

  const create = form({
    label: 'Add a user',
    submit: 'Add user',
    children: [
      field({ label: 'E-mail', name: 'email', type: 'email', required: true, autocomplete: 'off', hint: 'They sign in with this address.' }),
      field({ label: 'Role', name: 'role', options: roles, value: 'clinician', hint: 'Clinicians read the worklist and write reports. Site admins manage users, keys, integration clients and settings.' }),
      field({ label: 'Initial password', name: 'password', type: 'password', autocomplete: 'new-password', hint: 'Optional. Leave empty to have a strong one generated and shown once. At least 12 characters.' }),
    ],
    action: async (values) => {
      const created = await post(`/api/sites/${siteId}/users`, { email: values.email.trim(), role: values.role, ...(values.password ? { password: values.password } : {}) });
      // Shown once, on the refreshed page; kept only in this page's memory until then.
      pendingPassword = created.generated_password ? { email: created.user.email, password: created.generated_password } : null;
      announce(`${created.user.email} was added.`);
      context.refresh();
    },
  });

  return {
    title: 'Users',
    body: [
      h('h1', null, 'Users'),
      notice,
      table({
        caption: 'Users of the site',
        columns: ['E-mail', 'Role', 'Status', 'Created', 'Actions'],
        rows,
        empty: emptyState('No users yet', h('p', null, 'Add the site\'s clinicians (they read the worklist and write reports) and a site admin below. API keys belong to a user, so add one before creating keys.')),
      }),
      section('Add a user', create),
    ],
  };
}
