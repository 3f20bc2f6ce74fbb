import type { GatewayLimits } from '../../config/limits.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';

/**
 * Bounds the work a search asks for before any SQL is built (issue 26 point 2): every value
 * becomes an alternative in the statement, and PostgreSQL's memory for planning and running it
 * grows with their number. Counted on the raw parameters, so nothing costly is parsed either.
 */
export function checkSearchBudget(pairs: [string, string][], limits: GatewayLimits['search']): void {
  const repeats = new Map<string, number>();
  let values = 0;
  for (const [name, value] of pairs) {
    if (name === '_page') continue;
    const repeated = (repeats.get(name) ?? 0) + 1;
    repeats.set(name, repeated);
    if (repeated > limits.maxRepeats) {
      throw tooCostly(`${name} is repeated more than ${limits.maxRepeats} times; combine values with commas (search.html#combining)`);
    }
    // search.html#escaping: a comma escaped with a backslash is part of a value.
    values += 1 + (value.match(/(?<!\\),/g)?.length ?? 0);
    if (values > limits.maxValues) throw tooCostly(`a search takes at most ${limits.maxValues} values across its parameters`);
  }
}

function tooCostly(message: string): HttpProblem {
  return new HttpProblem(400, 'too-costly', message);
}
