/** Applies a planned message to the site's records inside the caller's transaction. */
import type { NamedStatement, Transaction } from '../../storage/database.ts';
import { ensurePatient, upsertPatientDemographics } from '../../domain/patients/demographics.ts';
import { mergePatients } from '../../domain/patients/merge.ts';
import { recordPatientResults } from '../../domain/patients/observations.ts';
import { visitUpsert } from '../../domain/patients/visits.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import { errorCodes, warning, type Problem } from '../problems.ts';
import type { Plan } from './plan.ts';

export interface ApplySummary {
  patientIds: string[];
  observationIds: string[];
  /** Warnings discovered while applying (for instance an unknown merge source). */
  problems: Problem[];
  /**
   * Writes nothing else depends on (the PV1 visit), left for the caller to send with the message
   * log entry in one round trip (recordMessage's `alongside`).
   */
  deferred: NamedStatement[];
}

export async function applyPlan(tx: Transaction, site: SiteContext, plan: Plan): Promise<ApplySummary> {
  const summary: ApplySummary = { patientIds: [], observationIds: [], problems: [], deferred: [] };
  switch (plan.kind) {
    case 'demographics': {
      const { patient } = await upsertPatientDemographics(tx, site, plan.patient, { clear: plan.clear });
      summary.patientIds.push(patient.id!);
      if (plan.visit) summary.deferred.push(visitUpsert(site, patient.id!, plan.visit));
      return summary;
    }
    case 'merge': {
      for (const merge of plan.merges) {
        const result = await mergePatients(tx, site, { sourceIdentifier: merge.sourceIdentifier, target: merge.target });
        summary.patientIds.push(result.targetId);
        if (!result.sourceFound) {
          summary.problems.push(
            warning(errorCodes.unknownKeyIdentifier, `no patient with identifier ${merge.sourceIdentifier} exists in this site; the target patient was created or updated, nothing was merged`, {
              segment: 'MRG',
              sequence: merge.location.sequence,
              field: 1,
            }),
          );
        }
      }
      return summary;
    }
    case 'results': {
      // Each PATIENT_RESULT group's results go to its own patient.
      for (const group of plan.groups) {
        const { patientId } = await ensurePatient(tx, site, group.patient);
        summary.patientIds.push(patientId);
        if (group.visit) summary.deferred.push(visitUpsert(site, patientId, group.visit));
        for (const stored of await recordPatientResults(tx, site, patientId, group.results)) {
          summary.observationIds.push(stored.resource.id!);
        }
      }
      return summary;
    }
  }
}
