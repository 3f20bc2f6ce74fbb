import type { HistoryFilter } from '../../domain/records/read.ts';
import { instantRange } from '../../domain/records/fhir-date.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { unsupportedParameters, type IgnoredParameter } from '../http/unsupported-parameters.ts';
import { defaultHistoryCount, historyParameters } from '../capability/resource-definitions.ts';
import { maxPageSize } from '../search/search-limits.ts';

/**
 * The parameters of history-instance (https://hl7.org/fhir/R4/http.html#history): _count,
 * _since and _at, and the _page of a next link. Anything else is refused unless handling is
 * lenient, as in search (parse-search.ts): a history that silently ignored _since would answer
 * with versions the client did not ask for.
 */

export interface ParsedHistory extends HistoryFilter {
  count: number;
  beforeVersion?: number;
  /** The parameters applied (_page aside), for the self and next links. */
  applied: [string, string][];
}

function bad(message: string): HttpProblem {
  return new HttpProblem(400, 'invalid', message);
}

export function parseHistory(pairs: [string, string][], strict: boolean): ParsedHistory {
  const parsed: ParsedHistory = { count: defaultHistoryCount, applied: [] };
  const ignored: IgnoredParameter[] = [];
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    if (name === '_format' || name === '_pretty') continue;
    if (['_count', '_page', '_since', '_at'].includes(name)) {
      if (seen.has(name)) throw bad(`${name} may be given once`);
      seen.add(name);
    }
    if (name === '_count') {
      if (!/^\d{1,7}$/.test(value)) throw bad(`_count must be a whole number from 0 to ${maxPageSize}`);
      parsed.count = Math.min(Number(value), maxPageSize);
      parsed.applied.push([name, String(parsed.count)]);
    } else if (name === '_page') {
      if (!/^[1-9]\d{0,8}$/.test(value)) throw bad('_page is not a version number of this history');
      parsed.beforeVersion = Number(value);
    } else if (name === '_since' || name === '_at') {
      // An unencoded "+" of a zone offset arrives as a space.
      const range = instantRange(value.replace(' ', '+'));
      if (!range) throw bad(`${name}=${value} is not a date or a dateTime with a time zone`);
      if (name === '_since') parsed.since = range.start;
      else parsed.at = range;
      parsed.applied.push([name, value]);
    } else {
      ignored.push({ name, reason: `${name} is not a parameter of history` });
    }
  }
  if (strict && ignored.length > 0) throw unsupportedParameters(historyParameters.map((parameter) => parameter.name), ignored);
  return parsed;
}
