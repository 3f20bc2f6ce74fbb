import { connect, type Socket } from 'node:net';

/**
 * A hand-driven DICOM peer for the cases no well-behaved SCU produces: garbage, truncated PDUs,
 * aborts in the middle of a transfer, idle associations. PDUs are built here from PS3.8 section
 * 9.3 directly, independently of the listener's encoder.
 */
export interface ReceivedPdu {
  type: number;
  body: Buffer;
}

export class RawPeer {
  readonly socket: Socket;
  #buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  #ended = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    socket.on('end', () => {
      this.#ended = true;
      this.#wake();
    });
    socket.on('close', () => {
      this.#ended = true;
      this.#wake();
    });
    socket.on('error', () => {});
  }

  static connect(port: number, localAddress = '127.0.0.1'): Promise<RawPeer> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, localAddress, allowHalfOpen: true }, () => resolve(new RawPeer(socket)));
      socket.once('error', reject);
    });
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next PDU from the listener, or undefined when it closed the connection first. */
  async nextPdu(): Promise<ReceivedPdu | undefined> {
    for (;;) {
      if (this.#buffer.length >= 6) {
        const length = this.#buffer.readUInt32BE(2);
        if (this.#buffer.length >= 6 + length) {
          const pdu = { type: this.#buffer[0]!, body: this.#buffer.subarray(6, 6 + length) };
          this.#buffer = this.#buffer.subarray(6 + length);
          return pdu;
        }
      }
      if (this.#ended) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Resolves when the listener has closed the connection. */
  async closed(): Promise<void> {
    while (!this.#ended) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function pdu(type: number, body: Buffer): Buffer {
  const header = Buffer.alloc(6);
  header[0] = type;
  header.writeUInt32BE(body.length, 2);
  return Buffer.concat([header, body]);
}

function item(type: number, value: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header[0] = type;
  header.writeUInt16BE(value.length, 2);
  return Buffer.concat([header, value]);
}

const ascii = (text: string) => Buffer.from(text, 'latin1');

export interface RequestContext {
  id: number;
  abstractSyntax: string;
  transferSyntaxes: string[];
}

export function associateRequest(options: {
  calledAeTitle: string;
  callingAeTitle?: string;
  contexts: RequestContext[];
  protocolVersion?: number;
  applicationContext?: string;
  maxPduLength?: number;
  /** PS3.7 D.3.3.4: SOP classes the requestor offers to be the SCP of (to receive C-GET's C-STOREs). */
  scpRoleFor?: string[];
}): Buffer {
  const fixed = Buffer.alloc(68, 0);
  fixed.writeUInt16BE(options.protocolVersion ?? 1, 0);
  fixed.write(options.calledAeTitle.padEnd(16, ' '), 4, 'latin1');
  fixed.write((options.callingAeTitle ?? 'RAWPEER').padEnd(16, ' '), 20, 'latin1');
  const parts = [fixed, item(0x10, ascii(options.applicationContext ?? '1.2.840.10008.3.1.1.1'))];
  for (const context of options.contexts) {
    const subItems = [item(0x30, ascii(context.abstractSyntax)), ...context.transferSyntaxes.map((ts) => item(0x40, ascii(ts)))];
    parts.push(item(0x20, Buffer.concat([Buffer.from([context.id, 0, 0, 0]), ...subItems])));
  }
  const maxLength = Buffer.alloc(4);
  maxLength.writeUInt32BE(options.maxPduLength ?? 16384, 0);
  const roles = (options.scpRoleFor ?? []).map((uid) => {
    const length = Buffer.alloc(2);
    length.writeUInt16BE(uid.length, 0);
    return item(0x54, Buffer.concat([length, ascii(uid), Buffer.from([0, 1])]));
  });
  parts.push(item(0x50, Buffer.concat([item(0x51, maxLength), item(0x52, ascii('1.2.3.4.5')), ...roles])));
  return pdu(0x01, Buffer.concat(parts));
}

/** One P-DATA-TF with one PDV (PS3.8 9.3.5). */
export function pData(contextId: number, isCommand: boolean, isLast: boolean, fragment: Buffer): Buffer {
  const pdv = Buffer.alloc(6);
  pdv.writeUInt32BE(fragment.length + 2, 0);
  pdv[4] = contextId;
  pdv[5] = (isCommand ? 1 : 0) | (isLast ? 2 : 0);
  return pdu(0x04, Buffer.concat([pdv, fragment]));
}

export const releaseRequest = () => pdu(0x05, Buffer.alloc(4));
export const abortRequest = () => pdu(0x07, Buffer.alloc(4));

type CommandElement = [element: number, value: string | number];

/** A command set in implicit VR little endian (PS3.7 6.3.1); numbers are US values. */
export function commandSet(elements: CommandElement[]): Buffer {
  const encoded = elements
    .sort((a, b) => a[0] - b[0])
    .map(([element, value]) => {
      let bytes: Buffer;
      if (typeof value === 'number') {
        bytes = Buffer.alloc(2);
        bytes.writeUInt16LE(value, 0);
      } else {
        bytes = ascii(value.length % 2 ? `${value}\0` : value);
      }
      const header = Buffer.alloc(8);
      header.writeUInt16LE(0, 0);
      header.writeUInt16LE(element, 2);
      header.writeUInt32LE(bytes.length, 4);
      return Buffer.concat([header, bytes]);
    });
  const body = Buffer.concat(encoded);
  const groupLength = Buffer.alloc(12);
  groupLength.writeUInt32LE(4, 4);
  groupLength.writeUInt32LE(body.length, 8);
  return Buffer.concat([groupLength, body]);
}

export function cStoreRequest(messageId: number, sopClassUid: string, sopInstanceUid: string): Buffer {
  return commandSet([
    [0x0002, sopClassUid],
    [0x0100, 0x0001],
    [0x0110, messageId],
    [0x0700, 0],
    [0x0800, 0x0000],
    [0x1000, sopInstanceUid],
  ]);
}

export function cEchoRequest(messageId: number): Buffer {
  return commandSet([
    [0x0002, '1.2.840.10008.1.1'],
    [0x0100, 0x0030],
    [0x0110, messageId],
    [0x0800, 0x0101],
  ]);
}

/** Reads a response command set from the PDVs of one P-DATA-TF: element -> raw value. */
export function readCommand(body: Buffer): Map<number, Buffer> {
  const values = new Map<number, Buffer>();
  const length = body.readUInt32BE(0);
  const command = body.subarray(6, 4 + length);
  for (let offset = 0; offset < command.length; ) {
    const element = command.readUInt16LE(offset + 2);
    const valueLength = command.readUInt32LE(offset + 4);
    values.set(element, command.subarray(offset + 8, offset + 8 + valueLength));
    offset += 8 + valueLength;
  }
  return values;
}

export function statusOf(body: Buffer): number {
  return readCommand(body).get(0x0900)!.readUInt16LE(0);
}

/** PS3.8 9.3.8: A-ABORT source and reason. */
export function abortDetails(pdu: ReceivedPdu): { source: number; reason: number } {
  return { source: pdu.body[2]!, reason: pdu.body[3]! };
}

/** Associates with one context and returns the peer once the A-ASSOCIATE-AC is in. */
export async function associate(port: number, calledAeTitle: string, contexts: RequestContext[]): Promise<RawPeer> {
  const peer = await RawPeer.connect(port);
  peer.write(associateRequest({ calledAeTitle, contexts }));
  const answer = await peer.nextPdu();
  if (answer?.type !== 0x02) throw new Error(`association not accepted: PDU type ${answer?.type}`);
  return peer;
}
