/**
 * Which stored result an incoming one is. Results carry an identity (identifier[0]) that a
 * sender may repeat within one message (HL7 v2 OBX-3 plus OBX-4 sent twice in one order, a
 * culture isolate's colony count and organism both as ISOLATE 1). The results sharing an
 * identity are told apart by the kind of their value (valueString, valueCodeableConcept, ...),
 * then by their order among those of that kind: the n-th incoming of a kind is the n-th stored
 * of that kind, in creation order. A lone incoming result and a lone stored one of an identity
 * are the same result whatever their values (a preliminary "pending" text that becomes a
 * number). A stored result is never taken for one with another code: an update never changes
 * what was observed.
 */
import type { CodeableConcept, DocumentReference, Observation } from '@medplum/fhirtypes';

export type PatientResult = Observation | DocumentReference;

/** For each incoming result (all of one identity, in message order), the stored one it is, if any. */
export function matchStoredResults(incoming: readonly PatientResult[], stored: readonly PatientResult[]): (PatientResult | undefined)[] {
  if (incoming.length === 1 && stored.length === 1) return [sameCode(incoming[0]!, stored[0]!) ? stored[0] : undefined];
  const taken = new Set<PatientResult>();
  return incoming.map((result) => {
    const match = stored.find((candidate) => !taken.has(candidate) && valueKind(candidate) === valueKind(result) && sameCode(candidate, result));
    if (match) taken.add(match);
    return match;
  });
}

/** The value[x] element an Observation carries ('' for none, and for documents). */
export function valueKind(result: PatientResult): string {
  if (result.resourceType !== 'Observation') return '';
  return Object.keys(result).find((key) => key.startsWith('value')) ?? '';
}

function sameCode(a: PatientResult, b: PatientResult): boolean {
  return codeKey(codeOf(a)) === codeKey(codeOf(b));
}

function codeOf(result: PatientResult): CodeableConcept | undefined {
  return result.resourceType === 'Observation' ? result.code : result.type;
}

/** The first coding's system and code (what the code is; displays may be reworded), else the text. */
function codeKey(concept: CodeableConcept | undefined): string {
  const coding = concept?.coding?.[0];
  return coding ? `coding|${coding.system ?? ''}|${coding.code ?? ''}` : `text|${concept?.text ?? ''}`;
}
