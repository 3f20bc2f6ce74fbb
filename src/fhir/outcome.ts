import type { OperationOutcome, OperationOutcomeIssue } from '@medplum/fhirtypes';
import type { HttpErrorInfo, RenderedError } from '../platform/http/surface.ts';

/**
 * Every failure of the FHIR origin is an OperationOutcome (https://hl7.org/fhir/R4/operationoutcome.html)
 * with machine-readable issues: severity, code from the IssueType value set, diagnostics and,
 * where it applies, the FHIRPath expression of the element at fault.
 */

export const fhirJson = 'application/fhir+json; charset=utf-8';

type IssueType = OperationOutcomeIssue['code'];

/** Platform and domain error codes to FHIR IssueType (http://hl7.org/fhir/ValueSet/issue-type). */
const issueTypes: Record<string, IssueType> = {
  invalid: 'invalid',
  'not-found': 'not-found',
  conflict: 'conflict',
  'precondition-failed': 'conflict',
  'business-rule': 'business-rule',
  unsupported: 'not-supported',
  'too-large': 'too-costly',
  unauthenticated: 'login',
  unavailable: 'transient',
  timeout: 'timeout',
  internal: 'exception',
  'unsupported-media-type': 'not-supported',
  'not-acceptable': 'not-supported',
  'method-not-allowed': 'not-supported',
  duplicate: 'duplicate',
  'too-costly': 'too-costly',
  throttled: 'throttled',
};

export function issueTypeFor(code: string): IssueType {
  return issueTypes[code] ?? 'processing';
}

interface DetailIssue {
  message: string;
  location?: string;
}

export function renderOperationOutcome(error: HttpErrorInfo): RenderedError {
  const code = issueTypeFor(error.code);
  const details = error.details as { issues?: DetailIssue[]; validation?: { message?: string; instancePath?: string }[] } | undefined;
  let issues: OperationOutcomeIssue[];
  if (details?.issues && details.issues.length > 0) {
    issues = details.issues.map((issue) => ({
      severity: 'error',
      code,
      diagnostics: issue.message,
      ...(issue.location ? { expression: [issue.location] } : {}),
    }));
  } else {
    issues = [{ severity: error.statusCode >= 500 ? 'fatal' : 'error', code, diagnostics: error.message }];
  }
  if (error.statusCode >= 500) {
    // The correlation id is in the logs with the full error; the response says nothing more.
    issues[0]!.diagnostics = `${issues[0]!.diagnostics} (request id ${error.requestId})`;
  }
  const outcome: OperationOutcome = { resourceType: 'OperationOutcome', issue: issues };
  return { contentType: fhirJson, body: outcome };
}

export function informationOutcome(issues: { severity: 'warning' | 'information'; code: IssueType; diagnostics: string; expression?: string[] }[]): OperationOutcome {
  return { resourceType: 'OperationOutcome', issue: issues };
}
