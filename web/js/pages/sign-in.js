// @ts-check
import { post } from '../api.js';
import { h } from '../dom.js';
import { field, form } from '../forms.js';

/** @param {{ onSignedIn: (session: any) => void; notice?: string }} options */
export function signInPage(options) {
  const signIn = form({
    label: 'Sign in',
    submit: 'Sign in',
    children: [
      field({ label: 'E-mail', name: 'email', type: 'email', required: true, autocomplete: 'username', attrs: { autofocus: true } }),
      field({ label: 'Password', name: 'password', type: 'password', required: true, autocomplete: 'current-password' }),
    ],
    action: async (values) => {
      const session = await post('/api/session', { email: values.email.trim(), password: values.password });
      options.onSignedIn(session);
    },
  });
  return h(
    'main',
    { id: 'main', class: 'sign-in', tabindex: '-1' },
    h('div', { class: 'card narrow' },
      h('p', { class: 'brand' }, h('img', { src: '/assets/favicon.svg', alt: '', width: '32', height: '32' }), 'Clinical Gateway'),
      h('h1', null, 'Sign in'),
      options.notice ? h('p', { class: 'warning', role: 'status' }, options.notice) : null,
      signIn,
      h('p', { class: 'hint' }, 'First start? Sign in as admin@localhost with the password in the file initial-admin-password in the data directory (CG_DATA_DIR), then change it under Account.'),
    ),
  );
}
