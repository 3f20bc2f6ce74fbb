// @ts-check
import { formatDateTime, h } from '../dom.js';
import { section, table } from '../widgets.js';

/** @param {number} bytes */
function readableBytes(bytes) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * The site's storage use as the service last computed it (hourly): totals, then each table.
 * @param {any} usage the body of GET /api/sites/{id}/usage
 */
export function storageUsageSection(usage) {
  if (!usage.computed_at) {
    return section('Storage use', h('p', { class: 'hint' }, 'Not computed yet: the service computes it within an hour of starting, then hourly.'));
  }
  return section(
    'Storage use',
    h('dl', { class: 'facts' },
      h('div', null, h('dt', null, 'Database'), h('dd', null, `${usage.database_rows.toLocaleString('en')} rows, ${readableBytes(usage.database_bytes)}`)),
      h('div', null, h('dt', null, 'DICOM files'), h('dd', null, `${usage.dicom_instances.toLocaleString('en')} instances, ${readableBytes(usage.dicom_bytes)}`)),
      h('div', null, h('dt', null, 'Computed'), h('dd', null, formatDateTime(usage.computed_at))),
    ),
    table({
      caption: 'Storage use by table',
      columns: ['Table', 'Rows', 'Size'],
      rows: usage.items.map((/** @type {any} */ item) => [item.item === 'dicom-files' ? 'DICOM files' : item.item, item.rows.toLocaleString('en'), readableBytes(item.bytes)]),
    }),
  );
}
