/**
 * An association this service opens as requestor (PS3.8 9.2, the requestor's side), to send the
 * C-STORE sub-operations of a C-MOVE to its destination. Only what that needs: A-ASSOCIATE-RQ,
 * P-DATA both ways with one outstanding request, A-RELEASE and A-ABORT.
 */
import { connect, type Socket } from 'node:net';
import { decodeCommandSet, type CommandSet } from '../dimse/command-set.ts';
import { parseAssociateAccept } from '../upper-layer/associate-ac.ts';
import { encodeAbort, encodeAssociateRequest, encodeReleaseRequest } from '../upper-layer/pdu-encode.ts';
import { PduFramer } from '../upper-layer/pdu-framer.ts';
import { abortSource, pduBody, pduType, type Pdu } from '../upper-layer/pdu-types.ts';
import { parsePdvs } from '../upper-layer/pdv.ts';
import { writeWhenWritable } from '../upper-layer/socket-write.ts';

export interface OutgoingAssociationOptions {
  host: string;
  port: number;
  callingAeTitle: string;
  calledAeTitle: string;
  contexts: { id: number; abstractSyntax: string; transferSyntaxes: string[] }[];
  /** For the connection, the association's answer, and each response. */
  timeoutMs: number;
  maxPduLength: number;
}

/** The destination could not be reached, or refused the association. */
export class AssociationFailed extends Error {}

export class OutgoingAssociation {
  readonly #socket: Socket;
  readonly #framer: PduFramer;
  readonly #reader: AsyncIterator<Buffer>;
  readonly #timeoutMs: number;
  accepted = new Map<number, string>();
  peerMaxPduLength = 0;

  private constructor(socket: Socket, options: OutgoingAssociationOptions) {
    this.#socket = socket;
    this.#timeoutMs = options.timeoutMs;
    this.#framer = new PduFramer(() => Math.max(options.maxPduLength, 64 * 1024));
    this.#reader = socket[Symbol.asyncIterator]();
  }

  static async open(options: OutgoingAssociationOptions): Promise<OutgoingAssociation> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: options.host, port: options.port, noDelay: true });
      const timer = setTimeout(() => socket.destroy(new Error('connection timed out')), options.timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        socket.on('error', () => {}); // read errors surface as a closed connection
        resolve(socket);
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(new AssociationFailed(`cannot connect to ${options.host}:${options.port}: ${error.message}`));
      });
    });
    const association = new OutgoingAssociation(socket, options);
    try {
      await association.write(encodeAssociateRequest(options));
      const answer = await association.#nextPdu();
      if (answer?.type !== pduType.associateAc) throw new AssociationFailed(answer?.type === pduType.associateRj ? 'association rejected by the destination' : 'no association accepted by the destination');
      const accept = parseAssociateAccept(pduBody(answer));
      association.accepted = accept.accepted;
      association.peerMaxPduLength = accept.maxPduLength;
      return association;
    } catch (error) {
      socket.destroy();
      throw error instanceof AssociationFailed ? error : new AssociationFailed(`association failed: ${(error as Error).message}`);
    }
  }

  /** Writes a PDU, waiting while the socket is full. */
  write(pdu: Buffer): Promise<void> {
    return writeWhenWritable(this.#socket, pdu, () => new AssociationFailed('the destination closed the association'));
  }

  /** The next command the destination sends (a C-STORE response); data sets are skipped. */
  async nextCommand(): Promise<CommandSet> {
    const fragments: Buffer[] = [];
    for (;;) {
      const pdu = await this.#nextPdu();
      if (pdu?.type !== pduType.pData) throw new AssociationFailed('the destination ended the association');
      for (const pdv of parsePdvs(pdu.parts)) {
        if (!pdv.isCommand) continue;
        fragments.push(...pdv.fragment);
        if (pdv.isLast) return decodeCommandSet(Buffer.concat(fragments));
      }
    }
  }

  /** A-RELEASE, waiting for the answer a bounded time; the connection is closed either way. */
  async release(): Promise<void> {
    try {
      await this.write(encodeReleaseRequest());
      await this.#nextPdu();
    } catch {
      // Released or not, the sub-operations are already counted.
    } finally {
      this.#socket.destroy();
    }
  }

  abort(): void {
    if (!this.#socket.destroyed) this.#socket.end(encodeAbort(abortSource.serviceUser, 0));
    this.#socket.destroySoon();
  }

  async #nextPdu(): Promise<Pdu | undefined> {
    for (;;) {
      const pdu = this.#framer.next();
      if (pdu) return pdu;
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        this.#reader.next().then((result) => (result.done ? undefined : (result.value as Buffer)), () => undefined),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new AssociationFailed('the destination did not answer in time')), this.#timeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk === undefined) return undefined;
      this.#framer.push(chunk);
    }
  }
}
