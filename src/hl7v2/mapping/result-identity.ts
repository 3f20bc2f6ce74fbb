/**
 * A result's identity: within an order, OBX-3 (observation identifier) plus OBX-4 (sub-id)
 * identify an observation (HL7 v2.5.1 section 7.4.2.4); OBX-1 only numbers the segments of one
 * message, so it has no part in it. The order is OBR-3 (filler order number, with its namespace),
 * else OBR-2 (placer), else ORC-3 / ORC-2, scoped by MSH-4 (order numbers are unique per filler).
 * The OBX of one message sharing an identity are told apart by the domain (value kind, then
 * order: src/domain/patients/result-matching.ts).
 */
import type { Identifier } from '@medplum/fhirtypes';
import { valueOf, type Segment } from '../er7/message.ts';
import type { ObservationIdentifier } from './observation-identifier.ts';

export const resultIdentifierSystem = 'urn:clinical-gateway:hl7v2:order-result';

export interface ResultContext {
  obr?: Segment;
  orc?: Segment;
  /** MSH-4 as text: order numbers are unique per filler, so the facility scopes the key. */
  sendingFacility: string;
}

/** The order number and its namespace, '' when the OBR and ORC carry none. */
export function orderNumber(context: Pick<ResultContext, 'obr' | 'orc'>): string {
  const candidates = [
    [context.obr, 3],
    [context.obr, 2],
    [context.orc, 3],
    [context.orc, 2],
  ] as const;
  for (const [segment, field] of candidates) {
    const id = valueOf(segment, field, 1).trim();
    if (id) {
      const authority = valueOf(segment, field, 2).trim() || valueOf(segment, field, 3).trim();
      return authority ? `${id}^${authority}` : id;
    }
  }
  return '';
}

export function resultIdentity(obx: Segment, context: ResultContext, observation: ObservationIdentifier): { identifier: Identifier; formerIdentifiers: Identifier[] } {
  // Without an order number, the result's code and time stand in for the order (as they always have).
  const order = orderNumber(context) || `${valueOf(obx, 3, 1).trim()}@${valueOf(obx, 14).trim() || valueOf(context.obr, 7).trim()}`;
  const subId = valueOf(obx, 4).trim();
  const value = (key: string) => [context.sendingFacility, order, key, subId].join('|');
  return {
    identifier: { system: resultIdentifierSystem, value: value(observation.key) },
    formerIdentifiers: observation.formerKey ? [{ system: resultIdentifierSystem, value: value(observation.formerKey) }] : [],
  };
}
