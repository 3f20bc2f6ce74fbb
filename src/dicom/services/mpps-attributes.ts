import type { ProcedureCode, ProcedureStepStatus } from '../../domain/imaging/procedure-steps.ts';
import { parseTimezoneOffset } from '../../domain/imaging/study-time.ts';
import { readLocalTime } from '../../domain/time-zones/local-time.ts';

/** The MPPS attributes the domain records, read from an N-CREATE / N-SET attribute list. */
export interface MppsAttributes {
  status?: string;
  studyInstanceUid?: string;
  modality?: string;
  stationAeTitle?: string;
  startedAt?: Date;
  endedAt?: Date;
  procedureCode?: ProcedureCode;
  /** Attributes present but unusable, as PS3.7 offending-element descriptions. */
  problems: string[];
}

export type { ProcedureStepStatus };

function first(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

function text(value: unknown): string | undefined {
  const item = first(value);
  if (typeof item === 'string') return item.trim() || undefined;
  if (typeof item === 'number') return String(item);
  return undefined;
}

/**
 * PS3.4 F.7.2 / PS3.3 C.4.13-C.4.16, from dcmjs's naturalized dataset:
 *   Performed Procedure Step Status (0040,0252)
 *   Scheduled Step Attributes Sequence (0040,0270) > Study Instance UID (0020,000D)
 *   Modality (0008,0060), Performed Station AE Title (0040,0241)
 *   Performed Procedure Step Start Date/Time (0040,0244/0245), End Date/Time (0040,0250/0251)
 *   Procedure Code Sequence (0008,1032) > Code Value, Coding Scheme Designator, Code Meaning
 *   Timezone Offset From UTC (0008,0201) for the date-times (PS3.3 C.12.1.1.8); without it they
 *   are the site's local time (`siteTimeZone`, an IANA zone), and UTC when the site has none.
 */
export function readMppsAttributes(dataset: Record<string, unknown>, siteTimeZone: string | null = null): MppsAttributes {
  const attributes: MppsAttributes = { problems: [] };
  const status = text(dataset.PerformedProcedureStepStatus);
  if (status !== undefined) attributes.status = status.toUpperCase();
  const scheduled = first(dataset.ScheduledStepAttributesSequence) as Record<string, unknown> | undefined;
  const studyUid = text(scheduled?.StudyInstanceUID);
  if (studyUid !== undefined) attributes.studyInstanceUid = studyUid;
  const modality = text(dataset.Modality);
  if (modality !== undefined) attributes.modality = modality;
  const station = text(dataset.PerformedStationAETitle);
  if (station !== undefined) attributes.stationAeTitle = station;
  const offset = text(dataset.TimezoneOffsetFromUTC);
  for (const [field, dateKey, timeKey] of [
    ['startedAt', 'PerformedProcedureStepStartDate', 'PerformedProcedureStepStartTime'],
    ['endedAt', 'PerformedProcedureStepEndDate', 'PerformedProcedureStepEndTime'],
  ] as const) {
    const date = text(dataset[dateKey]);
    if (date === undefined) continue;
    const parsed = dateTime(date, text(dataset[timeKey]), offset, siteTimeZone);
    if (parsed) attributes[field] = parsed;
    else attributes.problems.push(`${dateKey}/${timeKey} is not a valid DA/TM`);
  }
  const code = first(dataset.ProcedureCodeSequence) as Record<string, unknown> | undefined;
  const codeValue = text(code?.CodeValue) ?? text(code?.LongCodeValue) ?? text(code?.URNCodeValue);
  if (codeValue !== undefined) {
    const scheme = text(code?.CodingSchemeDesignator);
    const meaning = text(code?.CodeMeaning);
    attributes.procedureCode = { codeValue, ...(scheme ? { codingSchemeDesignator: scheme } : {}), ...(meaning ? { codeMeaning: meaning } : {}) };
  }
  return attributes;
}

/** DA YYYYMMDD + TM HHMMSS.FFFFFF (PS3.5 table 6.2-1), with an optional &ZZXX offset. */
function dateTime(date: string, time: string | undefined, offset: string | undefined, siteTimeZone: string | null): Date | undefined {
  const d = /^(\d{4})(\d{2})(\d{2})$/.exec(date);
  if (!d) return undefined;
  const t = /^(\d{2})(\d{2})?(\d{2})?(?:\.(\d{1,6}))?$/.exec(time ?? '000000');
  if (!t) return undefined;
  const [year, month, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
  const [hour, minute, second] = [Number(t[1]), Number(t[2] ?? 0), Number(t[3] ?? 0)];
  const millis = Math.floor(Number(`0.${t[4] ?? '0'}`) * 1000);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const offsetMinutes = parseTimezoneOffset(offset);
  let result: Date;
  if (offsetMinutes !== undefined) {
    result = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000);
  } else if (siteTimeZone) {
    result = readLocalTime({ year, month, day, hour, minute, second, millisecond: millis }, siteTimeZone).instant;
  } else {
    result = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis));
  }
  return Number.isNaN(result.getTime()) || result.getDate() === undefined ? undefined : result;
}
