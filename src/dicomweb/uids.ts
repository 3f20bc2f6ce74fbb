import { HttpProblem } from '../platform/http/http-problem.ts';

/** PS3.5 9.1: digits and dots, components without leading zeros, at most 64 characters. */
const uidPattern = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*$/;

export function checkedUid(value: string, name: string): string {
  if (value.length > 64 || !uidPattern.test(value)) throw new HttpProblem(400, 'invalid', `${name} is not a DICOM UID: ${JSON.stringify(value.slice(0, 80))}`);
  return value;
}
