/**
 * patients search: the site's patients by part of a name, an identifier or a birth date (the admin
 * app's search); patients show: one patient's chart, its resources as FHIR R4 JSON. Both are
 * clinical reads, recorded in the data access log like the admin app's.
 */
import type { Patient } from '@medplum/fhirtypes';
import { DomainError } from '../../domain/errors.ts';
import { maxPatientSearchResults, readPatientChart, searchPatients } from '../../domain/patients/chart.ts';
import { personName } from '../../domain/patients/person-name.ts';
import { resolveSite, siteContextFor } from '../../domain/sites/sites.ts';
import type { CommandContext, CommandOptions } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { recordOperatorRead } from '../record-read.ts';
import { withDatabase } from '../with-database.ts';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function patientRow(patient: Patient) {
  return {
    id: patient.id!,
    name: personName(patient),
    birth_date: patient.birthDate ?? null,
    gender: patient.gender ?? null,
    identifiers: (patient.identifier ?? []).map((identifier) => identifier.value).filter((value): value is string => value !== undefined),
    active: patient.active !== false,
  };
}

export async function patientsCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'show') return showCommand(options, positionals, json);
  const limit = Number(options.optional('limit') ?? '50');
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPatientSearchResults) throw new UsageError(`--limit must be 1 to ${maxPatientSearchResults}`);
  const criteria = { name: options.optional('name'), identifier: options.optional('identifier'), birthDate: options.optional('birth-date') };
  if (!criteria.name && !criteria.identifier && !criteria.birthDate) throw new UsageError('patients search needs --name, --identifier or --birth-date');
  const patients = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    const given = Object.fromEntries(Object.entries(criteria).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const found = await searchPatients(db, site, { limit, ...given });
    const ids = found.map((patient) => patient.id!);
    await recordOperatorRead(db, site.siteId, { interaction: 'search', resourceType: 'Patient', query: new URLSearchParams(given).toString(), resourceIds: ids, patientIds: ids });
    return found;
  });
  const rows = patients.map(patientRow);
  print({ patients: rows }, json, () => formatTable(rows, ['id', 'name', 'birth_date', 'gender', 'identifiers']));
}

async function showCommand(options: CommandOptions, positionals: string[], json: boolean): Promise<void> {
  const [patientId] = positionals;
  if (!patientId || positionals.length > 1) throw new UsageError('patients show takes one patient id: patients show PATIENT_ID --site SITE');
  const chart = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    const found = uuid.test(patientId) ? await readPatientChart(db, site, patientId) : undefined;
    if (!found) throw new DomainError('not-found', `no patient ${patientId} in this site`);
    await recordOperatorRead(db, site.siteId, { interaction: 'view', resourceType: 'Patient', resourceIds: [found.patient.id!], patientIds: [found.patient.id!] });
    return found;
  });
  const document = {
    ...patientRow(chart.patient),
    patient: chart.patient,
    observations: chart.observations,
    conditions: chart.conditions,
    allergies: chart.allergies,
    documents: chart.documents,
    studies: chart.studies.map((study) => ({ study_uid: study.studyInstanceUid, study_date: study.studyDate, modalities: study.modalities, description: study.studyDescription, report_status: study.reportStatus })),
    reports: chart.reports.map((report) => ({ id: report.id, study_uid: report.studyInstanceUid, status: report.status, completed_at: report.completedAt, text: report.text })),
    truncated: chart.truncated,
  };
  print(document, json, () =>
    formatRecord({
      ...patientRow(chart.patient),
      observations: chart.observations.length,
      conditions: chart.conditions.length,
      allergies: chart.allergies.length,
      documents: chart.documents.length,
      studies: chart.studies.length,
      reports: chart.reports.length,
    }) +
    (document.studies.length ? `\n\nstudies\n${formatTable(document.studies, ['study_uid', 'study_date', 'modalities', 'description', 'report_status'])}` : '') +
    (chart.truncated ? '\n(some lists were cut; --json or FHIR has them all)' : ''),
  );
}
