import type { Resource } from '@medplum/fhirtypes';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { elementTables } from './summary-elements.ts';

/**
 * _summary and _elements (https://hl7.org/fhir/R4/search.html#summary, #elements): a resource
 * cut to part of its elements, always with resourceType, id, meta and its mandatory elements,
 * and tagged SUBSETTED so that no client stores it back over the whole resource.
 */

export type SummaryMode = 'true' | 'text' | 'data' | 'count' | 'false';

export type Subset = { summary: 'true' | 'text' | 'data' } | { elements: string[] };

export const subsettedTag = { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue', code: 'SUBSETTED', display: 'subsetted' };

/** Whether `key` (a JSON property) is the element `name` of the definition, choice types included. */
function isElement(key: string, name: string): boolean {
  if (!name.endsWith('[x]')) return key === name;
  const stem = name.slice(0, -3);
  return key.startsWith(stem) && /^[A-Z]/.test(key.slice(stem.length));
}

/** The top-level element names of a type, for checking _elements. */
export function elementNames(type: string): readonly string[] {
  return elementTables[type]?.elements ?? [];
}

/** Whether `name` is a top-level element of the type (a choice element by its stem, valueQuantity by value[x]). */
export function isElementOf(type: string, name: string): boolean {
  return elementNames(type).some((element) => element === name || element === `${name}[x]` || isElement(name, element));
}

export function subsetResource<T extends Resource>(resource: T, subset: Subset): T {
  const table = elementTables[resource.resourceType];
  const mandatory = table?.mandatory ?? [];
  const keep = (key: string): boolean => {
    if (key === 'resourceType' || key === 'id' || key === 'meta') return true;
    if (mandatory.some((name) => isElement(key, name))) return true;
    if ('elements' in subset) return subset.elements.some((name) => key === name || isElement(key, `${name}[x]`) || isElement(key, name));
    switch (subset.summary) {
      case 'data':
        return key !== 'text';
      case 'text':
        return key === 'text';
      case 'true':
        return (table?.summary ?? []).some((name) => isElement(key, name));
    }
  };
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resource)) if (keep(key)) kept[key] = value;
  const meta = { ...(resource.meta ?? {}) };
  const tags = meta.tag ?? [];
  if (!tags.some((tag) => tag.system === subsettedTag.system && tag.code === subsettedTag.code)) meta.tag = [...tags, subsettedTag];
  kept.meta = meta;
  return kept as T;
}

/**
 * _summary and _elements on read and vread (http.html#read allows both): the subset asked for,
 * or none. Any other query parameter is left alone, as before.
 */
export function readSubset(type: string, pairs: [string, string][]): Subset | undefined {
  const summary = pairs.filter(([name]) => name === '_summary').map(([, value]) => value);
  const elements = pairs.filter(([name]) => name === '_elements').map(([, value]) => value);
  if (summary.length > 1 || elements.length > 1) throw new HttpProblem(400, 'invalid', '_summary and _elements may each be given once');
  const mode = summary[0];
  if (mode !== undefined && !['true', 'text', 'data', 'false'].includes(mode)) {
    throw new HttpProblem(400, 'invalid', `_summary=${mode} is not a summary mode of a read (true, text, data or false)`);
  }
  if (elements[0] !== undefined) {
    if (mode !== undefined && mode !== 'false') throw new HttpProblem(400, 'invalid', '_summary and _elements choose the returned elements in different ways: give one of them');
    const names = elements[0].split(',').map((name) => name.trim()).filter((name) => name !== '');
    const unknown = names.filter((name) => !isElementOf(type, name));
    if (unknown.length > 0) throw new HttpProblem(400, 'invalid', `_elements: ${unknown.join(', ')} not a top-level element of ${type}`);
    return { elements: names };
  }
  return mode === 'true' || mode === 'text' || mode === 'data' ? { summary: mode } : undefined;
}
