import { HttpProblem } from '../../platform/http/http-problem.ts';
import { resourceDefinition, type FhirResourceDefinition, type TypeInteraction } from '../capability/resource-definitions.ts';
import { tooDeepToStore } from './references.ts';

/**
 * The entries of a batch or transaction Bundle (https://hl7.org/fhir/R4/http.html#transaction),
 * checked before anything runs. A fault of the Bundle itself (not a Bundle, another type, too many
 * entries, a fullUrl twice) refuses the whole; a fault of one entry is that entry's (EntryProblem):
 * a batch answers it in the entry, a transaction fails with it.
 */

export type BundleKind = 'batch' | 'transaction';

export type EntryMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** What an entry asks for, once its method and url are understood. */
export type EntryTarget =
  | { interaction: 'read'; id: string }
  | { interaction: 'vread'; id: string; versionId: string }
  | { interaction: 'history-instance'; id: string }
  | { interaction: 'history-type' }
  | { interaction: 'search-type' }
  | { interaction: 'create' }
  | { interaction: 'update'; id: string }
  | { interaction: 'conditional-update'; query: string };

export interface BundleEntry {
  index: number;
  fullUrl?: string;
  method: EntryMethod;
  /** The url relative to the service base, as the entry's own request would have it. */
  url: string;
  definition: FhirResourceDefinition;
  target: EntryTarget;
  resource?: unknown;
  ifNoneExist?: string;
  ifMatch?: string;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
}

/** A fault of one entry: its status and its OperationOutcome issue. */
export class EntryProblem extends HttpProblem {
  constructor(statusCode: number, code: string, message: string) {
    super(statusCode, code, message);
  }
}

export interface ParsedBundle {
  kind: BundleKind;
  /** In the Bundle's order; an entry that could not be understood carries its problem instead. */
  entries: (BundleEntry | { index: number; fullUrl?: string; problem: EntryProblem })[];
}

const methods = new Set<EntryMethod>(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH']);

export function parseBundle(body: unknown, base: string, maxEntries: number): ParsedBundle {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || (body as { resourceType?: unknown }).resourceType !== 'Bundle') {
    throw new HttpProblem(400, 'invalid', 'POST /fhir takes a Bundle of type batch or transaction (resourceType "Bundle")');
  }
  const { type, entry } = body as { type?: unknown; entry?: unknown };
  if (type !== 'batch' && type !== 'transaction') {
    const message = `the Bundle's type is ${JSON.stringify(type ?? null)}: POST /fhir takes a batch or a transaction`;
    throw new HttpProblem(400, 'invalid', message, { details: { issues: [{ message, location: 'Bundle.type' }] } });
  }
  if (entry !== undefined && !Array.isArray(entry)) throw new HttpProblem(400, 'invalid', 'Bundle.entry must be an array');
  const items = (entry ?? []) as unknown[];
  if (items.length > maxEntries) {
    throw new HttpProblem(413, 'too-large', `the Bundle has ${items.length} entries; this server takes at most ${maxEntries} in one Bundle (CG_FHIR_BUNDLE_MAX_ENTRIES)`);
  }
  const fullUrls = new Map<string, number>();
  const entries = items.map((item, index) => {
    const fullUrl = (item as { fullUrl?: unknown } | null)?.fullUrl;
    if (typeof fullUrl === 'string') {
      const earlier = fullUrls.get(fullUrl);
      if (earlier !== undefined) {
        const message = `entries ${earlier} and ${index} have the same fullUrl ${fullUrl}: a fullUrl names one entry (bdl-7)`;
        throw new HttpProblem(400, 'invalid', message, { details: { issues: [{ message, location: `Bundle.entry[${index}].fullUrl` }] } });
      }
      fullUrls.set(fullUrl, index);
    }
    try {
      return parseEntry(item, index, base);
    } catch (error) {
      if (!(error instanceof EntryProblem)) throw error;
      return { index, ...(typeof fullUrl === 'string' ? { fullUrl } : {}), problem: error };
    }
  });
  return { kind: type, entries };
}

function parseEntry(item: unknown, index: number, base: string): BundleEntry {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new EntryProblem(400, 'invalid', 'the entry is not an object');
  const { fullUrl, request, resource } = item as { fullUrl?: unknown; request?: unknown; resource?: unknown };
  if (fullUrl !== undefined && (typeof fullUrl !== 'string' || fullUrl === '')) throw new EntryProblem(400, 'invalid', 'fullUrl must be a non-empty string');
  if (request === null || typeof request !== 'object' || Array.isArray(request)) {
    throw new EntryProblem(400, 'invalid', 'the entry has no request: every entry of a batch or transaction says what to do (entry.request with method and url)');
  }
  const { method, url, ifNoneExist, ifMatch, ifNoneMatch, ifModifiedSince } = request as Record<string, unknown>;
  if (typeof method !== 'string' || !methods.has(method as EntryMethod)) {
    throw new EntryProblem(400, 'invalid', `request.method ${JSON.stringify(method ?? null)} is not one of GET, HEAD, POST, PUT, DELETE, PATCH`);
  }
  if (typeof url !== 'string' || url.trim() === '') throw new EntryProblem(400, 'invalid', 'request.url is missing');
  for (const [name, value] of Object.entries({ ifNoneExist, ifMatch, ifNoneMatch, ifModifiedSince })) {
    if (value !== undefined && typeof value !== 'string') throw new EntryProblem(400, 'invalid', `request.${name} must be a string`);
  }
  const relative = relativeUrl(url.trim(), base);
  const { definition, target } = entryTarget(method as EntryMethod, relative);
  const writes = target.interaction === 'create' || target.interaction === 'update' || target.interaction === 'conditional-update';
  if (writes && resource === undefined) throw new EntryProblem(400, 'invalid', `a ${method} entry carries the resource in entry.resource`);
  // Refused here, before anything copies or serialises it: both recurse, and a resource nested
  // thousands deep exhausted the stack (a 500). Validation would refuse it anyway (64 levels).
  if (writes && tooDeepToStore(resource)) throw new EntryProblem(400, 'invalid', 'the resource is nested too deep to be stored (64 levels at most)');
  if (ifNoneExist !== undefined && target.interaction !== 'create') throw new EntryProblem(400, 'invalid', 'request.ifNoneExist belongs to a POST (conditional create)');
  return {
    index,
    ...(typeof fullUrl === 'string' ? { fullUrl } : {}),
    method: method as EntryMethod,
    url: relative,
    definition,
    target,
    ...(writes ? { resource } : {}),
    ...(typeof ifNoneExist === 'string' ? { ifNoneExist } : {}),
    ...(typeof ifMatch === 'string' ? { ifMatch } : {}),
    ...(typeof ifNoneMatch === 'string' ? { ifNoneMatch } : {}),
    ...(typeof ifModifiedSince === 'string' ? { ifModifiedSince } : {}),
  };
}

/** http.html#transaction: the url is relative to the base; an absolute one must be on this base. */
function relativeUrl(url: string, base: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    if (!url.startsWith(`${base}/`)) throw new EntryProblem(400, 'invalid', `request.url ${url} is not on this server (${base}): give it relative to the base, e.g. Patient/{id}`);
    return url.slice(base.length + 1);
  }
  return url.replace(/^\//, '');
}

/** The interaction an entry's method and url name, if this server offers it for the type. */
function entryTarget(method: EntryMethod, url: string): { definition: FhirResourceDefinition; target: EntryTarget } {
  const [path = '', query] = splitOnce(url, '?');
  const segments = path.split('/');
  const type = segments[0] ?? '';
  const definition = resourceDefinition(type);
  if (!definition) {
    throw new EntryProblem(404, 'not-found', `${type || 'the url'} is not a resource type of this server (GET /fhir/metadata lists them)`);
  }
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) throw new EntryProblem(400, 'invalid', `request.url ${url} is not a FHIR url`);
  if (segments.some((segment) => segment.startsWith('$'))) {
    throw new EntryProblem(400, 'not-supported', `${method} ${url}: operations are not offered in a batch or transaction (send ${segments.find((segment) => segment.startsWith('$'))} as a request of its own)`);
  }
  const target = targetOf(method, segments, query);
  if (!target) throw new EntryProblem(400, 'invalid', `${method} ${url} is not an interaction of FHIR R4 (http.html)`);
  const claimed: TypeInteraction = target.interaction === 'conditional-update' ? 'update' : target.interaction;
  if (!definition.interactions.includes(claimed) || method === 'DELETE' || method === 'PATCH') {
    const offered = definition.interactions.join(', ');
    throw new EntryProblem(405, 'method-not-allowed', `${method} ${url}: this server does not offer ${describe(method, target)} on ${type} (it offers ${offered}; see GET /fhir/metadata)`);
  }
  return { definition, target };
}

function targetOf(method: EntryMethod, segments: string[], query: string | undefined): EntryTarget | undefined {
  const [, id, history, versionId, ...rest] = segments;
  if (rest.length > 0) return undefined;
  const reading = method === 'GET' || method === 'HEAD';
  if (id === undefined) {
    if (reading) return { interaction: 'search-type' };
    if (method === 'POST') return query === undefined ? { interaction: 'create' } : undefined;
    if (method === 'PUT' || method === 'DELETE' || method === 'PATCH') return query === undefined ? undefined : { interaction: 'conditional-update', query };
    return undefined;
  }
  if (query !== undefined && !reading) return undefined;
  if (id === '_history') return reading && history === undefined ? { interaction: 'history-type' } : undefined;
  if (history === undefined) {
    if (reading) return { interaction: 'read', id };
    return method === 'POST' ? undefined : { interaction: 'update', id };
  }
  if (history !== '_history' || !reading) return undefined;
  return versionId === undefined ? { interaction: 'history-instance', id } : { interaction: 'vread', id, versionId };
}

function describe(method: EntryMethod, target: EntryTarget): string {
  if (method === 'DELETE') return 'delete';
  if (method === 'PATCH') return 'patch';
  return target.interaction;
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}
