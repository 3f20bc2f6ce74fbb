import type { DiagnosticReport } from '@medplum/fhirtypes';
import type { ImagingReport } from './reports.ts';

/**
 * The FHIR view of an internal imaging report (issue 3 point 5). It has one version, the
 * report's own optimistic-concurrency counter, so vread works on the current version only.
 */
export function diagnosticReportOf(report: ImagingReport): DiagnosticReport {
  const view: DiagnosticReport = {
    resourceType: 'DiagnosticReport',
    id: report.id,
    meta: { versionId: String(report.version), lastUpdated: report.updatedAt.toISOString() },
    identifier: [{ system: 'urn:dicom:uid', value: `urn:oid:${report.studyInstanceUid}` }],
    status: report.status === 'completed' ? 'final' : 'preliminary',
    category: [
      {
        coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0074', code: 'RAD', display: 'Radiology' }],
      },
    ],
    code: {
      coding: [{ system: 'http://loinc.org', code: '18748-4', display: 'Diagnostic imaging study' }],
      ...(report.studyDescription ? { text: report.studyDescription } : {}),
    },
    conclusion: report.text,
    presentedForm: [
      { contentType: 'text/plain; charset=utf-8', data: Buffer.from(report.text, 'utf8').toString('base64'), title: 'Report text' },
    ],
  };
  if (report.patientId) view.subject = { reference: `Patient/${report.patientId}` };
  if (report.studyDateTime) view.effectiveDateTime = report.studyDateTime;
  if (report.completedAt) view.issued = report.completedAt.toISOString();
  return view;
}
