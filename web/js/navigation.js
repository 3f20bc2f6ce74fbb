// @ts-check
/** Which areas each role may open (mirrors the server's checks, which are the authority). */
import { h } from './dom.js';

/** @type {Record<string, string[]>} */
const areaRoles = {
  sites: ['service-admin'],
  serviceAudit: ['service-admin'],
  serviceAdmins: ['service-admin'],
  siteSettings: ['service-admin', 'site-admin'],
  users: ['service-admin', 'site-admin'],
  keys: ['service-admin', 'site-admin'],
  clients: ['service-admin', 'site-admin'],
  messages: ['service-admin', 'site-admin'],
  connectivity: ['service-admin', 'site-admin'],
  audit: ['service-admin', 'site-admin'],
  exports: ['service-admin', 'site-admin'],
  worklist: ['service-admin', 'site-admin', 'clinician'],
  account: ['service-admin', 'site-admin', 'clinician'],
};

/** @param {string} area @param {{ role: string }} user */
export function areaAllowed(area, user) {
  return (areaRoles[area] ?? []).includes(user.role);
}

/** @param {string} role */
export function roleLabel(role) {
  return { 'service-admin': 'Service admin', 'site-admin': 'Site admin', clinician: 'Clinician' }[role] ?? role;
}

const siteLinks = [
  ['', 'Overview', 'siteSettings'],
  ['/worklist', 'Worklist', 'worklist'],
  ['/patients', 'Patients', 'worklist'],
  ['/users', 'Users', 'users'],
  ['/keys', 'API keys', 'keys'],
  ['/clients', 'Integration clients', 'clients'],
  ['/activity', 'Activity', 'messages'],
  ['/messages', 'Messages', 'messages'],
  ['/refused-traffic', 'Refused traffic', 'messages'],
  ['/connectivity', 'Connectivity', 'connectivity'],
  ['/dicom-destinations', 'DICOM destinations', 'connectivity'],
  ['/audit', 'Audit', 'audit'],
  ['/data-access', 'Data access', 'audit'],
  ['/exports', 'Exports', 'exports'],
];

/** @param {{ role: string }} user @param {any} site @param {string} path */
export function navigation(user, site, path) {
  /** @type {[string, string][]} */
  const links = [];
  if (user.role === 'service-admin') links.push(['/sites', 'Sites'], ['/admins', 'Service admins'], ['/audit', 'Service audit'], ['/refused-traffic', 'Refused traffic (all)']);
  if (site) {
    for (const [suffix, text, area] of siteLinks) if (areaAllowed(area, user)) links.push([`/sites/${site.id}${suffix}`, text]);
  }
  return h(
    'nav',
    { class: 'mainnav', 'aria-label': 'Main' },
    h(
      'ul',
      null,
      links.map(([href, text]) => {
        const current = path === href || (href.endsWith('/worklist') && path.startsWith(href.replace('/worklist', '/studies'))) || (href.endsWith('/messages') && path.startsWith(`${href}/`)) || (href.endsWith('/patients') && path.startsWith(`${href}/`));
        return h('li', null, h('a', { href: `#${href}`, 'aria-current': current ? 'page' : undefined }, text));
      }),
    ),
  );
}
