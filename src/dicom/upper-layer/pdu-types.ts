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
  /**
   * The body as views of the chunks it arrived in: a P-DATA-TF body of 256 KiB spans several
   * socket reads, and joining them would copy every byte of every instance once more, and churn
   * enough memory to keep the garbage collector busy.
   */
  parts: Buffer[];
}

/** The body of a PDU in one buffer, for the small PDUs parsed as a whole. */
export function pduBody(pdu: Pdu): Buffer {
  return pdu.parts.length === 1 ? pdu.parts[0]! : Buffer.concat(pdu.parts);
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
