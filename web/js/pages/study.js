// @ts-check
import { get, post, put } from '../api.js';
import { badge, formatDate, formatDateTime, h, replace } from '../dom.js';
import { field, form, showErrors } from '../forms.js';
import { studyViewer } from '../viewer/study-viewer.js';
import { announce, confirmDialog, emptyState, section, table } from '../widgets.js';
import { forgetDraft, guardDraft } from '../report-draft.js';
import { formatInstant } from '../time-format.js';
import { demographicsComparison, patientLink } from './patient-demographics.js';

/** @param {import('../routes.js').PageContext} context */
export async function studyPage(context) {
  const siteId = context.site.id;
  const study = await get(`/api/sites/${siteId}/studies/${encodeURIComponent(context.params.studyUid)}`);
  const sex = { M: 'male', F: 'female', O: 'other' }[/** @type {'M' | 'F' | 'O'} */ (study.patient_sex)] ?? '—';
  const facts = h('dl', { class: 'facts' },
    fact('Patient', study.patient_name ?? 'Unnamed patient'),
    fact('Patient ID', study.dicom_patient_id ?? '—'),
    fact('Birth date', formatDate(study.patient_birth_date)),
    fact('Sex', sex),
    fact('Study date', studyWhen(study)),
    fact('Accession number', study.accession_number ?? '—'),
    fact('Description', study.study_description ?? '—'),
    fact('Modalities', study.modalities.join(', ') || '—'),
    fact('Series / images', `${study.series_count} / ${study.instance_count}`),
    fact('Procedure step', badge(study.step_status ?? 'none')),
    fact('Report', badge(study.report_status ?? 'none')),
    fact('Study Instance UID', h('code', { class: 'uid' }, study.study_instance_uid)),
  );
  const series = table({
    caption: 'Series',
    columns: ['#', 'Modality', 'Description', 'Images', 'Series Instance UID'],
    rows: study.series.map((/** @type {any} */ s) => [s.series_number ?? '—', s.modality ?? '—', s.series_description ?? '—', s.instance_count, h('code', { class: 'uid' }, s.series_instance_uid)]),
    empty: emptyState('No series', h('p', null, 'No images of this study have been indexed.')),
  });
  const steps = table({
    caption: 'Procedure steps',
    columns: ['Status', 'Procedure', 'Modality', 'Station', 'Started', 'Ended', 'Source'],
    rows: study.procedure_steps.map((/** @type {any} */ p) => [badge(p.status), p.procedure ?? '—', p.modality ?? '—', p.station_ae_title ?? '—', formatDateTime(p.started_at), formatDateTime(p.ended_at), p.source]),
    empty: emptyState('No procedure steps', h('p', null, 'The modality has not reported a performed procedure step (MPPS) for this study.')),
  });
  const completed = study.reports.filter((/** @type {any} */ r) => r.status === 'completed');
  const drafts = study.reports.filter((/** @type {any} */ r) => r.status === 'draft');
  const reportList = study.reports.length === 0
    ? emptyState('Not reported yet', h('p', null, context.user.role === 'clinician' ? 'Write the report below: save it as a draft as often as you like, then complete it to sign it.' : 'Clinicians of the site write reports here.'))
    : h('ol', { class: 'reports' }, study.reports.map((/** @type {any} */ r) => h('li', { class: 'report' },
        h('p', { class: 'meta' }, badge(r.status), ' ', r.status === 'completed' ? `Signed by ${r.author_email ?? 'unknown'} on ${formatDateTime(r.completed_at)}` : `Draft by ${r.author_email ?? 'unknown'}, saved ${formatDateTime(r.updated_at)}`),
        h('pre', { class: 'report-text' }, r.text || '(empty draft)'),
      )));

  return {
    title: study.patient_name ? `Study of ${study.patient_name}` : 'Study',
    body: [
      h('p', { class: 'breadcrumb' }, h('a', { href: `#/sites/${siteId}/worklist` }, '← Worklist'), patientLink(siteId, study.patient_id)),
      h('h1', null, study.study_description ?? 'Study', h('span', { class: 'subtitle' }, ` · ${study.patient_name ?? 'Unnamed patient'}`)),
      facts,
      await demographicsComparison(context, study),
      // The report is written beside the images (below them on a narrow screen).
      h('div', { class: 'study-workspace' },
        section('Images', studyViewer(context, study)),
        section('Reports', reportList, context.user.role === 'clinician' ? reportEditor(context, study.study_instance_uid, drafts[0] ?? null, completed.length > 0) : null)),
      section('Series', series),
      section('Procedure steps', steps),
    ],
  };
}

/**
 * The study's start as an instant when the server could place it (the modality's time zone
 * offset, or the site's zone); else DICOM's date and local time, said to be the modality's.
 * @param {any} study
 */
function studyWhen(study) {
  if (study.study_started_at) return formatInstant(study.study_started_at);
  const time = study.study_time ? ` ${study.study_time.slice(0, 8)} (modality's local time, zone unknown)` : '';
  return `${formatDate(study.study_date)}${time}`;
}

/** @param {string} term @param {any} value */
function fact(term, value) {
  return h('div', null, h('dt', null, term), h('dd', null, value));
}

/**
 * Draft, save, complete. The version the editor started from goes with every save, so two
 * people editing one draft cannot overwrite each other silently (412 from the server).
 * @param {import('../routes.js').PageContext} context @param {string} studyUid @param {any} draft @param {boolean} hasFinal
 */
function reportEditor(context, studyUid, draft, hasFinal) {
  const siteId = context.site.id;
  /** @type {{ id: string; version: number } | null} */
  let current = draft ? { id: draft.id, version: draft.version } : null;
  const status = h('p', { class: 'hint', 'aria-live': 'polite' }, draft ? `Editing the draft saved ${formatDateTime(draft.updated_at)}.` : '');
  const save = async (/** @type {string} */ text) => {
    if (current) {
      const saved = await put(`/api/sites/${siteId}/reports/${current.id}`, { text, version: current.version });
      current = { id: saved.id, version: saved.version };
    } else {
      const created = await post(`/api/sites/${siteId}/studies/${encodeURIComponent(studyUid)}/reports`, { text, status: 'draft' });
      current = { id: created.id, version: created.version };
    }
    forgetDraft(context.user.id, siteId, studyUid);
    replace(status, `Draft saved at ${formatInstant(new Date().toISOString())}.`);
    announce('Draft saved.');
  };
  const completeButton = h('button', { type: 'button', class: 'sign' }, 'Complete and sign');
  const editor = form({
    label: 'Report editor',
    submit: 'Save draft',
    children: [
      field({ label: hasFinal ? 'Addendum or corrected report' : 'Report', name: 'text', multiline: true, value: draft?.text ?? '', hint: 'Findings and impression. A completed report can no longer change; a correction is a new report.', attrs: { rows: 12, maxlength: 100000 } }),
      status,
    ],
    secondary: completeButton,
    action: async (values) => save(values.text),
  });
  completeButton.addEventListener('click', async () => {
    const text = /** @type {HTMLTextAreaElement} */ (editor.querySelector('textarea[name="text"]')).value;
    if (!text.trim()) {
      showErrors(/** @type {HTMLFormElement} */ (editor), { fields: [{ field: 'text', message: 'write the report before completing it' }] });
      return;
    }
    if (!(await confirmDialog({ title: 'Complete report', message: 'Complete and sign this report as yours? It becomes final (FHIR DiagnosticReport status final) and can no longer be edited.', confirm: 'Complete and sign' }))) return;
    try {
      if (current) await post(`/api/sites/${siteId}/reports/${current.id}/complete`, { text, version: current.version });
      else await post(`/api/sites/${siteId}/studies/${encodeURIComponent(studyUid)}/reports`, { text, status: 'completed' });
      forgetDraft(context.user.id, siteId, studyUid);
      announce('Report completed.');
      context.refresh();
    } catch (error) {
      showErrors(/** @type {HTMLFormElement} */ (editor), error);
    }
  });
  const textarea = /** @type {HTMLTextAreaElement} */ (editor.querySelector('textarea[name="text"]'));
  const offer = guardDraft({ userId: context.user.id, siteId, studyUid, textarea });
  return h('div', { class: 'editor' }, h('h3', null, draft ? 'Continue the draft' : hasFinal ? 'Write another report' : 'Write the report'), offer, editor);
}
