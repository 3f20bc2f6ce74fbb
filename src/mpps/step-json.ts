/** The stored procedure step as the MPPS intake answers it (snake_case, like the request). */
import type { ProcedureStep } from '../domain/imaging/procedure-steps.ts';

export interface ProcedureStepJson {
  sop_instance_uid: string;
  study_uid: string;
  status: string;
  modality: string | null;
  station_ae_title: string | null;
  started_at: string | null;
  ended_at: string | null;
  procedure_code: { code_value: string; coding_scheme_designator?: string; code_meaning?: string } | null;
  /** Whether images of the study have reached this site yet. */
  study_indexed: boolean;
  created_at: string;
  updated_at: string;
  version: number;
}

export function stepToJson(step: ProcedureStep): ProcedureStepJson {
  const code = step.procedureCode;
  return {
    sop_instance_uid: step.sopInstanceUid,
    study_uid: step.studyInstanceUid,
    status: step.status,
    modality: step.modality,
    station_ae_title: step.stationAeTitle,
    started_at: step.startedAt?.toISOString() ?? null,
    ended_at: step.endedAt?.toISOString() ?? null,
    procedure_code: code
      ? {
          code_value: code.codeValue,
          ...(code.codingSchemeDesignator !== undefined ? { coding_scheme_designator: code.codingSchemeDesignator } : {}),
          ...(code.codeMeaning !== undefined ? { code_meaning: code.codeMeaning } : {}),
        }
      : null,
    study_indexed: step.studyIndexed,
    created_at: step.createdAt.toISOString(),
    updated_at: step.updatedAt.toISOString(),
    version: step.version,
  };
}
