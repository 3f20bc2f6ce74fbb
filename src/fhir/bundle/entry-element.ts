import type { BundleEntry } from '@medplum/fhirtypes';

/**
 * Bundle.entry as FHIR JSON writes it: left out when there is none, since an array is never empty
 * (https://hl7.org/fhir/R4/json.html#arrays); strict parsers refuse `"entry": []`.
 */
export function entryElement(entry: BundleEntry[]): { entry?: BundleEntry[] } {
  return entry.length > 0 ? { entry } : {};
}
