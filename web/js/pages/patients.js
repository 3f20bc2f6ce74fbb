// @ts-check
import { get, query } from '../api.js';
import { formatDate, h } from '../dom.js';
import { field, filterForm } from '../forms.js';
import { emptyState, errorBox, table } from '../widgets.js';

const searchNames = ['name', 'identifier', 'birth_date'];

/**
 * Find a patient of the site by part of the name, an identifier or the birth date.
 * @param {import('../routes.js').PageContext} context
 */
export async function patientsPage(context) {
  const siteId = context.site.id;
  /** @type {Record<string, string>} */
  const criteria = {};
  for (const name of searchNames) {
    const value = context.query.get(name);
    if (value) criteria[name] = value;
  }
  const form = filterForm({
    label: 'Find a patient',
    submit: 'Search',
    names: searchNames,
    fields: [
      field({ label: 'Name', name: 'name', value: criteria.name, hint: 'Any part of a name', attrs: { maxlength: 200 } }),
      field({ label: 'Identifier', name: 'identifier', value: criteria.identifier, hint: 'The exact MRN or other identifier', attrs: { maxlength: 200 } }),
      field({ label: 'Birth date', name: 'birth_date', type: 'date', value: criteria.birth_date }),
    ],
    go: (params) => context.navigate(`/sites/${siteId}/patients${query(params)}`),
  });
  let results = null;
  if (Object.keys(criteria).length > 0) {
    try {
      const { patients } = await get(`/api/sites/${siteId}/patients${query({ ...criteria, limit: 50 })}`);
      results = table({
        caption: 'Patients found',
        columns: ['Name', 'Identifier', 'Birth date', 'Sex'],
        rows: patients.map((/** @type {any} */ p) => [
          h('a', { href: `#/sites/${siteId}/patients/${encodeURIComponent(p.id)}` }, p.name ?? 'Unnamed patient'),
          p.identifier ?? '—',
          formatDate(p.birth_date),
          p.gender ?? '—',
        ]),
        empty: emptyState('No patient matches', h('p', null, 'Check the spelling, try part of the name only, or search by identifier.')),
      });
      if (patients.length === 50) results = [results, h('p', { class: 'hint' }, 'The first 50 matches are shown: add a birth date or an identifier to narrow the search.')];
    } catch (error) {
      results = errorBox(/** @type {any} */ (error).message);
    }
  }
  return {
    title: 'Patients',
    body: [
      h('h1', null, 'Patients'),
      h('p', { class: 'lead' }, 'Patients registered at this site (HL7 v2 ADT, FHIR, DICOM) with their results, conditions, allergies, documents and studies.'),
      form,
      results ?? emptyState('Search for a patient', h('p', null, 'Give part of a name, an identifier or a birth date.')),
    ],
  };
}
