/**
 * Whether two resources say the same thing, ignoring id and meta. Key order is ignored: resources
 * read back from jsonb have their keys reordered, so a plain JSON.stringify comparison would see
 * a change in every re-sent message and write needless versions.
 */
export function sameContent(a: object, b: object): boolean {
  const { meta: _ma, id: _ia, ...restA } = a as Record<string, unknown>;
  const { meta: _mb, id: _ib, ...restB } = b as Record<string, unknown>;
  return canonical(restA) === canonical(restB);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
