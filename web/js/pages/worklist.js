// @ts-check
import { get, query } from '../api.js';
import { badge, formatDate, h } from '../dom.js';
import { field, filterForm, markFieldProblems } from '../forms.js';
import { emptyState, table } from '../widgets.js';

const pageSize = 25;
const filterNames = ['from', 'to', 'modality', 'patient', 'step_status', 'report_status'];

/** @param {import('../routes.js').PageContext} context */
export async function worklistPage(context) {
  const siteId = context.site.id;
  /** @type {Record<string, string>} */
  const filters = {};
  for (const name of filterNames) {
    const value = context.query.get(name);
    if (value) filters[name] = value;
  }
  const offset = Math.max(0, Number(context.query.get('offset')) || 0);
  const base = `/sites/${siteId}/worklist`;
  const go = (/** @type {Record<string, string | number>} */ params) => context.navigate(`${base}${query(params)}`);

  const form = filterForm({
    label: 'Filter the worklist',
    submit: 'Apply filters',
    names: filterNames,
    fields: [
      field({ label: 'Study date from', name: 'from', type: 'date', value: filters.from }),
      field({ label: 'Study date to', name: 'to', type: 'date', value: filters.to }),
      field({ label: 'Modality (CT, MR…)', name: 'modality', value: filters.modality, attrs: { maxlength: 16, size: 6 } }),
      field({ label: 'Patient name or ID', name: 'patient', value: filters.patient, attrs: { maxlength: 200 } }),
      field({ label: 'Procedure step', name: 'step_status', value: filters.step_status, options: [['', 'Any'], ['IN PROGRESS', 'In progress'], ['COMPLETED', 'Completed'], ['DISCONTINUED', 'Discontinued'], ['none', 'None recorded']] }),
      field({ label: 'Report', name: 'report_status', value: filters.report_status, options: [['', 'Any'], ['none', 'Not reported'], ['draft', 'Draft'], ['completed', 'Completed']] }),
    ],
    go,
    normalize: (name, value) => (name === 'modality' ? value.toUpperCase() : value),
  });

  let result;
  /** @type {any} */
  let failure = null;
  try {
    result = await get(`/api/sites/${siteId}/studies${query({ ...filters, limit: pageSize, offset })}`);
  } catch (error) {
    failure = error;
    result = { studies: [], total: 0 };
  }
  // Show a filter problem next to its field instead of failing the page.
  if (failure) markFieldProblems(form, failure.fields);
  const filtered = Object.keys(filters).length > 0;
  const rows = result.studies.map((/** @type {any} */ study) => [
    formatDate(study.study_date),
    [
      h('a', { href: `#/sites/${siteId}/studies/${encodeURIComponent(study.study_instance_uid)}` }, study.patient_name ?? 'Unnamed patient'),
      h('div', { class: 'meta' }, `ID ${study.dicom_patient_id ?? '—'}`, study.patient_id ? [' · ', h('a', { href: `#/sites/${siteId}/patients/${encodeURIComponent(study.patient_id)}`, 'aria-label': `Patient record of ${study.patient_name ?? 'this patient'}` }, 'Patient record')] : null),
    ],
    study.study_description ?? '—',
    study.modalities.join(', ') || '—',
    `${study.series_count} / ${study.instance_count}`,
    badge(study.step_status ?? 'none'),
    badge(study.report_status ?? 'none'),
  ]);
  const first = result.total === 0 ? 0 : offset + 1;
  const last = offset + result.studies.length;
  const pager = h('nav', { class: 'pager', 'aria-label': 'Worklist pages' },
    h('button', { type: 'button', disabled: offset === 0, onclick: () => go({ ...filters, offset: Math.max(0, offset - pageSize) }) }, 'Previous'),
    h('span', { 'aria-live': 'polite' }, `${first}–${last} of ${result.total}`),
    h('button', { type: 'button', disabled: last >= result.total, onclick: () => go({ ...filters, offset: offset + pageSize }) }, 'Next'),
  );
  const empty = failure
    ? emptyState('The filters need a correction', h('p', null, failure.message))
    : filtered
      ? emptyState('No studies match these filters', h('p', null, 'Widen the date range or clear the filters.'))
      : emptyState('No studies yet', h('p', null, `Studies appear here when a modality sends images to this site's DICOM AE title ${context.site.ae_title}.`, context.user.role !== 'clinician' ? [' ', h('a', { href: `#/sites/${siteId}/connectivity` }, 'See the connection settings'), '.'] : ''));
  return {
    title: 'Worklist',
    body: [
      h('h1', null, 'Worklist'),
      form,
      table({ caption: 'Studies', columns: ['Study date', 'Patient', 'Description', 'Modality', 'Series / images', 'Procedure step', 'Report'], rows, empty }),
      result.total > 0 ? pager : null,
    ],
  };
}
