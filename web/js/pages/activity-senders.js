// @ts-check
// The activity dashboard's tables of senders of every kind, and the service's health.
import { h } from '../dom.js';
import { formatInstant } from '../time-format.js';
import { table } from '../widgets.js';

/** @param {any} activity @param {string} siteId */
export function clientTable(activity, siteId) {
  return table({
    caption: 'Integration clients of the last 24 hours',
    columns: ['Integration client', 'Last hour: received, accepted, errored', 'Last 24 hours: received, accepted, errored', 'Last message'],
    rows: activity.integration_clients.map((/** @type {any} */ c) => [
      c.name === null ? `Removed client ${c.client_id.slice(0, 8)}` : h('a', { href: `#/sites/${siteId}/clients` }, c.name),
      `${c.last_hour.received}, ${c.last_hour.accepted}, ${c.last_hour.errored}`,
      `${c.last_day.received}, ${c.last_day.accepted}, ${c.last_day.errored}`,
      formatInstant(c.last_message_at),
    ]),
    empty: h('p', null, 'No message from an integration client in the last 24 hours.'),
  });
}

/** @param {any} activity */
export function keyTable(activity) {
  return table({
    caption: 'API keys of the last 24 hours',
    columns: ['API key', 'Used over', 'Last hour: accepted, errored', 'Last 24 hours: accepted, errored', 'Last request', 'Last error'],
    rows: activity.api_keys.map((/** @type {any} */ k) => [
      k.prefix === null ? `Removed key ${k.key_id.slice(0, 8)}` : `${k.label || 'unlabelled'} (cg_${k.prefix}_…)`,
      k.surfaces.map((/** @type {string} */ s) => (s === 'hl7' ? 'HL7' : s === 'dicomweb' ? 'DICOMweb' : s.toUpperCase())).join(', '),
      `${k.last_hour.accepted}, ${k.last_hour.errored}`,
      `${k.last_day.accepted}, ${k.last_day.errored}`,
      formatInstant(k.last_request_at),
      k.last_error_at ? formatInstant(k.last_error_at) : 'none',
    ]),
    empty: h('p', null, 'No request with an API key in the last 24 hours.'),
  });
}

/** @param {any} counts */
function aeCells(counts) {
  return `${counts.associations}, ${counts.associations_rejected}, ${counts.instances_stored}, ${counts.instances_failed}`;
}

/** @param {any} activity */
export function aeTitleTable(activity) {
  return table({
    caption: 'Calling AE titles of the last 24 hours',
    columns: ['Calling AE title', 'Last hour: associations, rejected, instances stored, failed', 'Last 24 hours: associations, rejected, instances stored, failed', 'Last activity'],
    rows: activity.ae_titles.map((/** @type {any} */ a) => [a.calling_ae_title, aeCells(a.last_hour), aeCells(a.last_day), formatInstant(a.last_activity_at)]),
    empty: h('p', null, 'No DICOM association in the last 24 hours.'),
  });
}

/** @param {number} bytes */
function gigabytes(bytes) {
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

/** @param {any} activity */
export function healthList(activity) {
  const health = activity.health;
  const nodes = health.nodes.length === 0
    ? 'no node lease recorded (a single process without a node id)'
    : health.nodes.map((/** @type {any} */ n) => `${n.node_id} ${n.lease === 'live' ? 'live' : 'expired (stopped without releasing its id)'}, ${n.workers_up} serving ${n.workers_up === 1 ? 'process' : 'processes'} up, heartbeat ${formatInstant(n.heartbeat_at)}`).join('; ');
  const disks = health.disks.map((/** @type {any} */ d) => `${d.name === 'data' ? 'data' : 'DICOM storage'} ${gigabytes(d.free_bytes)} free of ${gigabytes(d.total_bytes)} (${Math.round((100 * d.free_bytes) / Math.max(1, d.total_bytes))} %)`).join('; ');
  const item = (/** @type {string} */ term, /** @type {string} */ value) => [h('dt', null, term), h('dd', null, value)];
  return h('dl', { class: 'facts' },
    item('Ready', health.ready ? 'yes: the database is reachable' : 'no: the database is not reachable'),
    item('Nodes', nodes),
    item('Workers', `${health.workers} configured${health.worker ? `; this answer from worker ${health.worker}` : ''}${health.answering_node ? ` of node ${health.answering_node}` : ''}`),
    item('Disk free', disks || 'unknown'),
    item('Last error', activity.last_error_at ? formatInstant(activity.last_error_at) : 'none recorded'),
  );
}
