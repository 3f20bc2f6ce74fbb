/**
 * A patient's chart for clinicians: finding a patient of the site by name, identifier or birth
 * date, and everything the site holds about one (demographics, results, conditions, allergies,
 * documents, imaging studies and their reports), each list newest first. Reads only, always
 * inside the site: another site's patient is simply not found.
 */
import type { AllergyIntolerance, Condition, DocumentReference, Observation, Patient, Resource } from '@medplum/fhirtypes';
import type { Queryable } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import { searchReports, type ImagingReport } from '../imaging/report-queries.ts';
import { listWorklist, type WorklistStudy } from '../imaging/worklist.ts';
import { resourceStore, type SearchCondition } from '../records/resource-store.ts';
import type { SiteContext } from '../site-context.ts';

export interface PatientSearch {
  /** Part of any name (case- and accent-insensitive, as FHIR `name`). */
  name?: string;
  /** An identifier's exact value, of any system. */
  identifier?: string;
  /** yyyy-mm-dd. */
  birthDate?: string;
  limit: number;
}

export const maxPatientSearchResults = 100;
/** A chart shows at most this many of each kind; more is said, not hidden silently. */
export const chartListLimit = 500;

const isoDate = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

export async function searchPatients(db: Queryable, site: SiteContext, search: PatientSearch): Promise<Patient[]> {
  const conditions: SearchCondition[] = [];
  const name = search.name?.trim();
  const identifier = search.identifier?.trim();
  const birthDate = search.birthDate?.trim();
  if (name) conditions.push({ kind: 'name', values: [name] });
  if (identifier) conditions.push({ kind: 'token', param: 'identifier', values: [{ code: identifier }] });
  if (birthDate) {
    if (!isoDate.test(birthDate)) throw new DomainError('invalid', 'birth date must be a date (yyyy-mm-dd)', [{ message: 'a date as yyyy-mm-dd', location: 'birth_date' }]);
    conditions.push({ kind: 'birthdate', values: [{ prefix: 'eq', start: birthDate, end: birthDate }] });
  }
  if (conditions.length === 0) {
    throw new DomainError('invalid', 'give a name, an identifier or a birth date', [{ message: 'give a name, an identifier or a birth date', location: 'name' }]);
  }
  const limit = Math.min(Math.max(Math.trunc(search.limit) || 1, 1), maxPatientSearchResults);
  const result = await resourceStore(db, site).search({ type: 'Patient', conditions, sort: [{ key: 'name', descending: false }], count: limit, total: 'none' });
  return result.resources as Patient[];
}

export interface PatientChart {
  patient: Patient;
  observations: Observation[];
  conditions: Condition[];
  allergies: AllergyIntolerance[];
  documents: DocumentReference[];
  studies: WorklistStudy[];
  reports: ImagingReport[];
  /** True when some list was cut at chartListLimit. */
  truncated: boolean;
}

/** The chart of one patient of the site; undefined for an unknown or foreign id. */
export async function readPatientChart(db: Queryable, site: SiteContext, patientId: string): Promise<PatientChart | undefined> {
  const store = resourceStore(db, site);
  const patient = await store.read<Patient>('Patient', patientId);
  if (!patient) return undefined;
  const [compartment, studies, reports] = await Promise.all([
    store.listPatientCompartment(patientId),
    listWorklist(db, site, { patient: patientId, limit: chartListLimit, offset: 0 }),
    searchReports(db, site, { patientIds: [patientId], limit: chartListLimit, offset: 0 }),
  ]);
  const ofType = <T extends Resource>(type: T['resourceType'], when: (resource: T) => string | undefined) =>
    newestFirst(compartment.filter((resource): resource is T => resource.resourceType === type), when);
  const observations = ofType<Observation>('Observation', (o) => o.effectiveDateTime ?? o.effectivePeriod?.start ?? o.effectiveInstant ?? o.issued ?? o.meta?.lastUpdated);
  const conditions = ofType<Condition>('Condition', (c) => c.recordedDate ?? c.onsetDateTime ?? c.meta?.lastUpdated);
  const allergies = ofType<AllergyIntolerance>('AllergyIntolerance', (a) => a.recordedDate ?? a.onsetDateTime ?? a.meta?.lastUpdated);
  const documents = ofType<DocumentReference>('DocumentReference', (d) => d.date ?? d.meta?.lastUpdated);
  const lists = [observations, conditions, allergies, documents];
  return {
    patient,
    observations: observations.slice(0, chartListLimit),
    conditions: conditions.slice(0, chartListLimit),
    allergies: allergies.slice(0, chartListLimit),
    documents: documents.slice(0, chartListLimit),
    studies: studies.studies,
    reports: reports.reports,
    truncated: lists.some((list) => list.length > chartListLimit) || studies.total > chartListLimit || reports.total > chartListLimit,
  };
}

/**
 * Newest first by the clinically meaningful time. FHIR dateTimes may be partial ("2024") or carry
 * different offsets, so they are compared as instants (a partial one as its first moment).
 */
function newestFirst<T>(items: T[], when: (item: T) => string | undefined): T[] {
  const instant = (item: T) => {
    const value = when(item);
    const time = value ? Date.parse(value.length === 4 ? `${value}-01-01` : value.length === 7 ? `${value}-01` : value) : Number.NaN;
    return Number.isNaN(time) ? Number.NEGATIVE_INFINITY : time;
  };
  return items
    .map((item, order) => ({ item, time: instant(item), order }))
    .sort((a, b) => b.time - a.time || b.order - a.order)
    .map((entry) => entry.item);
}
