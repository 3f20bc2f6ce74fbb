import { createHash } from 'node:crypto';

/**
 * The synthetic clinical data of the bench, defined once so that the SQL loader and the load
 * generators agree on ids, identifiers, names and codes. Nothing here is real patient data.
 */

/** 20 syllables: three of them make 8,000 family names, about 12 patients each in 100,000. */
export const syllables = ['ka', 'lo', 'mi', 'ra', 'ne', 'tu', 'sa', 'vi', 'do', 'ri', 'ma', 'ze', 'po', 'li', 'na', 'fe', 'gu', 'ho', 'be', 'ta'];

export const identifierSystem = 'urn:oid:2.16.840.1.113883.19.5.99';
export const genderSystem = 'http://hl7.org/fhir/administrative-gender';
export const loinc = 'http://loinc.org';

/** One observation of each code per patient, so patient+code finds exactly one. */
export const observationCodes: { code: string; display: string; unit: string }[] = [
  { code: '2345-7', display: 'Glucose [Mass/volume] in Serum or Plasma', unit: 'mg/dL' },
  { code: '2951-2', display: 'Sodium [Moles/volume] in Serum or Plasma', unit: 'mmol/L' },
  { code: '2823-3', display: 'Potassium [Moles/volume] in Serum or Plasma', unit: 'mmol/L' },
  { code: '2160-0', display: 'Creatinine [Mass/volume] in Serum or Plasma', unit: 'mg/dL' },
  { code: '718-7', display: 'Hemoglobin [Mass/volume] in Blood', unit: 'g/dL' },
  { code: '6690-2', display: 'Leukocytes [#/volume] in Blood', unit: '10*3/uL' },
  { code: '777-3', display: 'Platelets [#/volume] in Blood', unit: '10*3/uL' },
  { code: '4548-4', display: 'Hemoglobin A1c/Hemoglobin.total in Blood', unit: '%' },
  { code: '2093-3', display: 'Cholesterol [Mass/volume] in Serum or Plasma', unit: 'mg/dL' },
  { code: '3094-0', display: 'Urea nitrogen [Mass/volume] in Serum or Plasma', unit: 'mg/dL' },
];

function capitalize(value: string): string {
  return value.charAt(0).toUpperCase() + value.slice(1);
}

export function familyName(i: number): string {
  return capitalize(syllables[i % 20]! + syllables[Math.floor(i / 20) % 20]! + syllables[Math.floor(i / 400) % 20]!);
}

export function givenName(i: number): string {
  return capitalize(syllables[Math.floor(i / 7) % 20]! + syllables[Math.floor(i / 3) % 20]! + 'n');
}

export function businessIdentifier(i: number): string {
  return `MRN${String(i).padStart(8, '0')}`;
}

/** Deterministic ids (an md5 read as a UUID), so the loader and the clients need no id list. */
export function syntheticId(kind: 'patient' | 'observation', siteId: string, i: number): string {
  const hex = createHash('md5').update(`bench-${kind}|${siteId}|${i}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The Patient a client sends: what the loader stores, minus id and meta. */
export function patientBody(identifier: string, i: number): Record<string, unknown> {
  return {
    resourceType: 'Patient',
    identifier: [{ system: identifierSystem, value: identifier }],
    name: [{ family: familyName(i), given: [givenName(i)] }],
    gender: i % 2 === 0 ? 'female' : 'male',
    birthDate: birthDate(i),
  };
}

export function birthDate(i: number): string {
  const day = new Date(Date.UTC(1940, 0, 1) + ((i * 37) % 25_000) * 86_400_000);
  return day.toISOString().slice(0, 10);
}
