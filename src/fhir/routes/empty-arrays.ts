/**
 * The FHIRPath of every empty array in a body. FHIR JSON never has one (an element with no values
 * is left out: https://hl7.org/fhir/R4/json.html), the validator lets them through, and a stored
 * `"note": []` would be answered to every reader, whose strict parsers refuse it. Iterative, so
 * that a deeply nested body cannot overflow the stack here.
 */
export function emptyArrayPaths(body: object, type: string): string[] {
  const found: string[] = [];
  const pending: [unknown, string][] = [[body, type]];
  while (pending.length > 0) {
    const [value, path] = pending.pop()!;
    if (Array.isArray(value)) {
      if (value.length === 0) found.push(path);
      value.forEach((item, i) => pending.push([item, `${path}[${i}]`]));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) pending.push([child, `${path}.${key}`]);
    }
  }
  return found.sort();
}
