import type { Resource } from '@medplum/fhirtypes';
import type { DomainIssue } from '../errors.ts';
import type { BindingRule as DerivedRule } from './binding-rules.ts';

/**
 * Required terminology bindings (https://hl7.org/fhir/R4/terminologies.html#required): a coded
 * element bound `required` must hold a code of its value set. @medplum/core's validator checks
 * structure but not bindings; the rules come from binding-rules.ts, derived from the same
 * definitions.
 */

type BindingRule = Omit<DerivedRule, 'allowed'> & { allowed: Set<string> };

const rulesByType = new Map<string, BindingRule[]>();

export function installBindingRules(rules: Record<string, DerivedRule[]>): void {
  rulesByType.clear();
  for (const [type, list] of Object.entries(rules)) {
    rulesByType.set(type, list.map((rule) => ({ ...rule, allowed: new Set(rule.allowed) })));
  }
}

export function requiredBindingIssues(resource: Resource, path: string = resource.resourceType): DomainIssue[] {
  const issues: DomainIssue[] = [];
  // A type without rules is either bindings-free or one the validator itself rejects as unknown.
  for (const rule of rulesByType.get(resource.resourceType) ?? []) {
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
