import type { CodeSystem, CodeSystemConcept, ElementDefinition, Resource, StructureDefinition, ValueSet } from '@medplum/fhirtypes';
import type { DomainIssue } from '../errors.ts';
import { readDefinitionBundle } from './definitions.ts';

/**
 * Required terminology bindings (https://hl7.org/fhir/R4/terminologies.html#required): a coded
 * element bound `required` must hold a code of its value set. @medplum/core's validator checks
 * structure but not bindings, so this derives the rules from the same StructureDefinitions and
 * expands the value sets from the official ValueSet and CodeSystem resources. Value sets that
 * cannot be expanded from those files (filters, external systems such as BCP-47 or MIME types)
 * are not enforced.
 */

interface BindingRule {
  /** Element names from the resource root, possibly through data types (e.g. name, use). */
  segments: string[];
  kind: 'code' | 'Coding' | 'CodeableConcept';
  valueSet: string;
  /** `code` rules: codes; the others: `system|code`. */
  allowed: Set<string>;
}

const bindableTypes = new Set(['code', 'Coding', 'CodeableConcept']);
const skippedElements = new Set(['id', 'extension', 'modifierExtension']);
const maxTypeDepth = 3;

let structureDefinitions: Map<string, StructureDefinition> | undefined;
let valueSets: Map<string, ValueSet> | undefined;
let codeSystems: Map<string, CodeSystem> | undefined;
const expansions = new Map<string, Set<string> | null>();
const rulesByType = new Map<string, BindingRule[]>();

function load(): void {
  if (structureDefinitions) return;
  structureDefinitions = new Map();
  valueSets = new Map();
  codeSystems = new Map();
  for (const file of ['profiles-types.json', 'profiles-resources.json', 'valuesets.json', 'v3-codesystems.json']) {
    for (const entry of readDefinitionBundle(file).entry ?? []) {
      const resource = entry.resource;
      if (resource?.resourceType === 'StructureDefinition' && resource.derivation !== 'constraint') {
        structureDefinitions.set(resource.type, resource);
      } else if (resource?.resourceType === 'ValueSet' && resource.url) {
        valueSets.set(resource.url, resource);
      } else if (resource?.resourceType === 'CodeSystem' && resource.url) {
        codeSystems.set(resource.url, resource);
      }
    }
  }
}

/** Every code of the value set as `system|code`, or null when it cannot be expanded here. */
function expand(url: string, stack: string[] = []): Set<string> | null {
  const key = url.split('|')[0]!;
  if (expansions.has(key)) return expansions.get(key)!;
  if (stack.includes(key)) return null;
  const valueSet = valueSets!.get(key);
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
          const system = codeSystems!.get(include.system);
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
        const codes = expand(nested, [...stack, key]);
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

function rulesFor(typeName: string, typeStack: string[] = []): BindingRule[] {
  const cached = rulesByType.get(typeName);
  if (cached) return cached;
  const definition = structureDefinitions!.get(typeName);
  const rules: BindingRule[] = [];
  for (const element of definition?.snapshot?.element ?? []) {
    const segments = element.path.split('.').slice(1);
    if (segments.length === 0 || segments.some((segment) => skippedElements.has(segment) || segment.endsWith('[x]'))) continue;
    const types = element.type ?? [];
    if (types.length !== 1) continue;
    const code = types[0]!.code;
    if (bindableTypes.has(code)) {
      const rule = bindingRule(element, segments, code as BindingRule['kind']);
      if (rule) rules.push(rule);
    } else if (/^[A-Z]/.test(code) && code !== 'BackboneElement' && code !== 'Element' && code !== 'Extension' && code !== 'Resource') {
      if (typeStack.length >= maxTypeDepth || typeStack.includes(code)) continue;
      for (const nested of rulesFor(code, [...typeStack, typeName])) {
        rules.push({ ...nested, segments: [...segments, ...nested.segments] });
      }
    }
  }
  if (typeStack.length === 0) rulesByType.set(typeName, rules);
  return rules;
}

function bindingRule(element: ElementDefinition, segments: string[], kind: BindingRule['kind']): BindingRule | undefined {
  const binding = element.binding;
  if (binding?.strength !== 'required' || !binding.valueSet) return undefined;
  const codes = expand(binding.valueSet);
  if (!codes) return undefined;
  const allowed = kind === 'code' ? new Set([...codes].map((entry) => entry.slice(entry.lastIndexOf('|') + 1))) : codes;
  return { segments, kind, valueSet: binding.valueSet.split('|')[0]!, allowed };
}

export function requiredBindingIssues(resource: Resource, path: string = resource.resourceType): DomainIssue[] {
  load();
  const issues: DomainIssue[] = [];
  for (const rule of rulesFor(resource.resourceType)) {
    visit(resource, rule.segments, path, (value, at) => check(rule, value, at, issues));
  }
  // Contained resources are resources too (references.html#contained); they contain no others.
  const contained = (resource as { contained?: unknown }).contained;
  if (Array.isArray(contained)) {
    contained.forEach((inner: Resource, i) => {
      if (inner && typeof inner === 'object' && typeof inner.resourceType === 'string') {
        issues.push(...requiredBindingIssues(inner, `${path}.contained[${i}]`));
      }
    });
  }
  return issues;
}

function visit(node: unknown, segments: string[], path: string, found: (value: unknown, path: string) => void): void {
  if (node === null || typeof node !== 'object') return;
  const [head, ...rest] = segments;
  const value = (node as Record<string, unknown>)[head!];
  if (value === undefined) return;
  const items = Array.isArray(value) ? value.map((item, i) => [item, `${path}.${head}[${i}]`] as const) : [[value, `${path}.${head}`] as const];
  for (const [item, itemPath] of items) {
    if (rest.length === 0) found(item, itemPath);
    else visit(item, rest, itemPath, found);
  }
}

function check(rule: BindingRule, value: unknown, path: string, issues: DomainIssue[]): void {
  const fail = (shown: string) =>
    issues.push({ message: `${shown} is not in the required value set ${rule.valueSet}`, location: path });
  if (rule.kind === 'code') {
    if (typeof value === 'string' && !rule.allowed.has(value)) fail(`"${value}"`);
    return;
  }
  // A coding that is not an array is the validator's finding; here it only must not crash.
  const listed = rule.kind === 'Coding' ? [value] : (value as { coding?: unknown }).coding;
  const codings = (Array.isArray(listed) ? listed : []) as ({ system?: string; code?: string } | null)[];
  if (rule.kind === 'Coding') {
    const coding = codings[0]!;
    if (coding?.code !== undefined && !rule.allowed.has(`${coding.system ?? ''}|${coding.code}`)) {
      fail(`${coding.system ?? '(no system)'}|${coding.code}`);
    }
    return;
  }
  if (!codings.some((coding) => rule.allowed.has(`${coding?.system ?? ''}|${coding?.code ?? ''}`))) {
    const shown = codings.map((coding) => `${coding?.system ?? '(no system)'}|${coding?.code ?? ''}`).join(', ');
    fail(shown === '' ? 'a concept without a coding' : shown);
  }
}
