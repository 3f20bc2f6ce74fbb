import { dateRange, instantRange } from '../../domain/records/fhir-date.ts';
import type { ComparisonPrefix, SearchCondition, SearchSort, SearchTotal, TokenValue } from '../../domain/records/resource-store.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import {
  includeTargets,
  revIncludeTargets,
  supportedSearchParameterNames,
  type FhirResourceDefinition,
  type FhirSearchParameter,
  type IncludeTarget,
} from '../capability/resource-definitions.ts';
import { unsupportedParameters, type IgnoredParameter } from '../http/unsupported-parameters.ts';
import { defaultPageSize, maxPageSize } from './search-limits.ts';
import { isElementOf, type Subset } from './subset.ts';

/**
 * A FHIR search request (https://hl7.org/fhir/R4/search.html) parsed into domain conditions:
 * repeated parameters AND, comma-separated values OR (search.html#combining). A parameter the
 * server does not apply (unknown, a modifier, a chain, an unsupported result parameter or value)
 * is refused with every such parameter named, unless the client asked for lenient handling
 * (search.html#errors): ignoring it would widen the search, and a client that trusts the result
 * would show other patients' data as this patient's. Under lenient handling it is ignored,
 * reported, and left out of `criteria` and `control`, so the self link shows only what was
 * applied. A bad value of a known parameter is always a 400.
 */

export interface ParsedSearch {
  conditions: SearchCondition[];
  sort: SearchSort;
  count: number;
  total: SearchTotal;
  /** Parameters ignored, for the outcome entry (search.mode outcome). */
  ignored: IgnoredParameter[];
  /** The criteria that decide the match set, canonical (sorted), for paging tokens and locks. */
  criteria: [string, string][];
  /** _sort, _count, _total, _summary, _elements, _include and _revinclude as applied, for the self and next links. */
  control: [string, string][];
  /** _include and _revinclude (search.html#include): which references to follow from the page's matches. */
  include: IncludeTarget[];
  revinclude: IncludeTarget[];
  /** _summary=true|text|data or _elements: the part of each resource returned. */
  subset?: Subset;
}

/** Accepted, without effect on the result: formatting (content-negotiation.ts, resource-response.ts). */
const formattingParameters = new Set(['_format', '_pretty']);
const prefixes: ComparisonPrefix[] = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'];
const maxParameters = 100;
const maxValueLength = 4096;
const maxSortKeys = 5;

function bad(message: string): HttpProblem {
  return new HttpProblem(400, 'invalid', message);
}

/** `strict`: refuse what is not applied (the default); false under Prefer: handling=lenient. */
export function parseSearch(definition: FhirResourceDefinition, params: [string, string][], strict: boolean): ParsedSearch {
  const parsed: ParsedSearch = { conditions: [], sort: [], count: defaultPageSize, total: 'bounded', ignored: [], criteria: [], control: [], include: [], revinclude: [] };
  const ignore = (name: string, reason: string) => parsed.ignored.push({ name, reason });
  let summary: string | undefined;
  let elements: string[] | undefined;
  if (params.length > maxParameters) throw bad(`a search takes at most ${maxParameters} parameters`);
  for (const [rawName, value] of params) {
    if (formattingParameters.has(rawName) || rawName === '_page') continue;
    // FHIR strings hold no C0 controls but tab, CR and LF (datatypes.html#string), and PostgreSQL
    // text cannot hold NUL: refuse them here rather than fail in the database.
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(rawName + value)) throw bad(`${rawName} contains control characters`);
    if (value.length > maxValueLength) throw bad(`${rawName} is longer than ${maxValueLength} characters`);
    if (rawName === '_count') {
      if (!/^\d{1,7}$/.test(value)) throw bad(`_count must be a whole number from 0 to ${maxPageSize}`);
      // Larger pages are clamped, as search.html#count allows.
      parsed.count = Math.min(Number(value), maxPageSize);
      parsed.control.push([rawName, String(parsed.count)]);
      continue;
    }
    if (rawName === '_total') {
      if (!['none', 'estimate', 'accurate'].includes(value)) throw bad('_total must be none, estimate or accurate');
      parsed.total = value as SearchTotal;
      parsed.control.push([rawName, value]);
      continue;
    }
    if (rawName === '_sort') {
      if (parsed.sort.length > 0) throw bad('_sort may be given once (several keys are separated by commas)');
      const sort = parseSort(definition, value);
      if (typeof sort === 'string') ignore(rawName, sort);
      else {
        parsed.sort = sort;
        parsed.control.push([rawName, value]);
      }
      continue;
    }
    if (rawName === '_summary') {
      // search.html#summary: count is the total without entries; false is the default.
      if (summary !== undefined) throw bad('_summary may be given once');
      if (!['true', 'text', 'data', 'count', 'false'].includes(value)) {
        ignore(rawName, `_summary=${value} is not a summary mode (true, text, data, count or false)`);
        continue;
      }
      summary = value;
      parsed.control.push([rawName, value]);
      continue;
    }
    if (rawName === '_elements') {
      if (elements !== undefined) throw bad('_elements may be given once (elements are separated by commas)');
      const names = value.split(',').map((name) => name.trim()).filter((name) => name !== '');
      const unknown = names.filter((name) => !isElementOf(definition.type, name));
      if (unknown.length > 0) {
        ignore(rawName, `_elements: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not a top-level element' : 'are not top-level elements'} of ${definition.type}`);
        continue;
      }
      elements = names;
      parsed.control.push([rawName, value]);
      continue;
    }
    if (rawName === '_include' || rawName === '_revinclude') {
      const targets = rawName === '_include' ? includeTargets(definition) : revIncludeTargets(definition);
      const [sourceType, parameterName, targetType] = value.split(':');
      const target = targets.find((candidate) => candidate.sourceType === sourceType && candidate.parameter === parameterName);
      if (!target || (targetType !== undefined && targetType !== target.targetType) || value.split(':').length > 3) {
        const offered = targets.map((candidate) => `${candidate.sourceType}:${candidate.parameter}`).join(', ') || 'none';
        ignore(rawName, `${rawName}=${value} is not supported for ${definition.type} (offered: ${offered})`);
        continue;
      }
      const list = rawName === '_include' ? parsed.include : parsed.revinclude;
      if (!list.includes(target)) list.push(target);
      parsed.control.push([rawName, value]);
      continue;
    }
    if (rawName.startsWith('_include:') || rawName.startsWith('_revinclude:')) {
      ignore(rawName, `${rawName}: modifiers of _include and _revinclude (:iterate) are not supported`);
      continue;
    }
    const [name, modifier] = rawName.split(':', 2) as [string, string | undefined];
    const parameter = definition.searchParameters.find((candidate) => candidate.name === name);
    if (!parameter) {
      ignore(rawName, `search parameter ${rawName} is not supported for ${definition.type}`);
      continue;
    }
    // A reference's type modifier (search.html#reference): subject:Patient=123 is subject=Patient/123.
    const typed = modifier !== undefined && parameter.type === 'reference' && parameter.target?.includes(modifier);
    if (modifier !== undefined && !typed) {
      const offered = parameter.type === 'reference' ? `only :${(parameter.target ?? []).join(', :')} is` : 'no modifiers are';
      ignore(rawName, `${rawName}: the modifier :${modifier} is not supported on ${name} (${offered})`);
      continue;
    }
    // search.html#errors: an empty parameter value is ignored.
    if (value === '') continue;
    const values = typed ? splitValues(value).map((id) => (id.includes('/') ? id : `${modifier}/${id}`)) : splitValues(value);
    if (values.length > 100) throw bad(`${name} has more than 100 values`);
    parsed.conditions.push(condition(parameter, values));
    parsed.criteria.push([name, typed ? values.join(',') : value]);
  }
  if (strict && parsed.ignored.length > 0) throw unsupportedParameters(supportedSearchParameterNames(definition), parsed.ignored);
  if (summary === 'count') parsed.count = 0;
  if (elements !== undefined && summary !== undefined && summary !== 'false' && summary !== 'count') {
    throw bad('_summary and _elements choose the returned elements in different ways: give one of them');
  }
  if (summary === 'true' || summary === 'text' || summary === 'data') parsed.subset = { summary };
  else if (elements !== undefined && summary !== 'count') parsed.subset = { elements };
  parsed.criteria.sort((a, b) => (a[0] === b[0] ? a[1].localeCompare(b[1]) : a[0].localeCompare(b[0])));
  return parsed;
}

/**
 * _sort=a,-b,… (search.html#sort): keys in priority order, `-` for descending. The parsed keys,
 * or why they are not supported.
 */
function parseSort(definition: FhirResourceDefinition, value: string): SearchSort | string {
  if (definition.sorts.length === 0) return `_sort is not supported for ${definition.type} (its results are newest first)`;
  const keys = value.split(',').map((key) => key.trim());
  if (keys.length > maxSortKeys) return `_sort takes at most ${maxSortKeys} keys`;
  const sort: SearchSort = [];
  for (const key of keys) {
    const descending = key.startsWith('-');
    const name = descending ? key.slice(1) : key;
    if (!definition.sorts.includes(name)) return `_sort=${value}: ${name || '(empty)'} is not a sort key of ${definition.type} (${definition.sorts.join(', ')}, each optionally with a leading -)`;
    if (sort.some((existing) => existing.key === name)) return `_sort=${value} names ${name} twice`;
    sort.push({ key: name, descending });
  }
  return sort;
}

/** Splits on commas not escaped with a backslash, then unescapes (search.html#escaping). */
function splitValues(value: string): string[] {
  const values: string[] = [];
  let current = '';
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    if (char === '\\' && i + 1 < value.length) {
      current += `\\${value[++i]}`;
    } else if (char === ',') {
      values.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  values.push(current);
  return values.filter((entry) => entry !== '');
}

function unescape(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

function condition(parameter: FhirSearchParameter, values: string[]): SearchCondition {
  if (parameter.name === '_id') return { kind: 'id', ids: values.map(unescape) };
  switch (parameter.type) {
    case 'token':
      return { kind: 'token', param: parameter.name, values: values.map(tokenValue) };
    case 'reference':
      return { kind: 'patient', ids: values.map((value) => referenceId(parameter.name, unescape(value))) };
    case 'string':
      return parameter.name === 'family' || parameter.name === 'given'
        ? { kind: 'name-part', part: parameter.name, values: values.map(unescape) }
        : { kind: 'name', values: values.map(unescape) };
    case 'date':
      // birthdate is a date (days); _lastUpdated and the clinical dates are instants.
      if (parameter.name === 'birthdate') return { kind: 'birthdate', values: values.map((value) => dayValue(parameter.name, value)) };
      return { kind: parameter.name === '_lastUpdated' ? 'last-updated' : 'clinical-date', values: values.map((value) => instantValue(parameter.name, value)) };
  }
}

/** code, system|code, |code (no system), system| (any code of the system): search.html#token. */
function tokenValue(value: string): TokenValue {
  let bar = -1;
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\') i++;
    else if (value[i] === '|') {
      bar = i;
      break;
    }
  }
  if (bar < 0) return { code: unescape(value) };
  const system = unescape(value.slice(0, bar));
  const code = unescape(value.slice(bar + 1));
  if (code === '') return { system };
  return { system, code };
}

/** Patient/{id} or a bare id (search.html#reference); any other type cannot match. */
function referenceId(name: string, value: string): string {
  const match = /^(?:(?:https?:\/\/[^?#]*\/)?([A-Za-z]+)\/)?([^/]+)$/.exec(value);
  if (!match) throw bad(`${name}=${value} is not a reference (Patient/{id} or {id})`);
  if (match[1] !== undefined && match[1] !== 'Patient') return '';
  return match[2]!;
}

function splitPrefix(value: string): [ComparisonPrefix, string] {
  const prefix = value.slice(0, 2) as ComparisonPrefix;
  if (prefixes.includes(prefix) && /^[a-z]{2}\d/.test(value)) return [prefix, value.slice(2)];
  return ['eq', value];
}

function dayValue(name: string, raw: string): { prefix: ComparisonPrefix; start: string; end: string } {
  const [prefix, value] = splitPrefix(raw);
  const range = dateRange(value);
  if (!range) throw bad(`${name}=${raw} is not a date (yyyy, yyyy-mm or yyyy-mm-dd, with an optional prefix eq, ne, lt, le, gt, ge)`);
  return { prefix, ...range };
}

function instantValue(name: string, raw: string): { prefix: ComparisonPrefix; start: Date; end: Date } {
  const [prefix, value] = splitPrefix(raw);
  // An unencoded "+" of a zone offset arrives as a space (application/x-www-form-urlencoded).
  const range = instantRange(value.replace(' ', '+'));
  if (!range) throw bad(`${name}=${raw} is not a date or dateTime with a time zone (with an optional prefix eq, ne, lt, le, gt, ge)`);
  return { prefix, ...range };
}
