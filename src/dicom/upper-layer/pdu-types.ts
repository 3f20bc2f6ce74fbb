/** PS3.8 9.3.1: PDU type codes of the upper layer protocol. */
export const pduType = {
  associateRq: 0x01,
  associateAc: 0x02,
  associateRj: 0x03,
  pData: 0x04,
  releaseRq: 0x05,
  releaseRp: 0x06,
  abort: 0x07,
} as const;

export type PduTypeCode = (typeof pduType)[keyof typeof pduType];

export interface Pdu {
  type: PduTypeCode;
  body: Buffer;
}

/** PS3.8 9.3.8, table 9-26: A-ABORT source and reason values. */
export const abortSource = { serviceUser: 0, serviceProvider: 2 } as const;
export const abortReason = {
  notSpecified: 0,
  unrecognizedPdu: 1,
  unexpectedPdu: 2,
  unrecognizedPduParameter: 4,
  unexpectedPduParameter: 5,
  invalidPduParameterValue: 6,
} as const;

/** A protocol violation: the association ends with A-ABORT carrying this reason. */
export class UpperLayerError extends Error {
  override readonly name = 'UpperLayerError';
  readonly reason: number;
  constructor(message: string, reason: number) {
    super(message);
    this.reason = reason;
  }
}
