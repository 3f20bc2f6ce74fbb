import { items } from './associate-rq.ts';
import { abortReason, UpperLayerError } from './pdu-types.ts';

/** The parts of an A-ASSOCIATE-AC (PS3.8 9.3.3) a requestor acts on. */
export interface AssociateAccept {
  /** Accepted presentation contexts: id -> transfer syntax. */
  accepted: Map<number, string>;
  /** 0 means unlimited (PS3.8 D.1.1). */
  maxPduLength: number;
}

/** PS3.8 9.3.3: fixed 68-byte header, then items; only what a C-STORE requestor needs is read. */
export function parseAssociateAccept(body: Buffer): AssociateAccept {
  if (body.length < 68) throw invalid('A-ASSOCIATE-AC is shorter than its fixed fields');
  const accept: AssociateAccept = { accepted: new Map(), maxPduLength: 0 };
  for (const item of items(body, 68)) {
    if (item.type === 0x21) {
      if (item.value.length < 4) throw invalid('presentation context item too short');
      const id = item.value[0]!;
      const result = item.value[2]!;
      const syntax = [...items(item.value, 4)].find((sub) => sub.type === 0x40);
      if (result === 0 && syntax) accept.accepted.set(id, syntax.value.toString('latin1').replace(/[\0 ]+$/, ''));
    } else if (item.type === 0x50) {
      for (const sub of items(item.value, 0)) if (sub.type === 0x51 && sub.value.length === 4) accept.maxPduLength = sub.value.readUInt32BE(0);
    }
  }
  return accept;
}

function invalid(message: string): UpperLayerError {
  return new UpperLayerError(message, abortReason.invalidPduParameterValue);
}
