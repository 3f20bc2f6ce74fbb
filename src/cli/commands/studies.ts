/**
 * studies list: the site's worklist; studies show: one study with its series, procedure steps and
 * reports. Both are clinical reads, recorded in the data access log like the admin app's.
 */
import { DomainError } from '../../domain/errors.ts';
import { procedureStepJson } from '../../domain/imaging/procedure-step-json.ts';
import { getStudy } from '../../domain/imaging/study-detail.ts';
import { listWorklist, maxWorklistPageSize, type WorklistStudy } from '../../domain/imaging/worklist.ts';
import { resolveSite, siteContextFor } from '../../domain/sites/sites.ts';
import type { CommandContext, CommandOptions } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { recordOperatorRead } from '../record-read.ts';
import { withDatabase } from '../with-database.ts';

function studyRow(study: WorklistStudy) {
  return {
    study_uid: study.studyInstanceUid,
    patient_id: study.dicomPatientId,
    patient_name: study.patientDisplayName ?? study.patientName,
    study_date: study.studyDate,
    accession: study.accessionNumber,
    modalities: study.modalities,
    series: study.seriesCount,
    instances: study.instanceCount,
    step_status: study.stepStatus,
    report_status: study.reportStatus,
    description: study.studyDescription,
  };
}

export async function studiesCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'show') return showCommand(options, positionals, json);
  const limit = Number(options.optional('limit') ?? '100');
  if (!Number.isInteger(limit) || limit < 1 || limit > maxWorklistPageSize) throw new UsageError(`--limit must be 1 to ${maxWorklistPageSize}`);
  const result = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    const from = options.optional('from');
    const to = options.optional('to');
    const modality = options.optional('modality');
    const patient = options.optional('patient');
    const page = await listWorklist(db, site, { limit, offset: 0, ...(from ? { from } : {}), ...(to ? { to } : {}), ...(modality ? { modality } : {}), ...(patient ? { patient } : {}) });
    await recordOperatorRead(db, site.siteId, {
      interaction: 'search',
      resourceType: 'Study',
      query: new URLSearchParams(Object.entries({ from, to, modality, patient, limit: String(limit) }).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString(),
      resourceIds: page.studies.map((study) => study.studyInstanceUid),
      patientIds: page.studies.flatMap((study) => (study.patientId ? [study.patientId] : [])),
    });
    return page;
  });
  const rows = result.studies.map(studyRow);
  print({ total: result.total, studies: rows }, json, () =>
    `${formatTable(rows, ['study_uid', 'patient_id', 'patient_name', 'study_date', 'modalities', 'series', 'instances', 'step_status', 'report_status'])}\n${result.total} studies`,
  );
}

async function showCommand(options: CommandOptions, positionals: string[], json: boolean): Promise<void> {
  const [studyUid] = positionals;
  if (!studyUid || positionals.length > 1) throw new UsageError('studies show takes one study instance UID: studies show STUDY_UID --site SITE');
  const study = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    const found = await getStudy(db, site, studyUid);
    if (!found) throw new DomainError('not-found', `no study ${studyUid} in this site`);
    await recordOperatorRead(db, site.siteId, { interaction: 'view', resourceType: 'Study', resourceIds: [found.studyInstanceUid], patientIds: found.patientId ? [found.patientId] : [] });
    return found;
  });
  const document = {
    ...studyRow(study),
    fhir_patient_id: study.patientId,
    series: study.series.map((series) => ({
      series_uid: series.seriesInstanceUid,
      modality: series.modality,
      number: series.seriesNumber,
      description: series.seriesDescription,
      instances: series.instanceCount,
      size_bytes: series.sizeBytes,
    })),
    procedure_steps: study.procedureSteps.map(procedureStepJson),
    reports: study.reports.map((report) => ({
      id: report.id,
      status: report.status,
      version: report.version,
      author_user_id: report.authorUserId,
      created_at: report.createdAt,
      completed_at: report.completedAt,
      text: report.text,
    })),
  };
  print(document, json, () => {
    const { series, procedure_steps: steps, reports, ...summary } = document;
    return [
      formatRecord(summary),
      `\nseries\n${formatTable(series, ['series_uid', 'modality', 'number', 'description', 'instances'])}`,
      `\nprocedure steps\n${formatTable(steps, ['status', 'modality', 'station_ae_title', 'started_at', 'ended_at'])}`,
      ...reports.map((report) => `\nreport ${report.id} (${report.status}, version ${report.version})\n${report.text}`),
    ].join('\n');
  });
}
