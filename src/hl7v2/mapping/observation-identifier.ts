/**
 * OBX-3 (observation identifier, CWE) read as senders really send it. Besides the standard form
 * (code ^ text ^ coding system, HL7 v2.5.1 section 2.A.74), two forms are accepted with a
 * warning: the identifier in a subcomponent (Epic's report-text lines `&GDT`, whose CWE.1 has an
 * empty first subcomponent), and an identifier with text but no code. The identifier's part of a
 * result's identity (result-identity.ts) is its coding system and code, else its text.
 */
import type { CodeableConcept } from '@medplum/fhirtypes';
import { componentOf, fieldOf, type Segment } from '../er7/message.ts';
import { errorCodes, error, warning, type Problem } from '../problems.ts';
import { codeableConcept, systemUri } from './coding.ts';

export interface ObservationIdentifier {
  concept: CodeableConcept;
  /** Coding system (its FHIR URI when known, else its name) and code, else the text. */
  key: string;
  /**
   * The key as the service kept it before coding systems it has no URI for entered the key (the
   * system was dropped): results stored then are found under it (migration 0510).
   */
  formerKey?: string;
}

export function readObservationIdentifier(obx: Segment): { identifier?: ObservationIdentifier; problems: Problem[] } {
  const at = (component?: number) => ({ segment: 'OBX', sequence: obx.sequence, field: 3, ...(component ? { component } : {}) });
  const problems: Problem[] = [];
  const repetition = (fieldOf(obx, 3)[0] ?? []).map((subcomponents, index) => {
    if (subcomponents.length < 2) return subcomponents;
    // CWE components are plain text: subcomponents can only be a sender's form (Epic's `&GDT`)
    // or an unescaped "&" in the text. Both keep their text, without the empty edges.
    const parts = [...subcomponents];
    while (parts.length > 0 && parts[0]!.trim() === '') parts.shift();
    while (parts.length > 0 && parts[parts.length - 1]!.trim() === '') parts.pop();
    const value = parts.join('&');
    problems.push(warning(errorCodes.dataTypeError, `OBX-3.${index + 1} has subcomponents ("${subcomponents.join('&')}"); read as "${value}"`, at(index + 1)));
    return [value];
  });
  const concept = codeableConcept(repetition);
  if (!concept) return { problems: [...problems, error(errorCodes.requiredFieldMissing, 'OBX-3 (observation identifier) has neither a code nor a text', at(1))] };
  const primary = componentOf(repetition, 1).trim();
  const [code, system] = primary ? [primary, componentOf(repetition, 3)] : [componentOf(repetition, 4).trim(), componentOf(repetition, 6)];
  if (!code) {
    problems.push(warning(errorCodes.requiredFieldMissing, `OBX-3 has no code, only the text "${concept.text}"; the text identifies the result`, at(1)));
    return { identifier: { concept, key: `text:${concept.text}` }, problems };
  }
  const name = system.trim().toUpperCase();
  const uri = systemUri(name);
  const key = `${uri ?? name}^${code}`;
  return { identifier: { concept, key, ...(name && !uri ? { formerKey: `^${code}` } : {}) }, problems };
}
