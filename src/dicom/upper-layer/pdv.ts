import { abortReason, UpperLayerError } from './pdu-types.ts';

/** One presentation data value item of a P-DATA-TF PDU (PS3.8 9.3.5.1, annex E.2). */
export interface Pdv {
  contextId: number;
  isCommand: boolean;
  isLast: boolean;
  fragment: Buffer;
}

/** Splits a P-DATA-TF body into its PDV items; a PDV must fit in its PDU. */
export function parsePdvs(body: Buffer): Pdv[] {
  const pdvs: Pdv[] = [];
  let offset = 0;
  while (offset < body.length) {
    if (offset + 6 > body.length) throw new UpperLayerError('truncated PDV item', abortReason.invalidPduParameterValue);
    const length = body.readUInt32BE(offset);
    if (length < 2 || offset + 4 + length > body.length) {
      throw new UpperLayerError('PDV item length does not fit its PDU', abortReason.invalidPduParameterValue);
    }
    const control = body[offset + 5]!;
    pdvs.push({
      contextId: body[offset + 4]!,
      isCommand: (control & 0x01) !== 0,
      isLast: (control & 0x02) !== 0,
      fragment: body.subarray(offset + 6, offset + 4 + length),
    });
    offset += 4 + length;
  }
  if (pdvs.length === 0) throw new UpperLayerError('P-DATA-TF without a PDV item', abortReason.invalidPduParameterValue);
  return pdvs;
}
