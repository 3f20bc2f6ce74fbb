/**
 * HL7 v2 DT/DTM (HL7 v2.5.1 section 2.A.21/2.A.22: YYYY[MM[DD[HH[MM[SS[.S…]]]]]][+/-ZZZZ]) to FHIR
 * date and dateTime. FHIR requires a zone once a time is present; a DTM without an offset is read
 * as UTC (documented; HL7 leaves it to the sender's local time, which the gateway cannot know).
 */
const dtm = /^(\d{4})(?:(\d{2})(?:(\d{2})(?:(\d{2})(?:(\d{2})(?:(\d{2})(?:\.(\d{1,4}))?)?)?)?)?)?([+-]\d{4})?$/;

export interface ParsedDateTime {
  /** FHIR date: YYYY, YYYY-MM or YYYY-MM-DD */
  date: string;
  /** FHIR dateTime (with a zone when a time is present) */
  dateTime: string;
  /** True when a time was given without an offset and UTC was assumed. */
  assumedUtc: boolean;
}

export function parseHl7DateTime(value: string): ParsedDateTime | undefined {
  const match = dtm.exec(value.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, offset] = match;
  if (month !== undefined && (Number(month) < 1 || Number(month) > 12)) return undefined;
  if (day !== undefined) {
    const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
    if (Number(day) < 1 || Number(day) > daysInMonth) return undefined;
  }
  if (hour !== undefined && Number(hour) > 23) return undefined;
  if (minute !== undefined && Number(minute) > 59) return undefined;
  if (second !== undefined && Number(second) > 59) return undefined;
  if (offset !== undefined && (Number(offset.slice(1, 3)) > 14 || Number(offset.slice(3)) > 59)) return undefined;
  const date = [year, month, day].filter((part) => part !== undefined).join('-');
  if (hour === undefined) return { date, dateTime: date, assumedUtc: false };
  const time = `${hour}:${minute ?? '00'}:${second ?? '00'}${fraction ? `.${fraction}` : ''}`;
  const zone = offset ? `${offset.slice(0, 3)}:${offset.slice(3)}` : 'Z';
  return { date, dateTime: `${date}T${time}${zone}`, assumedUtc: offset === undefined };
}
