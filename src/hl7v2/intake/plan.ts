/**
 * From a parsed message to what it asks the domain to do (pure; no database). Checks MSH against
 * what the gateway accepts (HL7 v2.5.1 section 2.9.2: message type, event, processing id,
 * version), then maps PID/PV1/MRG/OBX. Every problem found is returned, not just the first.
 */
import type { Annotation, Observation, Patient } from '@medplum/fhirtypes';
import type { IncomingResult } from '../../domain/patients/observations.ts';
import type { VisitContext } from '../../domain/patients/visits.ts';
import { readHeader, type MessageHeader } from '../er7/header.ts';
import { fieldOf, valueOf, type Hl7Message, type Segment } from '../er7/message.ts';
import { documentValueTypes, mapObxDocument } from '../mapping/document.ts';
import { mapObx } from '../mapping/observation.ts';
import { orderNumber } from '../mapping/result-identity.ts';
import { identifierList, mapPid, type DemographicElement } from '../mapping/patient.ts';
import { mapPv1 } from '../mapping/visit.ts';
import { errorCodes, error, warning, type Problem } from '../problems.ts';
import { planVisitCorrection, visitCorrectionEvents, visitStatusOfEvent, type VisitCorrectionPlan } from './visit-events.ts';

export type Plan =
  | { kind: 'demographics'; patient: Patient; clear: DemographicElement[]; visit?: VisitContext }
  | { kind: 'merge'; merges: { sourceIdentifier: string; target: Patient; location: Segment }[] }
  | VisitCorrectionPlan
  | { kind: 'results'; groups: PatientResults[] };

/** One PATIENT_RESULT group of an ORU^R01: a patient and the results filed under it. */
export interface PatientResults {
  patient: Patient;
  visit?: VisitContext;
  results: IncomingResult[];
}

export interface PlanResult {
  header: MessageHeader;
  plan?: Plan;
  /** true when the message is refused for its kind (AR), false when for its content (AE). */
  rejected: boolean;
  problems: Problem[];
}

export const acceptedEvents: Record<string, readonly string[]> = {
  ADT: ['A01', 'A02', 'A03', 'A04', 'A05', 'A06', 'A07', 'A08', 'A11', 'A12', 'A13', 'A28', 'A31', 'A40'],
  ORU: ['R01'],
};

/**
 * Add and update person information (v2.5.1 sections 3.3.28 and 3.3.31): demographics only. Their
 * PV1 is required by the standard but filled with pseudo data ("N", not applicable), so it is not
 * taken as the patient's visit.
 */
const personOnlyEvents: readonly string[] = ['A28', 'A31'];

export interface PlanOptions {
  /** IANA zone of the sender's times without a UTC offset; absent or null: read as UTC, with a warning. */
  timeZone?: string | null;
}

export function planMessage(message: Hl7Message, options: PlanOptions = {}): PlanResult {
  const header = readHeader(message);
  const rejection = checkHeader(header);
  if (rejection.some((p) => p.severity === 'E')) return { header, rejected: true, problems: rejection };
  const problems: Problem[] = [...rejection];
  if (header.controlId === '') problems.push(error(errorCodes.requiredFieldMissing, 'MSH-10 (message control id) is empty', { segment: 'MSH', sequence: 1, field: 10 }));
  let plan: Plan | undefined;
  if (header.messageCode === 'ADT' && header.triggerEvent === 'A40') plan = planMerge(message, problems, options);
  else if (header.messageCode === 'ADT' && visitCorrectionEvents.includes(header.triggerEvent)) {
    const pid = requirePid(message, problems);
    plan = pid ? planVisitCorrection(message, header.triggerEvent, pid, problems, options.timeZone) : undefined;
  } else if (header.messageCode === 'ADT') plan = planDemographics(message, header.triggerEvent, problems, options);
  else plan = planResults(message, header, problems, options);
  const failed = problems.some((p) => p.severity === 'E');
  return failed ? { header, rejected: false, problems } : { header, plan, rejected: false, problems };
}

function checkHeader(header: MessageHeader): Problem[] {
  const at = (field: number, component?: number) => ({ segment: 'MSH', sequence: 1, field, ...(component ? { component } : {}) });
  const problems: Problem[] = [];
  const events = acceptedEvents[header.messageCode];
  if (!events) {
    const accepted = Object.entries(acceptedEvents).flatMap(([code, codeEvents]) => codeEvents.map((event) => `${code}^${event}`));
    problems.push(error(errorCodes.unsupportedMessageType, `message type "${header.messageCode}" is not accepted (accepted: ${accepted.join(', ')})`, at(9, 1)));
  } else if (!events.includes(header.triggerEvent)) {
    problems.push(error(errorCodes.unsupportedEventCode, `event "${header.messageCode}^${header.triggerEvent}" is not accepted (accepted: ${events.map((e) => `${header.messageCode}^${e}`).join(', ')})`, at(9, 2)));
  }
  const processing = header.processingId.split('^')[0]!.trim();
  if (processing === '') problems.push(warning(errorCodes.requiredFieldMissing, 'MSH-11 (processing id) is empty; processed as P (production)', at(11)));
  else if (!['P', 'D', 'T'].includes(processing)) problems.push(error(errorCodes.unsupportedProcessingId, `MSH-11 processing id "${processing}" is not P, D or T`, at(11)));
  // v2 is backward compatible within major version 2 (section 2.8.2), so every 2.x is read by v2.5.1 rules.
  if (!/^2\.\d+(\.\d+)?$/.test(header.version)) problems.push(error(errorCodes.unsupportedVersionId, `MSH-12 version "${header.version}" is not an HL7 v2.x version`, at(12)));
  return problems;
}

function requirePid(message: Hl7Message, problems: Problem[]): Segment | undefined {
  const pid = message.segments.find((s) => s.name === 'PID');
  if (!pid) problems.push(error(errorCodes.segmentSequenceError, 'the message has no PID segment; a patient is required', { segment: 'PID' }));
  return pid;
}

/** The visit of the first PV1 among `segments` (a message's, or one patient group's). */
function visitOf(segments: readonly Segment[], problems: Problem[], options: PlanOptions): VisitContext | undefined {
  const pv1 = segments.find((s) => s.name === 'PV1');
  if (!pv1) return undefined;
  const mapped = mapPv1(pv1, options.timeZone);
  problems.push(...mapped.problems);
  return Object.keys(mapped.visit).length > 0 ? mapped.visit : undefined;
}

function planDemographics(message: Hl7Message, event: string, problems: Problem[], options: PlanOptions): Plan | undefined {
  const pid = requirePid(message, problems);
  if (!pid) return undefined;
  const mapped = mapPid(pid, options.timeZone);
  problems.push(...mapped.problems);
  const described = personOnlyEvents.includes(event) ? undefined : visitOf(message.segments, problems, options);
  const status = visitStatusOfEvent[event];
  const visit = described && status ? { ...described, status } : described;
  const obx = message.segments.filter((s) => s.name === 'OBX').length;
  if (obx > 0) problems.push(warning(errorCodes.segmentSequenceError, `${obx} OBX segment(s) in an ADT message were not stored; results are taken from ORU^R01`, { segment: 'OBX' }));
  // An A06 or A07 that gives the visit a new number names the old one in MRG (section 3.3.6):
  // moving visits between numbers is not done, and the sender is told so rather than left to assume it.
  const mrg = message.segments.find((s) => s.name === 'MRG');
  if (mrg) problems.push(warning(errorCodes.segmentSequenceError, `MRG[${mrg.sequence}] was not applied: ADT^${event} updates the visit of PV1-19; a prior visit or account number (MRG-5, MRG-3) is not moved to it`, { segment: 'MRG', sequence: mrg.sequence }));
  const plan: Plan = { kind: 'demographics', patient: mapped.patient, clear: mapped.cleared };
  return visit ? { ...plan, visit } : plan;
}

/** ADT^A40: one or more PATIENT groups, each PID [PD1] MRG [PV1] (v2.5.1 section 3.3.40). */
function planMerge(message: Hl7Message, problems: Problem[], options: PlanOptions): Plan | undefined {
  const merges: { sourceIdentifier: string; target: Patient; location: Segment }[] = [];
  let current: Segment | undefined;
  let pending: { pid: Segment; mrg?: Segment }[] = [];
  for (const segment of message.segments) {
    if (segment.name === 'PID') pending.push({ pid: segment });
    else if (segment.name === 'MRG') {
      const group = pending[pending.length - 1];
      if (!group || group.mrg) problems.push(error(errorCodes.segmentSequenceError, 'MRG without a preceding PID', { segment: 'MRG', sequence: segment.sequence }));
      else group.mrg = segment;
    }
  }
  if (pending.length === 0) problems.push(error(errorCodes.segmentSequenceError, 'ADT^A40 has no PID segment', { segment: 'PID' }));
  for (const group of pending) {
    current = group.pid;
    const mapped = mapPid(current, options.timeZone);
    problems.push(...mapped.problems);
    if (!group.mrg) {
      problems.push(error(errorCodes.segmentSequenceError, `PID[${current.sequence}] has no MRG segment naming the patient to merge`, { segment: 'PID', sequence: current.sequence }));
      continue;
    }
    const source = identifierList(fieldOf(group.mrg, 1))[0]?.value;
    if (!source) {
      problems.push(error(errorCodes.requiredFieldMissing, 'MRG-1 (prior patient identifier list) is empty', { segment: 'MRG', sequence: group.mrg.sequence, field: 1 }));
      continue;
    }
    merges.push({ sourceIdentifier: source, target: mapped.patient, location: group.mrg });
  }
  pending = [];
  return { kind: 'merge', merges };
}

/**
 * ORU^R01: one or more PATIENT_RESULT groups (v2.5.1 section 7.3.1), each a PID with its
 * ORDER_OBSERVATION groups of [ORC] OBR {NTE} ... {OBX {NTE}}. Each group's results are filed
 * under its own PID's patient: laboratory systems batch the results of several patients in one
 * message (v2.3 feeds do it often), and taking every result for the first PID's patient would put
 * them in the wrong chart. An NTE after the OBR comments on the order: its text is a note of every
 * Observation of the order, before the Observation's own notes (the NTE after its OBX). A note
 * with nowhere to go is not stored, and the ACK says so.
 */
function planResults(message: Hl7Message, header: MessageHeader, problems: Problem[], options: PlanOptions): Plan | undefined {
  const firstPid = requirePid(message, problems);
  if (!firstPid) return undefined;
  // A result before the first PID belongs to no patient that can be told: filing it under the
  // next PID's patient would be a guess.
  for (const segment of message.segments.slice(0, firstPid.position - 1)) {
    if (segment.name === 'OBR' || segment.name === 'OBX') {
      problems.push(error(errorCodes.segmentSequenceError, `${segment.name}[${segment.sequence}] comes before the first PID: the results of an ORU^R01 follow their patient's PID`, { segment: segment.name, sequence: segment.sequence }));
    }
  }
  const assumedUtc = { value: false };
  const groups = patientResultGroups(message).map((segments) => planPatientResults(segments, header, problems, options, assumedUtc));
  const results = groups.flatMap((group) => group.results);
  warnRepeatedIdentities(results, problems);
  warnSegmentsNotStored(message, problems);
  if (results.length === 0 && !problems.some((p) => p.severity === 'E')) {
    problems.push(warning(errorCodes.segmentSequenceError, 'the ORU^R01 carries no OBX segment; only the patient was resolved', { segment: 'OBX' }));
  }
  if (assumedUtc.value) problems.push(warning(errorCodes.dataTypeError, 'observation times without a UTC offset were read as UTC: no time zone is set for this site or integration client'));
  return { kind: 'results', groups };
}

/**
 * The segments of each PATIENT_RESULT group: from a PID up to the next PID. Segments before the
 * first PID (MSH, SFT) belong to no patient.
 */
function patientResultGroups(message: Hl7Message): Segment[][] {
  const groups: Segment[][] = [];
  for (const segment of message.segments) {
    if (segment.name === 'PID') groups.push([segment]);
    else groups[groups.length - 1]?.push(segment);
  }
  return groups;
}

/** One PATIENT_RESULT group (its PID first) to its patient, visit and results. */
function planPatientResults(segments: Segment[], header: MessageHeader, problems: Problem[], options: PlanOptions, assumedUtc: { value: boolean }): PatientResults {
  const mapped = mapPid(segments[0]!, options.timeZone);
  problems.push(...mapped.problems);
  const visit = visitOf(segments, problems, options);
  const hasResults = segments.some((s) => s.name === 'OBX');
  const results: IncomingResult[] = [];
  let obr: Segment | undefined;
  let orc: Segment | undefined;
  let orderNotes: Annotation[] = [];
  let orderNotesKept = false;
  let orderless = false;
  // What an NTE here would comment on: an Observation, the order (right after its OBR, or after
  // its notes), or nothing the service keeps (named for the warning).
  let noteTarget: { observation: Observation } | 'order' | { segment: Segment } | undefined;
  const endOrder = () => {
    if (obr && orderNotes.length > 0 && !orderNotesKept) {
      problems.push(warning(errorCodes.segmentSequenceError, `the ${orderNotes.length} order note(s) (NTE after OBR[${obr.sequence}]) were not stored: the order has no Observation to carry them`, { segment: 'OBR', sequence: obr.sequence }));
    }
    orderNotes = [];
    orderNotesKept = false;
  };
  for (const segment of segments) {
    if (segment.name === 'NTE') {
      const text = fieldOf(segment, 3).map((rep) => rep.map((component) => component.join('&')).join('^')).join('\n').trim();
      if (!text) continue;
      if (noteTarget === 'order') orderNotes.push({ text });
      else if (noteTarget && 'observation' in noteTarget) noteTarget.observation.note = [...(noteTarget.observation.note ?? []), { text }];
      else {
        const after = noteTarget ? `${noteTarget.segment.name}[${noteTarget.segment.sequence}]` : 'MSH';
        problems.push(warning(errorCodes.segmentSequenceError, `NTE[${segment.sequence}] after ${after} was not stored: only notes on an order (after OBR) or on an Observation (after its OBX) are kept`, { segment: 'NTE', sequence: segment.sequence }));
      }
      continue;
    }
    noteTarget = { segment };
    if (segment.name === 'OBX' && !obr && !orderless && !orderNumber({ obr, orc })) {
      // No OBR (and no ORC number) before it: the result has no order, which the OBR check below never sees.
      orderless = true;
      problems.push(warning(errorCodes.segmentSequenceError, `OBX[${segment.sequence}] comes before any OBR, so it has no order number: results without one are identified by their code and time, so a correction with another time is stored as a new result`, { segment: 'OBX', sequence: segment.sequence }));
    }
    if (segment.name === 'ORC') orc = segment;
    else if (segment.name === 'OBR') {
      endOrder();
      obr = segment;
      noteTarget = 'order';
      if (!orderNumber({ obr, orc }) && hasResults) {
        problems.push(warning(errorCodes.requiredFieldMissing, `OBR[${obr.sequence}] has no order number (OBR-3, OBR-2, ORC-3, ORC-2): its results are identified by their code and time, so a correction with another time is stored as a new result`, { segment: 'OBR', sequence: obr.sequence, field: 3 }));
      }
    } else if (segment.name === 'OBX' && documentValueTypes.has(valueOf(segment, 2).trim().toUpperCase())) {
      const result = mapObxDocument(segment, { obr, orc, sendingFacility: header.sendingFacility, timeZone: options.timeZone });
      problems.push(...result.problems);
      if (result.document) results.push({ resource: result.document, formerIdentifiers: result.formerIdentifiers });
      if (result.assumedUtc) assumedUtc.value = true;
    } else if (segment.name === 'OBX') {
      const result = mapObx(segment, { obr, orc, sendingFacility: header.sendingFacility, timeZone: options.timeZone });
      problems.push(...result.problems);
      if (result.observation) {
        if (orderNotes.length > 0) {
          result.observation.note = [...orderNotes];
          orderNotesKept = true;
        }
        noteTarget = { observation: result.observation };
        results.push({ resource: result.observation, formerIdentifiers: result.formerIdentifiers });
        if (result.assumedUtc) assumedUtc.value = true;
      }
    }
  }
  endOrder();
  return { patient: mapped.patient, ...(visit ? { visit } : {}), results };
}

// What an ORU^R01 is stored from; anything else it carries (PD1, PV2, TQ1, CTD, SPM, PRT, TXA,
// Z-segments...) is named in one warning, so that nothing is dropped under AA without a word.
const resultSegments = new Set(['MSH', 'PID', 'PV1', 'ORC', 'OBR', 'OBX', 'NTE']);

function warnSegmentsNotStored(message: Hl7Message, problems: Problem[]): void {
  const counts = new Map<string, number>();
  for (const segment of message.segments) if (!resultSegments.has(segment.name)) counts.set(segment.name, (counts.get(segment.name) ?? 0) + 1);
  if (counts.size === 0) return;
  const list = [...counts].map(([name, count]) => (count > 1 ? `${name} (${count})` : name)).join(', ');
  problems.push(warning(errorCodes.segmentSequenceError, `segments not stored (an ORU^R01 is stored from its PID, PV1, ORC, OBR, OBX and NTE): ${list}`));
}

/** One warning per identity that several OBX of the message share (result-identity.ts). */
function warnRepeatedIdentities(results: IncomingResult[], problems: Problem[]): void {
  const counts = new Map<string, number>();
  for (const { resource } of results) {
    const key = `${resource.resourceType} ${resource.identifier![0]!.value}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const [key, count] of counts) {
    if (count < 2) continue;
    const [, facility, order, code, subId] = /^\S+ ([^|]*)\|(.*)\|([^|]*)\|([^|]*)$/.exec(key) ?? [];
    problems.push(
      warning(errorCodes.duplicateKeyIdentifier, `${count} OBX of order ${order ?? ''} (${facility ?? ''}) share observation identifier ${code ?? ''} and sub-id "${subId ?? ''}" (OBX-3, OBX-4); each is stored as its own result, told apart by value type, then by order`, { segment: 'OBX' }),
    );
  }
}
