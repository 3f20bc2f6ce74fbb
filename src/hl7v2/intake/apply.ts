/** Applies a planned message to the site's records inside the caller's transaction. */
import type { NamedStatement, Transaction } from '../../storage/database.ts';
import { ensurePatient, findPatientId, upsertPatientDemographics } from '../../domain/patients/demographics.ts';
import { mergePatients } from '../../domain/patients/merge.ts';
import { recordPatientResults } from '../../domain/patients/observations.ts';
import { correctVisit } from '../../domain/patients/visit-corrections.ts';
import { visitUpsert } from '../../domain/patients/visits.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import { errorCodes, warning, type Problem } from '../problems.ts';
import type { Plan } from './plan.ts';
import type { VisitCorrectionPlan } from './visit-events.ts';

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
    case 'visit-correction':
      await applyVisitCorrection(tx, site, plan, summary);
      return summary;
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

/**
 * A cancel (A11, A12, A13) of a patient or visit the site does not know has nothing to undo: it
 * is accepted with a warning, as for an unknown merge source, and creates nothing (a cancel that
 * created the visit it cancels would show a visit that never was).
 */
async function applyVisitCorrection(tx: Transaction, site: SiteContext, plan: VisitCorrectionPlan, summary: ApplySummary): Promise<void> {
  const identifier = plan.patient.identifier![0]!.value!;
  const patientId = await findPatientId(tx, site, plan.patient);
  if (!patientId) {
    summary.problems.push(warning(errorCodes.unknownKeyIdentifier, `no patient with identifier ${identifier} exists in this site: ADT^${plan.event} had nothing to undo; nothing was changed`, { segment: 'PID', field: 3 }));
    return;
  }
  summary.patientIds.push(patientId);
  if (await correctVisit(tx, site, patientId, plan.visitNumber, plan.correction)) return;
  summary.problems.push(
    warning(errorCodes.unknownKeyIdentifier, `patient ${identifier} has no visit ${plan.visitNumber} in this site: ADT^${plan.event} had nothing to undo; nothing was changed`, {
      segment: 'PV1',
      sequence: plan.pv1.sequence,
      field: 19,
    }),
  );
}
