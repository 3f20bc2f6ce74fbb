/**
 * The FHIRPath of every empty array in a body. FHIR JSON never has one (an element with no values
 * is left out: https://hl7.org/fhir/R4/json.html), the validator lets them through, and a stored
 * `"note": []` would be answered to every reader, whose strict parsers refuse it. Iterative, and
 * it looks no deeper than a valid resource goes: the validator refuses deeper bodies, which would
 * otherwise cost here a path as long as their depth for every level.
 */
const deepestLook = 64;

export function emptyArrayPaths(body: object, type: string): string[] {
  const found: string[] = [];
  const pending: [unknown, string, number][] = [[body, type, 1]];
  while (pending.length > 0) {
    const [value, path, depth] = pending.pop()!;
    if (depth > deepestLook) continue;
    if (Array.isArray(value)) {
      if (value.length === 0) found.push(path);
      value.forEach((item, i) => pending.push([item, `${path}[${i}]`, depth + 1]));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) pending.push([child, `${path}.${key}`, depth + 1]);
    }
  }
  return found.sort();
}
