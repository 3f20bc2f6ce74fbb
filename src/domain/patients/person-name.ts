import type { Patient } from '@medplum/fhirtypes';

/** The patient's name for reading: the official one (else the first), "Family, Given". */
export function personName(patient: Patient): string | null {
  const name = patient.name?.find((n) => n.use === 'official') ?? patient.name?.[0];
  if (!name) return null;
  if (name.text) return name.text;
  const given = (name.given ?? []).join(' ');
  return [name.family, given].filter(Boolean).join(', ') || null;
}
