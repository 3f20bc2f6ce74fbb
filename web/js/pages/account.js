// @ts-check
import { put } from '../api.js';
import { h } from '../dom.js';
import { field, form } from '../forms.js';
import { announce, section } from '../widgets.js';

/** @param {import('../routes.js').PageContext} context */
export async function accountPage(context) {
  const change = form({
    label: 'Change password',
    submit: 'Change password',
    children: [
      field({ label: 'Current password', name: 'current_password', type: 'password', required: true, autocomplete: 'current-password' }),
      field({ label: 'New password', name: 'new_password', type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 12 characters. A passphrase of a few words is easy to type and hard to guess.', attrs: { minlength: 12 } }),
      field({ label: 'Repeat the new password', name: 'confirm', type: 'password', required: true, autocomplete: 'new-password' }),
    ],
    action: async (values, element) => {
      if (values.new_password !== values.confirm) throw { fields: [{ field: 'confirm', message: 'the two new passwords differ' }] };
      await put('/api/session/password', { current_password: values.current_password, new_password: values.new_password });
      element.reset();
      const done = h('p', { class: 'success', role: 'status' }, 'Your password has been changed. Your other sessions have been signed out.');
      element.before(done);
      announce('Password changed.');
    },
  });
  return {
    title: 'Account',
    body: [
      h('h1', null, 'Account'),
      h('p', null, `Signed in as ${context.user.email}.`),
      section('Change password', change),
    ],
  };
}
