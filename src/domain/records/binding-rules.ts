import type { CodeSystemConcept, ElementDefinition, StructureDefinition } from '@medplum/fhirtypes';
import type { Terminology } from './definitions.ts';

/**
 * Derives the required terminology bindings (https://hl7.org/fhir/R4/terminologies.html#required)
 * of resource types from their StructureDefinitions, expanding the bound value sets from the
 * official ValueSet and CodeSystem resources. Value sets that cannot be expanded from those files
 * (filters, external systems such as BCP-47 or MIME types) yield no rule. The result is plain
 * data, so that it can be derived away from the service process (see definitions-extract.ts).
 */

export interface BindingRule {
  /** Element names from the resource root, possibly through data types (e.g. name, use). */
  segments: string[];
  kind: 'code' | 'Coding' | 'CodeableConcept';
  valueSet: string;
  /** `code` rules: codes; the others: `system|code`. */
  allowed: string[];
}

const bindableTypes = new Set(['code', 'Coding', 'CodeableConcept']);
const skippedElements = new Set(['id', 'extension', 'modifierExtension']);
const maxTypeDepth = 3;

/**
 * Derives the rules of every listed type from its definition and the standard's terminology,
 * expanding each value set once.
 */
export function deriveBindingRules(
  definitions: StructureDefinition[],
  terminology: Terminology,
  resourceTypes: Iterable<string>,
): Record<string, BindingRule[]> {
  const byType = new Map<string, StructureDefinition>();
  for (const definition of definitions) {
    if (definition.derivation !== 'constraint') byType.set(definition.type, definition);
  }
  const derivation: Derivation = { byType, terminology, expansions: new Map(), rulesByType: new Map() };
  const rules: Record<string, BindingRule[]> = {};
  for (const type of resourceTypes) rules[type] = rulesFor(derivation, type);
  return rules;
}

interface Derivation {
  byType: Map<string, StructureDefinition>;
  terminology: Terminology;
  expansions: Map<string, Set<string> | null>;
  rulesByType: Map<string, BindingRule[]>;
}

/** Every code of the value set as `system|code`, or null when it cannot be expanded here. */
function expand(derivation: Derivation, url: string, stack: string[] = []): Set<string> | null {
  const { expansions, terminology } = derivation;
  const key = url.split('|')[0]!;
  if (expansions.has(key)) return expansions.get(key)!;
  if (stack.includes(key)) return null;
  const valueSet = terminology.valueSets.get(key);
  let result: Set<string> | null = null;
  if (valueSet?.compose && !valueSet.compose.exclude) {
    result = new Set();
    for (const include of valueSet.compose.include) {
      if (include.filter || (!include.system && !include.valueSet)) {
        result = null;
        break;
      }
      const parts: Set<string>[] = [];
      if (include.system) {
        if (include.concept) {
          parts.push(new Set(include.concept.map((concept) => `${include.system}|${concept.code}`)));
        } else {
          const system = terminology.codeSystems.get(include.system);
          if (!system?.concept || system.content !== 'complete') {
            result = null;
            break;
          }
          const codes = new Set<string>();
          collectConcepts(include.system, system.concept, codes);
          parts.push(codes);
        }
      }
      for (const nested of include.valueSet ?? []) {
        const codes = expand(derivation, nested, [...stack, key]);
        if (!codes) {
          result = null;
          break;
        }
        parts.push(codes);
      }
      if (!result) break;
      // Within one include, system and valueSet intersect; includes unite (ValueSet.compose).
      const [first, ...rest] = parts;
      for (const code of first ?? []) if (rest.every((part) => part.has(code))) result.add(code);
    }
  }
  expansions.set(key, result);
  return result;
}

function collectConcepts(system: string, concepts: CodeSystemConcept[], into: Set<string>): void {
  for (const concept of concepts) {
    into.add(`${system}|${concept.code}`);
    if (concept.concept) collectConcepts(system, concept.concept, into);
  }
}

function rulesFor(derivation: Derivation, typeName: string, typeStack: string[] = []): BindingRule[] {
  const cached = derivation.rulesByType.get(typeName);
  if (cached) return cached;
  const definition = derivation.byType.get(typeName);
  const rules: BindingRule[] = [];
  for (const element of definition?.snapshot?.element ?? []) {
    const segments = element.path.split('.').slice(1);
    if (segments.length === 0 || segments.some((segment) => skippedElements.has(segment) || segment.endsWith('[x]'))) continue;
    const types = element.type ?? [];
    if (types.length !== 1) continue;
    const code = types[0]!.code;
    if (bindableTypes.has(code)) {
      const rule = bindingRule(derivation, element, segments, code as BindingRule['kind']);
      if (rule) rules.push(rule);
    } else if (/^[A-Z]/.test(code) && code !== 'BackboneElement' && code !== 'Element' && code !== 'Extension' && code !== 'Resource') {
      if (typeStack.length >= maxTypeDepth || typeStack.includes(code)) continue;
      for (const nested of rulesFor(derivation, code, [...typeStack, typeName])) {
        rules.push({ ...nested, segments: [...segments, ...nested.segments] });
      }
    }
  }
  if (typeStack.length === 0) derivation.rulesByType.set(typeName, rules);
  return rules;
}

function bindingRule(
  derivation: Derivation,
  element: ElementDefinition,
  segments: string[],
  kind: BindingRule['kind'],
): BindingRule | undefined {
  const binding = element.binding;
  if (binding?.strength !== 'required' || !binding.valueSet) return undefined;
  const codes = expand(derivation, binding.valueSet);
  if (!codes) return undefined;
  const allowed = kind === 'code' ? new Set([...codes].map((entry) => entry.slice(entry.lastIndexOf('|') + 1))) : codes;
  return { segments, kind, valueSet: binding.valueSet.split('|')[0]!, allowed: [...allowed] };
}

