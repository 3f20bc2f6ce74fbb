/**
 * Problems found in an inbound message, each carrying an HL7 table 0357 error code (HL7 v2.5.1
 * section 2.15.5.3, ERR-3) and a location (ERR-2, data type ERL). They become ERR segments of
 * the ACK and the `errors` / `warnings` arrays of the HTTP answer.
 */
export const errorCodes = {
  segmentSequenceError: 100,
  requiredFieldMissing: 101,
  dataTypeError: 102,
  tableValueNotFound: 103,
  unsupportedMessageType: 200,
  unsupportedEventCode: 201,
  unsupportedProcessingId: 202,
  unsupportedVersionId: 203,
  unknownKeyIdentifier: 204,
  duplicateKeyIdentifier: 205,
  applicationRecordLocked: 206,
  applicationInternalError: 207,
} as const;

export type ErrorCode = (typeof errorCodes)[keyof typeof errorCodes];

/** Table 0357 display texts. */
export const errorCodeText: Record<ErrorCode, string> = {
  100: 'Segment sequence error',
  101: 'Required field missing',
  102: 'Data type error',
  103: 'Table value not found',
  200: 'Unsupported message type',
  201: 'Unsupported event code',
  202: 'Unsupported processing id',
  203: 'Unsupported version id',
  204: 'Unknown key identifier',
  205: 'Duplicate key identifier',
  206: 'Application record locked',
  207: 'Application internal error',
};

/** ERR-2 (ERL): segment id, its occurrence, field, repetition, component, subcomponent. */
export interface ErrorLocation {
  segment: string;
  sequence?: number;
  field?: number;
  repetition?: number;
  component?: number;
  subcomponent?: number;
}

/** Table 0516 severity: E error, W warning, I information. */
export type Severity = 'E' | 'W' | 'I';

export interface Problem {
  code: ErrorCode;
  severity: Severity;
  message: string;
  location?: ErrorLocation;
}

export function error(code: ErrorCode, message: string, location?: ErrorLocation): Problem {
  return location ? { code, severity: 'E', message, location } : { code, severity: 'E', message };
}

export function warning(code: ErrorCode, message: string, location?: ErrorLocation): Problem {
  return location ? { code, severity: 'W', message, location } : { code, severity: 'W', message };
}

/** Human form of a location, e.g. PID[1]-3.4 (used in JSON answers and the message log). */
export function describeLocation(location: ErrorLocation | undefined): string | undefined {
  if (!location) return undefined;
  let text = `${location.segment}[${location.sequence ?? 1}]`;
  if (location.field !== undefined) {
    text += `-${location.field}`;
    if (location.repetition !== undefined && location.repetition > 1) text += `(${location.repetition})`;
    if (location.component !== undefined) text += `.${location.component}`;
    if (location.subcomponent !== undefined) text += `.${location.subcomponent}`;
  }
  return text;
}
