/**
 * The kick-off request's parameters (Bulk Data Access IG v2.0.0, export.html#query-parameters),
 * from the query string (GET) or a Parameters resource (POST). The server applies _type, _since
 * and _outputFormat; the IG's other parameters (_elements, patient, includeAssociatedData,
 * _typeFilter) are refused with 400, or ignored under Prefer: handling=lenient, as the IG asks.
 */
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { resourceDefinitions } from '../capability/resource-definitions.ts';

/** Every type the server serves is exported; all seven are in the patient compartment. */
export const exportableTypes: readonly string[] = resourceDefinitions.map((definition) => definition.type);

/** export.html: the server SHALL accept the full type and the abbreviations. */
const ndjsonFormats = new Set(['application/fhir+ndjson', 'application/ndjson', 'ndjson']);
export const ndjsonType = 'application/fhir+ndjson';

const instant = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?(Z|[+-]((0\d|1[0-3]):[0-5]\d|14:00))$/;

export interface ExportParameters {
  resourceTypes: string[];
  since: Date | undefined;
  outputFormat: string;
  /** Parameters ignored under Prefer: handling=lenient. */
  ignored: string[];
}

export function parseExportParameters(pairs: readonly [string, string][], lenient: boolean): ExportParameters {
  let resourceTypes: string[] | undefined;
  let since: Date | undefined;
  let outputFormat = ndjsonType;
  const ignored: string[] = [];
  for (const [name, value] of pairs) {
    switch (name) {
      case '_type': {
        const types = value.split(',').map((type) => type.trim()).filter((type) => type !== '');
        const unknown = types.filter((type) => !exportableTypes.includes(type));
        if (unknown.length > 0) {
          throw new HttpProblem(400, 'invalid', `_type: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not exported by this server; it exports ${exportableTypes.join(', ')}`);
        }
        resourceTypes = [...new Set([...(resourceTypes ?? []), ...types])];
        break;
      }
      case '_since': {
        const date = instant.test(value.trim()) ? new Date(value.trim()) : undefined;
        if (!date || Number.isNaN(date.getTime())) {
          throw new HttpProblem(400, 'invalid', `_since ${JSON.stringify(value)} is not a FHIR instant such as 2024-01-02T03:04:05Z (a time zone is required)`);
        }
        since = date;
        break;
      }
      case '_outputFormat': {
        const format = value.trim().toLowerCase().replace(' ', '+');
        if (!ndjsonFormats.has(format)) {
          throw new HttpProblem(400, 'invalid', `_outputFormat ${JSON.stringify(value)} is not supported: this server writes ${ndjsonType} (also accepted as application/ndjson or ndjson)`);
        }
        outputFormat = ndjsonType;
        break;
      }
      case '_format':
      case '_pretty':
        break;
      default:
        if (!lenient) {
          throw new HttpProblem(400, 'unsupported', `${name} is not supported by this server's $export; it applies _type, _since and _outputFormat (send Prefer: handling=lenient to have others ignored)`);
        }
        ignored.push(name);
    }
  }
  return { resourceTypes: resourceTypes && resourceTypes.length > 0 ? resourceTypes : [...exportableTypes], since, outputFormat, ignored };
}

/**
 * The pairs of a POST kick-off's Parameters resource (export.html: "FHIR Parameters resource
 * with the parameters in valueString, valueInstant, ..."). Anything else in the body is a 400.
 */
export function parametersPairs(body: unknown): [string, string][] {
  const resource = body as { resourceType?: unknown; parameter?: unknown } | null;
  if (!resource || typeof resource !== 'object' || resource.resourceType !== 'Parameters') {
    throw new HttpProblem(400, 'invalid', 'a POST $export takes a Parameters resource');
  }
  if (resource.parameter === undefined) return [];
  if (!Array.isArray(resource.parameter)) throw new HttpProblem(400, 'invalid', 'Parameters.parameter must be an array');
  return resource.parameter.map((parameter: unknown, index: number): [string, string] => {
    const entry = parameter as Record<string, unknown> | null;
    const name = entry?.name;
    const valueKey = entry ? Object.keys(entry).find((key) => key.startsWith('value')) : undefined;
    const value = valueKey ? entry![valueKey] : undefined;
    if (typeof name !== 'string' || typeof value !== 'string') {
      throw new HttpProblem(400, 'invalid', `Parameters.parameter[${index}] needs a name and a string value (valueString, valueInstant, valueCode)`);
    }
    return [name, value];
  });
}
