/** The patient domain: resolution, demographics, merge, visits and results. */
export { ensurePatient, upsertPatientDemographics } from './demographics.ts';
export { mergePatients, type MergeResult } from './merge.ts';
export { recordPatientResults } from './observations.ts';
export { listVisits, recordVisit, type StoredVisit, type VisitContext } from './visits.ts';
