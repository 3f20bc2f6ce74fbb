import { HttpProblem } from '../../platform/http/http-problem.ts';

export interface IgnoredParameter {
  name: string;
  reason: string;
}

/**
 * The refusal of parameters the server would not apply (search.html#errors: a server may refuse
 * them, and this one does unless asked for lenient handling): one issue per parameter, each
 * naming it and listing what is supported, so that the client can correct its request.
 */
export function unsupportedParameters(supported: string[], ignored: IgnoredParameter[]): HttpProblem {
  const hint = `supported: ${supported.join(', ')}; send Prefer: handling=lenient to ignore unsupported parameters instead`;
  const issues = ignored.map((entry) => ({ message: `${entry.reason}; ${hint}` }));
  return new HttpProblem(400, 'unsupported', issues.map((issue) => issue.message).join('\n'), { details: { issues } });
}
