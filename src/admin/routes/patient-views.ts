/**
 * A patient's FHIR resources as the admin app shows them: flat, display-ready fields (a coded
 * value's words, a quantity with its unit, a range as text) in snake_case like the rest of the
 * admin API. The full resources stay available over FHIR; this is a reading view.
 */
import type { AllergyIntolerance, CodeableConcept, Condition, DocumentReference, Observation, Patient, Quantity, Range } from '@medplum/fhirtypes';
import { studyView } from './worklist-routes.ts';
import type { PatientChart } from '../../domain/patients/chart.ts';
import { personName } from '../../domain/patients/person-name.ts';

function conceptText(concept: CodeableConcept | undefined): string | null {
  if (!concept) return null;
  const coding = concept.coding?.[0];
  return concept.text ?? coding?.display ?? coding?.code ?? null;
}

function quantityText(quantity: Quantity | undefined): string | null {
  if (quantity?.value === undefined) return null;
  return `${quantity.comparator ?? ''}${quantity.value}`;
}

function rangeText(range: { low?: Quantity; high?: Quantity; text?: string } | Range | undefined): string | null {
  if (!range) return null;
  if ('text' in range && range.text) return range.text;
  const low = quantityText(range.low);
  const high = quantityText(range.high);
  const unit = range.low?.unit ?? range.high?.unit ?? '';
  const text = low && high ? `${low}–${high}` : low ? `≥ ${low}` : high ? `≤ ${high}` : null;
  return text ? `${text}${unit ? ` ${unit}` : ''}` : null;
}

export function patientSummaryView(patient: Patient) {
  return {
    id: patient.id!,
    name: personName(patient),
    birth_date: patient.birthDate ?? null,
    gender: patient.gender ?? null,
    identifier: patient.identifier?.[0]?.value ?? null,
    active: patient.active !== false,
  };
}

export function patientView(patient: Patient) {
  return {
    ...patientSummaryView(patient),
    identifiers: (patient.identifier ?? []).map((identifier) => ({
      value: identifier.value ?? null,
      system: identifier.system ?? null,
      type: conceptText(identifier.type),
      use: identifier.use ?? null,
    })),
    addresses: (patient.address ?? []).map((address) => address.text ?? [...(address.line ?? []), address.postalCode, address.city, address.country].filter(Boolean).join(', ')),
    telecom: (patient.telecom ?? []).map((telecom) => [telecom.system, telecom.value].filter(Boolean).join(': ')),
    last_updated: patient.meta?.lastUpdated ?? null,
  };
}

function observationValue(observation: Observation): { value: string | null; unit: string | null } {
  if (observation.valueQuantity) return { value: quantityText(observation.valueQuantity), unit: observation.valueQuantity.unit ?? observation.valueQuantity.code ?? null };
  if (observation.valueString !== undefined) return { value: observation.valueString, unit: null };
  if (observation.valueCodeableConcept) return { value: conceptText(observation.valueCodeableConcept), unit: null };
  if (observation.valueRange) return { value: rangeText(observation.valueRange), unit: null };
  if (observation.valueRatio) return { value: `${quantityText(observation.valueRatio.numerator) ?? ''}:${quantityText(observation.valueRatio.denominator) ?? ''}`, unit: null };
  const other = observation.valueDateTime ?? observation.valueTime ?? (observation.valueBoolean !== undefined ? String(observation.valueBoolean) : undefined) ?? (observation.valueInteger !== undefined ? String(observation.valueInteger) : undefined);
  return { value: other ?? null, unit: null };
}

export function observationView(observation: Observation) {
  const { value, unit } = observationValue(observation);
  return {
    id: observation.id!,
    name: conceptText(observation.code),
    code: observation.code?.coding?.[0]?.code ?? null,
    value,
    unit,
    reference_range: rangeText(observation.referenceRange?.[0]),
    interpretation: (observation.interpretation ?? []).map((concept) => ({ code: concept.coding?.[0]?.code ?? null, text: concept.text ?? concept.coding?.[0]?.display ?? null })),
    status: observation.status,
    effective: observation.effectiveDateTime ?? observation.effectivePeriod?.start ?? observation.effectiveInstant ?? null,
    issued: observation.issued ?? null,
  };
}

export function conditionView(condition: Condition) {
  return {
    id: condition.id!,
    name: conceptText(condition.code),
    clinical_status: conceptText(condition.clinicalStatus),
    onset: condition.onsetDateTime ?? condition.onsetPeriod?.start ?? null,
    recorded: condition.recordedDate ?? null,
  };
}

export function allergyView(allergy: AllergyIntolerance) {
  return {
    id: allergy.id!,
    substance: conceptText(allergy.code),
    clinical_status: conceptText(allergy.clinicalStatus),
    criticality: allergy.criticality ?? null,
    reactions: (allergy.reaction ?? []).flatMap((reaction) => (reaction.manifestation ?? []).map((m) => conceptText(m))).filter((text): text is string => Boolean(text)),
    recorded: allergy.recordedDate ?? allergy.onsetDateTime ?? null,
  };
}

export function documentView(document: DocumentReference) {
  const attachment = document.content?.[0]?.attachment;
  return {
    id: document.id!,
    type: conceptText(document.type),
    description: document.description ?? attachment?.title ?? null,
    content_type: attachment?.contentType ?? null,
    status: document.status,
    date: document.date ?? attachment?.creation ?? null,
  };
}

export function chartView(chart: PatientChart, authors: Map<string, string>) {
  return {
    patient: patientView(chart.patient),
    observations: chart.observations.map(observationView),
    conditions: chart.conditions.map(conditionView),
    allergies: chart.allergies.map(allergyView),
    documents: chart.documents.map(documentView),
    studies: chart.studies.map(studyView),
    reports: chart.reports.map((report) => ({
      id: report.id,
      study_instance_uid: report.studyInstanceUid,
      study_description: report.studyDescription,
      status: report.status,
      text: report.text,
      author_email: report.authorUserId ? (authors.get(report.authorUserId) ?? null) : null,
      updated_at: report.updatedAt,
      completed_at: report.completedAt,
    })),
    truncated: chart.truncated,
  };
}
