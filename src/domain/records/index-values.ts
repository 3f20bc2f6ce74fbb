import type { Resource } from '@medplum/fhirtypes';
import { DomainError, type DomainIssue } from '../errors.ts';
import { dateRange, storedInstantRange } from './fhir-date.ts';
import {
  clinicalDateElements,
  internalTokenParameters,
  patientReferenceElement,
  searchParameters,
  type StoredResourceType,
  type TokenPath,
} from './search-parameters.ts';

/** What the search indexes hold for one resource version; derived, never sent by a client. */
export interface IndexValues {
  /** The id in the resource's Patient reference (not yet checked against the site). */
  patientId: string | null;
  businessIdentifier: string | null;
  active: boolean;
  nameSearch: string | null;
  birthDateStart: string | null;
  birthDateEnd: string | null;
  /** The instants of the type's clinical date (Observation.effective, …): first, and the end (exclusive). */
  clinicalDateStart: string | null;
  clinicalDateEnd: string | null;
  tokens: IndexToken[];
}

export interface IndexToken {
  param: string;
  system: string;
  code: string;
}

/** btree index entries are bounded (about 2.7 kB); nothing sensible is longer than this. */
export const maxIndexedLength = 1024;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isResourceId(value: string): boolean {
  return uuidPattern.test(value);
}

/** Lower case without diacritics: FHIR string search ignores both (search.html#string). */
export function normalizeForNameSearch(value: string): string {
  return value.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

export function indexValues(type: StoredResourceType, resource: Resource): IndexValues {
  const issues: DomainIssue[] = [];
  const values: IndexValues = {
    patientId: null,
    businessIdentifier: null,
    active: true,
    nameSearch: null,
    birthDateStart: null,
    birthDateEnd: null,
    clinicalDateStart: null,
    clinicalDateEnd: null,
    tokens: [],
  };
  const record = resource as unknown as Record<string, unknown>;
  // patient and subject index the same element: it is read once.
  const referenceElement = patientReferenceElement(type);
  if (referenceElement) values.patientId = patientReference(record, type, referenceElement, issues);
  for (const parameter of searchParameters[type]) {
    const index = parameter.index;
    if (index.kind === 'token') addTokens(values.tokens, parameter.name, index.paths, record, type, issues);
  }
  addTokens(values.tokens, 'identifier', internalTokenParameters[type], record, type, issues);
  for (const element of clinicalDateElements(type)) {
    if (record[element] === undefined) continue;
    const range = storedInstantRange(record[element]);
    if (range) {
      values.clinicalDateStart = range.start;
      values.clinicalDateEnd = range.end;
    } else if (typeof record[element] === 'string' || hasBound(record[element])) {
      issues.push({ message: `${element} is not a valid date`, location: `${type}.${element}` });
    }
  }
  if (resource.resourceType === 'Patient') {
    const value = resource.identifier?.[0]?.value;
    values.businessIdentifier = value === undefined || value.trim() === '' ? null : value;
    values.active = resource.active !== false;
    values.nameSearch = nameSearchText(resource.name ?? []);
    if (resource.birthDate !== undefined) {
      const range = dateRange(resource.birthDate);
      if (range) {
        values.birthDateStart = range.start;
        values.birthDateEnd = range.end;
      } else {
        issues.push({ message: 'birthDate is not a valid date', location: 'Patient.birthDate' });
      }
    }
  }
  if (issues.length > 0) throw new DomainError('invalid', issues[0]!.message, issues);
  return values;
}

/** A Period with a start or an end: one with neither is valid FHIR and indexes nothing. */
function hasBound(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ((value as { start?: unknown }).start !== undefined || (value as { end?: unknown }).end !== undefined);
}

function addTokens(
  tokens: IndexToken[],
  param: string,
  paths: TokenPath[],
  record: Record<string, unknown>,
  type: string,
  issues: DomainIssue[],
): void {
  const seen = new Set(tokens.filter((token) => token.param === param).map((token) => `${token.system}|${token.code}`));
  const add = (system: string | undefined, code: string | undefined, location: string) => {
    if (typeof code !== 'string' || code === '') return;
    const s = typeof system === 'string' ? system : '';
    if (code.length > maxIndexedLength || s.length > maxIndexedLength) {
      issues.push({ message: `value longer than ${maxIndexedLength} characters`, location });
      return;
    }
    const key = `${s}|${code}`;
    if (seen.has(key)) return;
    seen.add(key);
    tokens.push({ param, system: s, code });
  };
  for (const path of paths) {
    const raw = record[path.element];
    const items = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
    items.forEach((item, i) => {
      const at = Array.isArray(raw) ? `${type}.${path.element}[${i}]` : `${type}.${path.element}`;
      if (path.type === 'code') {
        if (typeof item === 'string') add(path.system, item, at);
      } else if (path.type === 'Identifier') {
        const identifier = item as { system?: string; value?: string };
        add(identifier.system, identifier.value, `${at}.value`);
      } else {
        const codings = (item as { coding?: unknown }).coding;
        if (Array.isArray(codings)) {
          codings.forEach((coding: { system?: string; code?: string }, j) => add(coding?.system, coding?.code, `${at}.coding[${j}]`));
        }
      }
    });
  }
}

function patientReference(
  record: Record<string, unknown>,
  type: string,
  element: string,
  issues: DomainIssue[],
): string | null {
  const value = record[element] as { reference?: unknown } | undefined;
  if (value === undefined) return null;
  const location = `${type}.${element}.reference`;
  const reference = value.reference;
  if (typeof reference !== 'string') {
    issues.push({ message: `${element} must be a literal reference Patient/{id}`, location });
    return null;
  }
  const match = /^Patient\/([^/]+)$/.exec(reference);
  if (!match) {
    issues.push({ message: `${element} must reference a Patient of this site as Patient/{id}`, location });
    return null;
  }
  // Any id that is not one of ours cannot be a patient of the site; the caller reports it.
  return match[1]!;
}

/**
 * Every non-empty part of every name, normalized, in this order within each name: text, family,
 * given, prefix, suffix. Migration 0895's cg_patient_name_parts finds the family and given names
 * in it by that order: change the order there too.
 */
function nameSearchText(names: { text?: string; family?: string; given?: string[]; prefix?: string[]; suffix?: string[] }[]): string | null {
  const parts: string[] = [];
  for (const name of names) {
    for (const part of [name.text, name.family, ...(name.given ?? []), ...(name.prefix ?? []), ...(name.suffix ?? [])]) {
      if (typeof part === 'string' && part !== '') parts.push(normalizeForNameSearch(part));
    }
  }
  // The unit separator never occurs in a search value, so a substring cannot span two parts.
  return parts.length > 0 ? parts.join('\u001f') : null;
}
