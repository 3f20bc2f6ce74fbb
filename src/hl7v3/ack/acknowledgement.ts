/**
 * The acknowledgement model of HL7 v3 Transmission Infrastructure (MCCI_MT000200UV01): an
 * Acknowledgement with a typeCode and one AcknowledgementDetail per problem.
 */

/** AcknowledgementType (2.16.840.1.113883.5.18), application acknowledgement codes. */
export type AcknowledgementType = 'AA' | 'AE' | 'AR';

/** AcknowledgementDetailType (2.16.840.1.113883.5.1082). */
export type AcknowledgementDetailType = 'E' | 'W' | 'I';

/** AcknowledgementDetailCode (2.16.840.1.113883.5.1100): the codes this service sends. */
const v3DetailCodes = {
  INTERR: 'Internal system error',
  NS200: 'Unsupported interaction',
  NS202: 'Unsupported processing id',
  NS260: 'Unknown sender',
  SYN: 'Syntax error',
  SYN100: 'Required association missing',
  SYN101: 'Required attribute missing',
  SYN102: 'Data type error',
  SYN103: 'Value not found in code system',
  SYN105: 'Required element missing',
  SYN109: 'Mandatory element with null value',
  SYN113: 'Formal constraint violation',
} as const;

export const acknowledgementDetailCodeSystem = '2.16.840.1.113883.5.1100';
/** HL7 table 0357 (message error condition codes): acknowledgementDetail.code is a CE, so a
 * condition the v3 code system has no concept for is coded here, as the HL7 v2 path codes it. */
export const v2ErrorCodeSystem = '2.16.840.1.113883.12.357';

export const acknowledgementDetailCodes: Record<AcknowledgementDetailCode, { system: string; display: string }> = {
  ...(Object.fromEntries(Object.entries(v3DetailCodes).map(([code, display]) => [code, { system: acknowledgementDetailCodeSystem, display }])) as Record<
    keyof typeof v3DetailCodes,
    { system: string; display: string }
  >),
  '204': { system: v2ErrorCodeSystem, display: 'Unknown key identifier' },
};

export type AcknowledgementDetailCode = keyof typeof v3DetailCodes | '204';

export interface AcknowledgementDetail {
  typeCode: AcknowledgementDetailType;
  code: AcknowledgementDetailCode;
  /** What went wrong, for a person. */
  text: string;
  /** An XPath into the inbound message, where it applies. */
  location?: string;
}

/** An HL7 v3 instance identifier (II). */
export interface InstanceIdentifier {
  root: string;
  extension?: string;
}

/** A device of the transmission wrapper, as the sender or receiver of a message. */
export interface DeviceReference {
  ids: InstanceIdentifier[];
  /** asAgent/representedOrganization/id */
  organizationIds: InstanceIdentifier[];
}
