/**
 * Run as its own process by validation.ts: reads the full FHIR definition files, keeps what
 * validating the service's resource types needs, and writes it to stdout as JSON. Parsing the
 * files takes a few hundred MB of heap that a JavaScript process does not give back to the
 * system afterwards; done here, that memory is returned when this process exits.
 */
import { deriveBindingRules, type BindingRule } from './binding-rules.ts';
import { readStructureDefinitions, readTerminology, validatedResourceTypes } from './definitions.ts';
import type { StructureDefinition } from '@medplum/fhirtypes';

export interface ExtractedDefinitions {
  structureDefinitions: StructureDefinition[];
  bindingRules: Record<string, BindingRule[]>;
}

export function extractDefinitions(): ExtractedDefinitions {
  const structureDefinitions = readStructureDefinitions();
  const bindingRules = deriveBindingRules(structureDefinitions, readTerminology(), validatedResourceTypes);
  return { structureDefinitions: structureDefinitions.map(withoutProse), bindingRules };
}

/** The validator reads the snapshot's structure; the narrative and mappings are only for people. */
function withoutProse(definition: StructureDefinition): StructureDefinition {
  const { text: _text, differential: _differential, mapping: _mapping, ...rest } = definition;
  const element = rest.snapshot?.element.map(({ definition: _d, comment: _c, requirements: _r, mapping: _m, alias: _a, ...kept }) => kept);
  return element ? { ...rest, snapshot: { ...rest.snapshot, element } } : rest;
}

if (import.meta.main) process.stdout.write(JSON.stringify(extractDefinitions()));
