/**
 * References inside the resources of a Bundle (https://hl7.org/fhir/R4/bundle.html#references,
 * http.html#trules): every Reference.reference is visited, wherever it is nested, and the
 * narrative is rewritten too, as the transaction rules ask. Single writes use the same walk to
 * make this server's absolute references relative.
 */

/** urn:uuid: and urn:oid: name a resource only inside its Bundle. */
export function isBundleLocalUrn(reference: string): boolean {
  return /^urn:(uuid|oid):/i.test(reference);
}

/** A conditional reference (http.html#trules): Type?criteria, resolved by a search. */
export function conditionalReference(reference: string): { type: string; query: string } | undefined {
  const match = /^([A-Z][A-Za-z]+)\?(.+)$/.exec(reference);
  return match ? { type: match[1]!, query: match[2]! } : undefined;
}

/** Every Reference.reference value in the resource, with its FHIRPath-like location. */
export function referencesIn(resource: unknown): { reference: string; location: string }[] {
  const found: { reference: string; location: string }[] = [];
  visit(resource, '', (holder, location) => {
    found.push({ reference: holder.reference as string, location });
  });
  return found;
}

/** A copy of the resource with each reference the map knows replaced by its Type/id. */
export function rewriteReferences(resource: unknown, resolved: ReadonlyMap<string, string>): unknown {
  const copy = structuredClone(resource);
  visit(copy, '', (holder) => {
    const target = resolved.get(holder.reference as string);
    if (target !== undefined) holder.reference = target;
  });
  const text = (copy as { text?: { div?: unknown } }).text;
  if (text && typeof text.div === 'string') {
    let div = text.div;
    for (const [from, to] of resolved) if (div.includes(from)) div = div.split(from).join(to);
    text.div = div;
  }
  return copy;
}

/**
 * Rewrites in place the references to this server written absolute (`{base}/Patient/{id}`, as
 * clients copy them from a search's fullUrl) to the relative form the store keeps: the same
 * resource either way (references.html#literal). References to other servers are left as they are.
 */
export function localizeReferences<T>(resource: T, base: string): T {
  const prefix = `${base}/`;
  visit(resource, '', (holder) => {
    const reference = holder.reference as string;
    if (reference.startsWith(prefix) && /^[A-Z][A-Za-z]+\/[^/]+$/.test(reference.slice(prefix.length))) {
      holder.reference = reference.slice(prefix.length);
    }
  });
  return resource;
}

/**
 * Deeper than any resource the store accepts (src/domain/records/validation.ts refuses more than 64
 * levels): the walk stops there, so a hostile body nested thousands deep cannot exhaust the stack
 * before validation refuses it.
 */
const maxVisitDepth = 80;

/** Deeper than any resource the store accepts; such a resource is refused, never walked. */
export function tooDeepToStore(resource: unknown): boolean {
  return deeperThan(resource, maxVisitDepth);
}

function deeperThan(node: unknown, limit: number): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (limit === 0) return true;
  return Object.values(node).some((value) => deeperThan(value, limit - 1));
}

function visit(node: unknown, location: string, onReference: (holder: Record<string, unknown>, location: string) => void, depth = 0): void {
  if (depth > maxVisitDepth) return;
  if (Array.isArray(node)) {
    node.forEach((item, i) => visit(item, `${location}[${i}]`, onReference, depth + 1));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  if (typeof record.reference === 'string') onReference(record, `${location}.reference`);
  for (const [key, value] of Object.entries(record)) {
    if (key !== 'reference' && value !== null && typeof value === 'object') visit(value, location ? `${location}.${key}` : key, onReference, depth + 1);
  }
}
