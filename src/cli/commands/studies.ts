import { listWorklist, maxWorklistPageSize } from '../../domain/imaging/worklist.ts';
import { resolveSite, siteContextFor } from '../../domain/sites/sites.ts';
import type { CommandContext } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export async function studiesCommand({ options, json }: CommandContext): Promise<void> {
  const limit = Number(options.optional('limit') ?? '100');
  if (!Number.isInteger(limit) || limit < 1 || limit > maxWorklistPageSize) throw new UsageError(`--limit must be 1 to ${maxWorklistPageSize}`);
  const result = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    const from = options.optional('from');
    const to = options.optional('to');
    const modality = options.optional('modality');
    const patient = options.optional('patient');
    return listWorklist(db, site, { limit, offset: 0, ...(from ? { from } : {}), ...(to ? { to } : {}), ...(modality ? { modality } : {}), ...(patient ? { patient } : {}) });
  });
  const rows = result.studies.map((study) => ({
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
  }));
  print({ total: result.total, studies: rows }, json, () =>
    `${formatTable(rows, ['study_uid', 'patient_id', 'patient_name', 'study_date', 'modalities', 'series', 'instances', 'step_status', 'report_status'])}\n${result.total} studies`,
  );
}
