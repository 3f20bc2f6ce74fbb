import type { ProcedureStep } from './procedure-steps.ts';

/** A procedure step as the operator sees it, in the admin API's and the CLI's JSON. */
export function procedureStepJson(step: ProcedureStep) {
  return {
    sop_instance_uid: step.sopInstanceUid,
    status: step.status,
    modality: step.modality,
    station_ae_title: step.stationAeTitle,
    started_at: step.startedAt,
    ended_at: step.endedAt,
    procedure: step.procedureCode ? (step.procedureCode.codeMeaning ?? step.procedureCode.codeValue) : null,
    source: step.source,
    updated_at: step.updatedAt,
  };
}
