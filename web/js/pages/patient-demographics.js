// @ts-check
/**
 * On the study page: the patient record's demographics beside the DICOM header's, each
 * difference flagged in words. Modalities send what their worklist or operator typed; the
 * record is what registration (ADT, FHIR) says, so a difference is worth a look before reporting.
 */
import { get } from '../api.js';
import { formatDate, h } from '../dom.js';
import { section } from '../widgets.js';

/** @param {string} siteId @param {string | null} patientId */
export function patientLink(siteId, patientId) {
  if (!patientId) return null;
  return [' · ', h('a', { href: `#/sites/${siteId}/patients/${encodeURIComponent(patientId)}` }, 'Patient record')];
}

const dicomSex = /** @type {Record<string, string>} */ ({ M: 'male', F: 'female', O: 'other' });

/** Name parts as a set of lower-case words: "MARTIN^CLAIRE" and "Claire Martin" are the same name. @param {string | null | undefined} name */
function nameWords(name) {
  return (name ?? '').normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean).sort().join(' ');
}

/**
 * @param {import('../routes.js').PageContext} context @param {any} study
 * @returns {Promise<HTMLElement>}
 */
export async function demographicsComparison(context, study) {
  if (!study.patient_id) {
    return section('Patient record', h('p', null, 'This study is not linked to a patient record of the site.'));
  }
  let record;
  try {
    record = (await get(`/api/sites/${context.site.id}/patients/${encodeURIComponent(study.patient_id)}`)).patient;
  } catch {
    return section('Patient record', h('p', null, 'The patient record could not be read.'));
  }
  const identifiers = record.identifiers.map((/** @type {any} */ i) => i.value).filter(Boolean);
  /** @type {[string, string, string, boolean][]} label, record, header, same */
  const rows = [
    ['Name', record.name ?? '—', study.patient_name ?? '—', nameWords(record.name) === nameWords(study.patient_name)],
    ['Patient ID', identifiers.join(', ') || '—', study.dicom_patient_id ?? '—', identifiers.includes(study.dicom_patient_id)],
    ['Sex', record.gender ?? '—', dicomSex[study.patient_sex] ?? '—', (record.gender ?? null) === (dicomSex[study.patient_sex] ?? null)],
    ['Birth date', formatDate(record.birth_date), formatDate(study.patient_birth_date), (record.birth_date ?? null) === (study.patient_birth_date ?? null)],
  ];
  const differing = rows.filter((row) => !row[3]).map((row) => row[0].toLowerCase());
  return section(
    'Patient record and DICOM header',
    differing.length > 0
      ? h('p', { class: 'warning', role: 'note' }, `The DICOM header differs from the patient record in: ${differing.join(', ')}. The record is what registration says; check the modality's worklist entry before reporting.`)
      : h('p', { class: 'success' }, 'The DICOM header agrees with the patient record.'),
    h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Demographics compared' },
      h('table', { class: 'demographics' },
        h('caption', { class: 'visually-hidden' }, 'The patient record\'s demographics beside the DICOM header\'s'),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Item'), h('th', { scope: 'col' }, 'Patient record'), h('th', { scope: 'col' }, 'DICOM header'), h('th', { scope: 'col' }, 'Check'))),
        h('tbody', null, rows.map(([label, fromRecord, fromHeader, same]) => h('tr', { class: same ? '' : 'differs' },
          h('th', { scope: 'row' }, label),
          h('td', null, fromRecord),
          h('td', null, fromHeader),
          h('td', null, h('span', { class: `badge ${same ? 'good' : 'bad'}` }, same ? 'same' : 'differs')),
        ))),
      ),
    ),
    h('p', null, h('a', { href: `#/sites/${context.site.id}/patients/${encodeURIComponent(study.patient_id)}` }, `Open the patient record of ${record.name ?? 'this patient'}`)),
  );
}
