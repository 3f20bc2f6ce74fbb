// @ts-check
import { get } from '../api.js';
import { badge, formatDate, h } from '../dom.js';
import { formatFhirDateTime, formatInstant } from '../time-format.js';
import { emptyState, section, table } from '../widgets.js';

/**
 * One patient's chart: demographics and identifiers from the patient record, then results,
 * conditions, allergies, documents, studies and reports, each newest first.
 * @param {import('../routes.js').PageContext} context
 */
export async function patientPage(context) {
  const siteId = context.site.id;
  const chart = await get(`/api/sites/${siteId}/patients/${encodeURIComponent(context.params.patientId)}`);
  const patient = chart.patient;
  const name = patient.name ?? 'Unnamed patient';
  const facts = h('dl', { class: 'facts' },
    fact('Name', name),
    fact('Birth date', formatDate(patient.birth_date)),
    fact('Sex', patient.gender ?? '—'),
    fact('Identifier', patient.identifier ?? '—'),
    patient.addresses.length > 0 ? fact('Address', patient.addresses.join('; ')) : null,
    patient.telecom.length > 0 ? fact('Contact', patient.telecom.join('; ')) : null,
    fact('Record updated', formatInstant(patient.last_updated)),
    patient.active ? null : fact('Status', badge('inactive (merged)', 'bad')),
  );
  const identifiers = table({
    caption: 'Identifiers',
    columns: ['Value', 'Type', 'System', 'Use'],
    rows: patient.identifiers.map((/** @type {any} */ i) => [i.value ?? '—', i.type ?? '—', i.system ? h('code', { class: 'uid' }, i.system) : '—', i.use ?? '—']),
  });
  const results = table({
    caption: 'Results',
    columns: ['Time', 'Test', 'Value', 'Unit', 'Reference range', 'Flag', 'Status'],
    rows: chart.observations.map((/** @type {any} */ o) => [
      formatFhirDateTime(o.effective ?? o.issued),
      [o.name ?? '—', o.code ? h('div', { class: 'meta' }, o.code) : null],
      h('span', { class: abnormal(o) ? 'value abnormal' : 'value' }, o.value ?? '—'),
      o.unit ?? '',
      o.reference_range ?? '—',
      o.interpretation.length > 0 ? o.interpretation.map((/** @type {any} */ f) => flag(f)) : '—',
      o.status,
    ]),
    empty: emptyState('No results', h('p', null, 'Results arrive over HL7 v2 (ORU^R01) or FHIR (Observation).')),
  });
  const conditions = table({
    caption: 'Conditions',
    columns: ['Condition', 'Status', 'Onset', 'Recorded'],
    rows: chart.conditions.map((/** @type {any} */ c) => [c.name ?? '—', c.clinical_status ?? '—', formatFhirDateTime(c.onset), formatFhirDateTime(c.recorded)]),
    empty: emptyState('No conditions recorded'),
  });
  const allergies = table({
    caption: 'Allergies',
    columns: ['Substance', 'Status', 'Criticality', 'Reactions', 'Recorded'],
    rows: chart.allergies.map((/** @type {any} */ a) => [a.substance ?? '—', a.clinical_status ?? '—', a.criticality ?? '—', a.reactions.join(', ') || '—', formatFhirDateTime(a.recorded)]),
    empty: emptyState('No allergies recorded'),
  });
  const documents = table({
    caption: 'Documents',
    columns: ['Date', 'Type', 'Description', 'Format', 'Status'],
    rows: chart.documents.map((/** @type {any} */ d) => [formatFhirDateTime(d.date), d.type ?? '—', d.description ?? '—', d.content_type ?? '—', d.status]),
    empty: emptyState('No documents'),
  });
  const reportsByStudy = new Map();
  for (const report of chart.reports) reportsByStudy.set(report.study_instance_uid, [...(reportsByStudy.get(report.study_instance_uid) ?? []), report]);
  const studies = chart.studies.length === 0
    ? emptyState('No imaging studies', h('p', null, 'Studies appear when a modality sends images for this patient.'))
    : h('ol', { class: 'reports' }, chart.studies.map((/** @type {any} */ s) => h('li', { class: 'report' },
        h('p', null,
          h('a', { href: `#/sites/${siteId}/studies/${encodeURIComponent(s.study_instance_uid)}` }, s.study_description ?? 'Study'),
          ` · ${s.modalities.join(', ') || '—'} · `,
          s.study_started_at ? formatInstant(s.study_started_at) : formatDate(s.study_date),
          ' · report ', badge(s.report_status ?? 'none'),
        ),
        (reportsByStudy.get(s.study_instance_uid) ?? []).filter((/** @type {any} */ r) => r.status === 'completed').map((/** @type {any} */ r) => [
          h('p', { class: 'meta' }, `Signed by ${r.author_email ?? 'unknown'} on ${formatInstant(r.completed_at)}`),
          h('pre', { class: 'report-text' }, r.text),
        ]),
      )));
  return {
    title: name,
    body: [
      h('p', { class: 'breadcrumb' }, h('a', { href: `#/sites/${siteId}/patients` }, '← Patients'), ' · ', h('a', { href: `#/sites/${siteId}/worklist?patient=${encodeURIComponent(patient.id)}` }, 'Studies in the worklist')),
      h('h1', null, name, h('span', { class: 'subtitle' }, ` · ${formatDate(patient.birth_date)} · ${patient.gender ?? 'sex unknown'}`)),
      facts,
      chart.truncated ? h('p', { class: 'warning' }, 'This patient has more than 500 entries of some kind: only the newest 500 of each are shown here; FHIR search reaches all.') : null,
      section('Results', results),
      section('Conditions', conditions),
      section('Allergies', allergies),
      section('Documents', documents),
      section('Imaging studies and reports', studies),
      section('Identifiers', identifiers),
    ],
  };
}

/** @param {string} term @param {any} value */
function fact(term, value) {
  return h('div', null, h('dt', null, term), h('dd', null, value));
}

const flagWords = /** @type {Record<string, string>} */ ({ H: 'High', HH: 'Critically high', L: 'Low', LL: 'Critically low', A: 'Abnormal', AA: 'Critically abnormal', N: 'Normal', HU: 'Very high', LU: 'Very low', R: 'Resistant', S: 'Susceptible', I: 'Intermediate', POS: 'Positive', NEG: 'Negative' });

/** A flag in words as well as its code: colour alone carries no meaning. @param {{ code: string | null; text: string | null }} f */
function flag(f) {
  const words = f.text ?? (f.code ? flagWords[f.code] : undefined) ?? f.code ?? '';
  const tone = f.code === 'N' || f.code === 'S' || f.code === 'NEG' ? 'neutral' : 'bad';
  return h('span', { class: `badge ${tone}` }, f.code && words !== f.code ? `${words} (${f.code})` : words);
}

/** @param {any} o */
function abnormal(o) {
  return o.interpretation.some((/** @type {any} */ f) => f.code && !['N', 'S', 'NEG'].includes(f.code));
}
