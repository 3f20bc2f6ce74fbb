// @ts-check
/**
 * The administration and clinical web app: a small single-page app over the admin origin's JSON
 * API. Routes live in the URL hash (#/sites/<id>/keys), so every page can be bookmarked and
 * reloaded, and the server needs to serve only one HTML page.
 */
import { get, setCsrfToken, whenSessionEnds } from './api.js';
import { h, replace } from './dom.js';
import { describe } from './forms.js';
import { areaAllowed, navigation, roleLabel } from './navigation.js';
import { errorBox } from './widgets.js';
import { signInPage } from './pages/sign-in.js';
import { noteSessionEnded, signOut, stopIdleWatch, takeSessionEndedNotice, watchIdle } from './session.js';
import { zoneNote } from './time-format.js';
import { routes } from './routes.js';

/** @typedef {{ id: string; site_id: string | null; email: string; role: 'service-admin' | 'site-admin' | 'clinician' }} User */

export const state = {
  /** @type {User | null} */
  user: null,
  /** @type {any[] | null} sites the user may see (cached; cleared when one is created or changed) */
  sites: null,
};

export function forgetSites() {
  state.sites = null;
}

async function loadSites() {
  state.sites ??= (await get('/api/sites')).sites;
  return state.sites ?? [];
}

/** @param {string} path e.g. /sites/<id>/keys */
export function navigate(path) {
  if (location.hash === `#${path}`) void render();
  else location.hash = path;
}

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, search] = raw.split('?');
  return { path: path || '/', query: new URLSearchParams(search ?? '') };
}

let generation = 0;

async function render() {
  const current = ++generation;
  const root = /** @type {HTMLElement} */ (document.getElementById('app'));
  const { path, query } = parseHash();
  if (!state.user) {
    const session = await get('/api/session').catch(() => ({ user: null }));
    if (current !== generation) return;
    state.user = session.user;
    setCsrfToken(session.csrf_token ?? null);
    if (state.user) watchIdle(session, sessionEnded);
  }
  if (!state.user) {
    document.title = 'Sign in · Clinical Gateway';
    replace(root, signInPage({ notice: takeSessionEndedNotice(), onSignedIn: (/** @type {any} */ session) => {
      state.user = session.user;
      setCsrfToken(session.csrf_token);
      watchIdle(session, sessionEnded);
      const wanted = parseHash().path;
      navigate(wanted === '/' || wanted === '/sign-in' ? home(session.user) : wanted);
      void render();
    } }));
    return;
  }
  const user = state.user;
  if (path === '/' || path === '/sign-in') {
    navigate(home(user));
    return;
  }
  const match = matchRoute(path);
  const main = h('main', { id: 'main', tabindex: '-1' });
  let site = null;
  let sites = [];
  try {
    sites = await loadSites();
    if (match?.params.siteId) {
      site = sites.find((s) => s.id === match.params.siteId) ?? null;
      if (!site) site = await get(`/api/sites/${encodeURIComponent(match.params.siteId)}`).catch(() => null);
    }
  } catch (error) {
    if (current !== generation) return;
    replace(root, shell(user, null, sites, path, main));
    replace(main, errorBox(describe(error)));
    return;
  }
  if (current !== generation) return;
  replace(root, shell(user, site, sites, path, main));
  const pageTitle = (/** @type {string} */ title) => {
    document.title = `${title}${site ? ` · ${site.name}` : ''} · Clinical Gateway`;
  };
  if (!match || (match.params.siteId && !site)) {
    pageTitle('Not found');
    replace(main, h('h1', null, 'Not found'), h('p', null, 'There is no such page or site. ', h('a', { href: `#${home(user)}` }, 'Go to the start page'), '.'));
  } else if (!areaAllowed(match.route.area, user)) {
    pageTitle('No access');
    replace(main, h('h1', null, 'No access'), h('p', null, `Your role (${roleLabel(user.role)}) does not include this page. `, h('a', { href: `#${home(user)}` }, 'Go to the start page'), '.'));
  } else {
    try {
      const page = await match.route.page({ params: match.params, query, user, site, navigate, refresh: () => void render(), forgetSites });
      if (current !== generation) return;
      pageTitle(page.title);
      replace(main, page.body);
    } catch (error) {
      if (current !== generation) return;
      pageTitle('Error');
      replace(main, h('h1', null, 'Something went wrong'), errorBox(describe(error)));
    }
  }
  // Move focus to the new page's heading so that keyboard and screen-reader users land on it.
  const heading = /** @type {HTMLElement | null} */ (main.querySelector('h1'));
  if (heading && !main.contains(document.activeElement) && !document.querySelector('dialog[open]')) {
    heading.setAttribute('tabindex', '-1');
    heading.focus({ preventScroll: true });
  }
}

/** @param {User} user */
function home(user) {
  if (user.role === 'service-admin') return '/sites';
  if (user.role === 'clinician') return `/sites/${user.site_id}/worklist`;
  return `/sites/${user.site_id}`;
}

/** @param {string} path */
function matchRoute(path) {
  for (const route of routes) {
    const names = [];
    const pattern = new RegExp(`^${route.path.replace(/:(\w+)/g, (_, name) => (names.push(name), '([^/]+)'))}$`);
    const found = pattern.exec(path);
    if (found) {
      /** @type {Record<string, string>} */
      const params = {};
      names.forEach((name, index) => {
        params[name] = decodeURIComponent(found[index + 1] ?? '');
      });
      return { route, params };
    }
  }
  return null;
}

/**
 * @param {User} user @param {any} site @param {any[]} sites @param {string} path @param {HTMLElement} main
 */
function shell(user, site, sites, path, main) {
  const skip = h('a', { class: 'skip-link', href: '#main' }, 'Skip to content');
  skip.addEventListener('click', (event) => {
    event.preventDefault();
    main.focus();
  });
  // A select and a button, not navigation on change: WCAG 3.2.2 (On Input) — arrowing through
  // the options with the keyboard must not leave the page.
  /** @type {HTMLElement | null} */
  let switcher = site ? h('span', { class: 'site-name' }, site.name) : null;
  if (user.role === 'service-admin' && sites.length > 0) {
    const select = /** @type {HTMLSelectElement} */ (h(
      'select',
      { id: 'site-switcher', name: 'site' },
      h('option', { value: '', selected: !site }, 'All sites'),
      sites.map((s) => h('option', { value: s.id, selected: site?.id === s.id }, s.name)),
    ));
    switcher = h(
      'form',
      { class: 'site-switcher', 'aria-label': 'Choose a site', onsubmit: (/** @type {Event} */ event) => {
        event.preventDefault();
        navigate(select.value ? `/sites/${select.value}` : '/sites');
      } },
      h('label', { for: 'site-switcher', class: 'visually-hidden' }, 'Site'),
      select,
      h('button', { type: 'submit' }, 'Open'),
    );
  }
  return [
    skip,
    h(
      'header',
      { class: 'topbar' },
      h('a', { class: 'brand', href: `#${home(user)}` }, h('img', { src: '/assets/favicon.svg', alt: '', width: '24', height: '24' }), 'Clinical Gateway'),
      switcher,
      h(
        'div',
        { class: 'user-menu' },
        h('span', { class: 'who' }, user.email, ' · ', roleLabel(user.role)),
        h('a', { href: '#/account' }, 'Account'),
        h('button', { type: 'button', class: 'link', onclick: () => void signOut(() => {
          state.user = null;
          state.sites = null;
          setCsrfToken(null);
          location.hash = '/sign-in';
          void render();
        }) }, 'Sign out'),
      ),
    ),
    navigation(user, site, path),
    h('div', { id: 'live', class: 'visually-hidden', role: 'status', 'aria-live': 'polite' }),
    main,
    h('footer', { class: 'page-foot' }, h('p', { class: 'zone-note' }, zoneNote())),
  ];
}

function sessionEnded() {
  state.user = null;
  state.sites = null;
  setCsrfToken(null);
  void render();
}

whenSessionEnds(() => {
  stopIdleWatch();
  noteSessionEnded('Your session has ended (signed out in another tab, or idle for too long). Sign in again to continue: a report you were writing is kept in this browser and offered back.');
  sessionEnded();
});
window.addEventListener('hashchange', () => void render());
void render();
