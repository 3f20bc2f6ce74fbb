/**
 * Patient merge (HL7 v2 ADT^A40 "merge patient - patient identifier list", HL7 v3
 * PRPA_IN201304UV02): the source patient's records move to the target, the source becomes
 * inactive with link replaced-by the target, and the target gets link replaces the source and
 * keeps the source's identifiers with use "old" (FHIR R4 Patient.link, patient-merge semantics).
 */
import type { Identifier, Patient, Reference, Resource } from '@medplum/fhirtypes';
import type { Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import { reassignImagingPatient } from '../imaging/reassign-patient.ts';
import { resourceStore } from '../records/resource-store.ts';
import { isStoredResourceType, patientReferenceElement } from '../records/search-parameters.ts';
import type { SiteContext } from '../site-context.ts';
import { upsertPatientDemographics } from './demographics.ts';
import { moveVisits } from './visits.ts';

export interface MergeResult {
  /** False when no active patient had the source identifier (not an error: the ACK warns). */
  sourceFound: boolean;
  /** Records moved: clinical resources, imaging studies and visits. */
  moved: number;
  targetId: string;
  /** True when this merge had already been applied (a re-sent message): nothing changed. */
  alreadyMerged: boolean;
}

export async function mergePatients(tx: Transaction, site: SiteContext, input: { sourceIdentifier: string; target: Patient }): Promise<MergeResult> {
  const sourceIdentifier = input.sourceIdentifier.trim();
  const targetIdentifier = input.target.identifier?.[0]?.value?.trim();
  if (!sourceIdentifier) throw new DomainError('invalid', 'the merge names no source patient identifier', [{ message: 'source identifier required', location: 'MRG-1' }]);
  if (sourceIdentifier === targetIdentifier) {
    throw new DomainError('invalid', `the source and target of the merge are the same patient (${sourceIdentifier})`, [{ message: 'source equals target', location: 'MRG-1' }]);
  }
  const store = resourceStore(tx, site);
  const { patient: target } = await upsertPatientDemographics(tx, site, input.target);
  const source = await store.findPatientByBusinessIdentifier(sourceIdentifier);
  if (!source) {
    const alreadyMerged = (target.identifier ?? []).some((id) => id.use === 'old' && id.value === sourceIdentifier);
    return { sourceFound: alreadyMerged, moved: 0, targetId: target.id!, alreadyMerged };
  }
  const sourceRef: Reference<Patient> = { reference: `Patient/${source.id}` };
  const targetRef: Reference<Patient> = { reference: `Patient/${target.id}` };

  let moved = 0;
  for (const resource of await store.listPatientCompartment(source.id!)) {
    const element = isStoredResourceType(resource.resourceType) ? patientReferenceElement(resource.resourceType) : undefined;
    if (!element) continue;
    await store.update({ ...resource, [element]: { ...(resource as unknown as Record<string, Reference>)[element], ...targetRef } } as Resource);
    moved++;
  }
  moved += await reassignImagingPatient(tx, site, source.id!, target.id!);
  moved += await moveVisits(tx, site, source.id!, target.id!);

  await store.update<Patient>({
    ...source,
    active: false,
    link: [...(source.link ?? []).filter((l) => l.other.reference !== targetRef.reference), { other: targetRef, type: 'replaced-by' }],
  });
  const known = new Set((target.identifier ?? []).map((id) => `${id.system ?? ''}|${id.value ?? ''}`));
  const oldIdentifiers: Identifier[] = (source.identifier ?? [])
    .filter((id) => id.value && !known.has(`${id.system ?? ''}|${id.value}`))
    .map((id) => ({ ...id, use: 'old' }));
  await store.update<Patient>({
    ...target,
    identifier: [...(target.identifier ?? []), ...oldIdentifiers],
    link: [...(target.link ?? []).filter((l) => l.other.reference !== sourceRef.reference), { other: sourceRef, type: 'replaces' }],
  });
  return { sourceFound: true, moved, targetId: target.id!, alreadyMerged: false };
}
