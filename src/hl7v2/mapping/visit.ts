/**
 * PV1 to the visit context stored against the patient (the gateway's analogue of the IG's
 * "PV1[Encounter]" map): PV1-2 patient class (table 0004), PV1-3 assigned location (PL),
 * PV1-7 attending doctor (XCN), PV1-19 visit number (CX), PV1-44 admit and PV1-45 discharge date/time.
 */
import type { VisitContext } from '../../domain/patients/visits.ts';
import { componentOf, fieldOf, hl7Null, valueOf, type Segment } from '../er7/message.ts';
import { errorCodes, warning, type Problem } from '../problems.ts';
import { parseHl7DateTime } from '../../domain/time-zones/hl7-timestamp.ts';

// Table 0004 to the v3 ActEncounterCode the IG uses for Encounter.class.
const patientClasses: Record<string, string> = {
  E: 'emergency',
  I: 'inpatient',
  O: 'outpatient',
  P: 'preadmit',
  R: 'recurring',
  B: 'obstetrics',
  C: 'commercial',
  N: 'not-applicable',
  U: 'unknown',
};

/** `timeZone`: the IANA zone of the sender's times without an offset (datetime.ts). */
export function mapPv1(pv1: Segment, timeZone?: string | null): { visit: VisitContext; problems: Problem[] } {
  const problems: Problem[] = [];
  const clean = (v: string) => (v === hl7Null ? '' : v.trim());
  const visit: VisitContext = {};
  const classCode = clean(valueOf(pv1, 2)).toUpperCase();
  if (classCode !== '') {
    visit.patientClass = classCode;
    const display = patientClasses[classCode];
    if (display) visit.patientClassDisplay = display;
    else problems.push(warning(errorCodes.tableValueNotFound, `PV1-2 (patient class) "${classCode}" is not in table 0004`, { segment: 'PV1', sequence: pv1.sequence, field: 2 }));
  }
  const location = fieldOf(pv1, 3)[0];
  if (location) {
    const parts = { pointOfCare: clean(componentOf(location, 1)), room: clean(componentOf(location, 2)), bed: clean(componentOf(location, 3)), facility: clean(componentOf(location, 4)) };
    const text = [parts.facility, parts.pointOfCare, parts.room, parts.bed].filter(Boolean).join(' / ');
    if (text) visit.location = { ...parts, text };
  }
  const doctor = fieldOf(pv1, 7)[0];
  if (doctor) {
    const id = clean(componentOf(doctor, 1));
    const family = clean(componentOf(doctor, 2, 1));
    const given = clean(componentOf(doctor, 3));
    const prefix = clean(componentOf(doctor, 6));
    const display = [prefix, given, family].filter(Boolean).join(' ');
    if (id || display) visit.attendingDoctor = { ...(id ? { id } : {}), ...(display ? { display } : {}) };
  }
  const visitNumber = clean(valueOf(pv1, 19));
  if (visitNumber) visit.visitNumber = visitNumber;
  for (const [field, name, key] of [[44, 'admit', 'admitTime'], [45, 'discharge', 'dischargeTime']] as const) {
    const text = clean(valueOf(pv1, field));
    if (!text) continue;
    const parsed = parseHl7DateTime(text, timeZone);
    if (parsed) visit[key] = parsed.dateTime;
    else problems.push(warning(errorCodes.dataTypeError, `PV1-${field} (${name} date/time) "${text}" is not a date/time; ignored`, { segment: 'PV1', sequence: pv1.sequence, field }));
  }
  return { visit, problems };
}
