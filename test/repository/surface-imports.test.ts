// The folder layout tells the architecture: a folder per surface over one clinical domain and one
// storage layer, and surfaces never import each other (what two share lives below them).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';

const src = join(import.meta.dirname, '..', '..', 'src');
const surfaces = ['fhir', 'hl7v2', 'hl7v3', 'mpps', 'dicom', 'dicomweb', 'connectivity', 'admin'];

function typescriptFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return typescriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The surfaces other than its own that a file imports from, with the specifiers. */
export function crossSurfaceImports(file: string, text: string): string[] {
  const own = relative(src, file).split(sep)[0];
  const found: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const target = relative(src, resolve(dirname(file), match[1]!)).split(sep)[0];
    if (target !== own && surfaces.includes(target!)) found.push(`${relative(src, file)} imports ${match[1]}`);
  }
  return found;
}

test('no surface imports another surface', () => {
  const found = surfaces.flatMap((surface) => typescriptFiles(join(src, surface)).flatMap((file) => crossSurfaceImports(file, readFileSync(file, 'utf8'))));
  assert.deepEqual(found, [], 'move what two surfaces share into src/domain, src/storage or src/platform');
});

test('the check finds an import of another surface, and not one of the domain or of the same surface', () => {
  const file = join(src, 'hl7v3', 'mapping', 'patient.ts');
  assert.deepEqual(crossSurfaceImports(file, "import { x } from '../../hl7v2/mapping/datetime.ts';"), ["hl7v3/mapping/patient.ts imports ../../hl7v2/mapping/datetime.ts"]);
  assert.deepEqual(crossSurfaceImports(file, "import { y } from '../../domain/time-zones/hl7-timestamp.ts';\nimport { z } from '../xml/safe.ts';"), []);
});
