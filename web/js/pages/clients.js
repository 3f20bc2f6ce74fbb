// @ts-check
import { get, patch, post } from '../api.js';
import { badge, formatDateTime, h, replace } from '../dom.js';
import { checkbox, describe, field, form } from '../forms.js';
import { announce, confirmDialog, emptyState, errorBox, section, table } from '../widgets.js';
import { timeZoneField, timeZoneProblem } from '../time-zone-field.js';

const charsets = /** @type {[string, string][]} */ ([['UNICODE UTF-8', 'UTF-8 (UNICODE UTF-8)'], ['8859/1', 'Latin-1 (8859/1)'], ['ASCII', 'ASCII']]);

/**
 * Checks an allowed-IP list as the server will (the server remains the authority), so that a
 * typo is flagged before submitting. Returns a message, or null when the list is acceptable.
 * @param {string} text
 * @param {boolean} anyAllowed
 */
export function allowedIpProblem(text, anyAllowed) {
  const entries = text.split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) return 'list at least one IP address or CIDR range';
  for (const entry of entries) {
    if (entry === '*') {
      if (!anyAllowed) return '"*" (any address) is not permitted by this site\'s policy; list addresses or ranges';
      continue;
    }
    const [address = '', prefix, extra] = entry.split('/');
    const v4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(address);
    const v6 = !v4 && address.includes(':') && isIpv6(address);
    if ((!v4 && !v6) || extra !== undefined) return `"${entry}" is not an IPv4/IPv6 address or CIDR range`;
    if (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (v4 ? 32 : 128))) return `"${entry}" has an invalid prefix length (0-${v4 ? 32 : 128})`;
  }
  return null;
}

/** @param {string} address */
function isIpv6(address) {
  if (!/^[0-9a-fA-F:.]+$/.test(address)) return false;
  try {
    new URL(`http://[${address}]/`);
    return true;
  } catch {
    return false;
  }
}

/**
 * @param {import('../routes.js').PageContext} context
 */
export async function clientsPage(context) {
  const siteId = context.site.id;
  const anyAllowed = Boolean(context.site.mllp_allow_any_ip);
  const { clients } = await get(`/api/sites/${siteId}/clients`);
  const notice = h('div', { class: 'notice-area' });
  const editorArea = h('div');

  /** @param {any} [client] */
  const editor = (client) =>
    form({
      label: client ? `Edit ${client.name}` : 'Register an integration client',
      submit: client ? 'Save changes' : 'Register client',
      secondary: client ? h('button', { type: 'button', onclick: () => replace(editorArea, section('Register an integration client', editor())) }, 'Cancel') : null,
      children: [
        field({ label: 'Name', name: 'name', required: true, value: client?.name, hint: 'e.g. "Lab system (Cerner)"; unique within the site.', attrs: { maxlength: 200 } }),
        field({ label: 'Protocol', name: 'protocol', options: [['hl7-mllp', 'HL7 v2 over MLLP']], value: client?.protocol ?? 'hl7-mllp' }),
        field({
          label: 'Allowed IPs',
          name: 'allowed_ips',
          required: true,
          multiline: true,
          value: client?.allowed_ips.join('\n'),
          hint: `Addresses the sender connects from: one per line or comma-separated; IPv4, IPv6 or CIDR ranges such as 10.20.0.0/16${anyAllowed ? ', or * for any address' : ''}.`,
          attrs: { rows: 3, spellcheck: 'false' },
        }),
        field({ label: 'Sending application (MSH-3)', name: 'sending_application', value: client?.sending_application, hint: 'Optional. When set, MSH-3 of every message must equal it.', attrs: { maxlength: 200 } }),
        field({ label: 'Sending facility (MSH-4)', name: 'sending_facility', value: client?.sending_facility, hint: 'Optional. When set, MSH-4 of every message must equal it.', attrs: { maxlength: 200 } }),
        field({ label: 'Character set when MSH-18 is empty', name: 'default_charset', options: charsets, value: client?.default_charset ?? 'UNICODE UTF-8' }),
        timeZoneField({
          label: 'Time zone',
          value: client?.time_zone,
          hint: `Times this sender writes without a UTC offset are read in this IANA zone. Blank: the site's (${context.site.time_zone ?? 'none: UTC'}).`,
        }),
        checkbox({ label: 'Enabled', name: 'enabled', checked: client ? client.enabled : true, hint: 'A disabled client\'s connections are refused.' }),
      ],
      action: async (values) => {
        const problem = allowedIpProblem(values.allowed_ips, anyAllowed);
        if (problem) throw { fields: [{ field: 'allowed_ips', message: problem }] };
        const zoneProblem = timeZoneProblem(values.time_zone);
        if (zoneProblem) throw { fields: [{ field: 'time_zone', message: zoneProblem }] };
        const body = {
          name: values.name,
          protocol: values.protocol,
          allowed_ips: values.allowed_ips.split(/[\s,]+/).filter(Boolean),
          sending_application: values.sending_application.trim() || null,
          sending_facility: values.sending_facility.trim() || null,
          default_charset: values.default_charset,
          time_zone: values.time_zone.trim() || null,
          enabled: values.enabled,
        };
        if (client) await patch(`/api/sites/${siteId}/clients/${client.id}`, body);
        else await post(`/api/sites/${siteId}/clients`, body);
        announce(client ? `${values.name} saved.` : `${values.name} registered.`);
        context.refresh();
      },
    });
  replace(editorArea, section('Register an integration client', editor()));

  const rows = clients.map((/** @type {any} */ client) => [
    client.name,
    'HL7 v2 / MLLP',
    h('ul', { class: 'plain' }, client.allowed_ips.map((/** @type {string} */ ip) => h('li', null, h('code', null, ip)))),
    [client.sending_application ?? 'any', ' / ', client.sending_facility ?? 'any'],
    client.time_zone ?? 'site\'s',
    badge(client.enabled ? 'enabled' : 'disabled'),
    formatDateTime(client.updated_at),
    h('div', { class: 'row-actions' },
      h('button', { type: 'button', onclick: () => {
        replace(editorArea, section(`Edit ${client.name}`, editor(client)));
        /** @type {HTMLElement | null} */ (editorArea.querySelector('input[name="name"]'))?.focus();
      } }, 'Edit'),
      h('button', { type: 'button', class: client.enabled ? 'danger' : '', onclick: async () => {
        if (client.enabled && !(await confirmDialog({ title: 'Disable client', message: `Disable ${client.name}? Its MLLP connections are refused until it is enabled again.`, confirm: 'Disable', danger: true }))) return;
        try {
          await patch(`/api/sites/${siteId}/clients/${client.id}`, { enabled: !client.enabled });
          announce(`${client.name} ${client.enabled ? 'disabled' : 'enabled'}.`);
          context.refresh();
        } catch (error) {
          replace(notice, errorBox(describe(error)));
        }
      } }, client.enabled ? 'Disable' : 'Enable'),
    ),
  ]);

  return {
    title: 'Integration clients',
    body: [
      h('h1', null, 'Integration clients'),
      h('p', { class: 'lead' }, 'Systems that send HL7 v2 over MLLP. A connection is accepted only from an allowed IP, and a message only when its MSH-3 and MSH-4 match where they are set.'),
      notice,
      table({
        caption: 'Integration clients of the site',
        columns: ['Name', 'Protocol', 'Allowed IPs', 'MSH-3 / MSH-4', 'Time zone', 'Status', 'Changed', 'Actions'],
        rows,
        empty: emptyState('No integration clients yet', h('p', null, 'Register each interface engine or lab system that sends HL7 v2 over MLLP: its IP addresses and, optionally, its MSH-3/MSH-4.')),
      }),
      editorArea,
    ],
  };
}
