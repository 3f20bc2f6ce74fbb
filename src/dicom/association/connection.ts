/**
 * One TCP connection of the DICOM listener: the acceptor side of the PS3.8 upper layer state
 * machine (section 9.2), reduced to what an SCP needs: A-ASSOCIATE-RQ in, AC or RJ out; P-DATA
 * in both directions; A-RELEASE and A-ABORT. PDUs are handled one at a time, and the read loop
 * awaits each step (file writes included): TCP flow control then holds the sender back while the
 * disk or database is slower than the network.
 */
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { findSiteByAeTitle, siteContextFor } from '../../domain/sites/sites.ts';
import type { TrafficCounter } from '../../domain/activity/traffic-counter.ts';
import type { GatewayMetrics } from '../../platform/metrics/gateway-metrics.ts';
import type { Database } from '../../storage/database.ts';
import { TransientStorageError } from '../../storage/errors.ts';
import { CommandSetError } from '../dimse/command-set.ts';
import type { StorageLayout } from '../../storage/dicom/layout.ts';
import type { StoreLimits } from '../../storage/dicom/store-limits.ts';
import { applicationContextUid } from '../../storage/dicom/uids.ts';
import { parseAssociateRequest, type AssociateRequest } from '../upper-layer/associate-rq.ts';
import { recordRefused } from '../../domain/refused-traffic/recorder.ts';
import { encodeAbort, encodeAssociateAccept, encodeAssociateReject, encodeReleaseResponse } from '../upper-layer/pdu-encode.ts';
import { PduFramer } from '../upper-layer/pdu-framer.ts';
import { writeWhenWritable } from '../upper-layer/socket-write.ts';
import { abortReason, abortSource, pduBody, pduType, UpperLayerError, type Pdu } from '../upper-layer/pdu-types.ts';
import type { AssociationContext } from './association-context.ts';
import type { AssociationLimits } from './association-limits.ts';
import { MessageExchange } from './message-exchange.ts';
import { negotiate } from './negotiate.ts';

export interface ConnectionSettings {
  /** Largest P-DATA-TF PDU this side receives (announced in the A-ASSOCIATE-AC). */
  maxPduLength: number;
  /** PS3.8 9.1.5: ARTIM, for the A-ASSOCIATE-RQ to arrive and for the peer to close after RJ/RP. */
  artimTimeoutMs: number;
  /** No PDU for this long during an association: A-ABORT. */
  idleTimeoutMs: number;
}

export interface ConnectionDependencies {
  settings: ConnectionSettings;
  database: Database;
  logger: Logger;
  layout: StorageLayout;
  limits: AssociationLimits;
  storeLimits: StoreLimits;
  metrics?: GatewayMetrics;
  traffic?: TrafficCounter;
}

/** The A-ASSOCIATE-RQ is bounded separately: it carries at most 128 contexts and user items. */
const maxAssociateRequestLength = 256 * 1024;

class Timeout extends Error {}
class Interrupted extends Error {}

export class DicomConnection {
  readonly #socket: Socket;
  readonly #deps: ConnectionDependencies;
  readonly #remoteAddress: string;
  readonly #framer: PduFramer;
  readonly #reader: AsyncIterator<Buffer>;
  #logger: Logger;
  #exchange: MessageExchange | undefined;
  #holdsSlot = false;
  #shuttingDown = false;
  #interrupt: (() => void) | undefined;

  constructor(socket: Socket, deps: ConnectionDependencies) {
    this.#socket = socket;
    this.#deps = deps;
    this.#remoteAddress = (socket.remoteAddress ?? 'unknown').replace(/^::ffff:/, '');
    this.#logger = deps.logger.child({ remoteAddress: this.#remoteAddress });
    this.#framer = new PduFramer((type) => (type === pduType.associateRq ? maxAssociateRequestLength : deps.settings.maxPduLength));
    this.#reader = socket[Symbol.asyncIterator]();
  }

  /** True once an A-ASSOCIATE-RQ was accepted on this connection. */
  get associated(): boolean {
    return this.#exchange !== undefined;
  }

  /** Ends the connection after the message in progress, if any (listener shutdown). */
  shutdown(): void {
    this.#shuttingDown = true;
    if (!this.#exchange?.busy) this.#interrupt?.();
  }

  /** Cuts the connection at once (after the shutdown grace period). */
  destroy(): void {
    this.#socket.destroy();
  }

  async run(): Promise<void> {
    const socket = this.#socket;
    socket.setNoDelay(true); // PS3.8 does not ask for Nagle; small responses must not wait for ACKs.
    socket.on('error', (error) => this.#logger.debug({ err: error }, 'socket error'));
    try {
      // One deadline for the whole A-ASSOCIATE-RQ, not per read: a byte every few seconds must
      // not hold the connection open (issue 26 point 3; PS3.8 9.1.5 ARTIM runs until the RQ is in).
      const request = await this.#nextPdu(this.#deps.settings.artimTimeoutMs, true);
      if (!request) return;
      if (request.type !== pduType.associateRq) throw new UpperLayerError('expected A-ASSOCIATE-RQ', abortReason.unexpectedPdu);
      const exchange = await this.#associate(parseAssociateRequest(pduBody(request)));
      if (!exchange) return this.#linger();
      this.#exchange = exchange;
      await this.#transfer(exchange);
    } catch (error) {
      this.#fail(error);
    } finally {
      await this.#exchange?.abandon();
      if (this.#holdsSlot) this.#deps.limits.release(this.#remoteAddress);
      if (!socket.destroyed) socket.destroy();
    }
  }

  async #transfer(exchange: MessageExchange): Promise<void> {
    for (;;) {
      if (this.#shuttingDown && !exchange.busy) {
        this.#logger.info(exchange.summary, 'association aborted: the listener is shutting down');
        this.#send(encodeAbort(abortSource.serviceUser, 0));
        return;
      }
      let pdu: Pdu | undefined;
      try {
        pdu = await this.#nextPdu(this.#deps.settings.idleTimeoutMs);
      } catch (error) {
        // A requestor waits in silence while its C-MOVE or C-FIND runs: not idle.
        if (error instanceof Timeout && exchange.operating) continue;
        throw error;
      }
      if (!pdu) {
        this.#logger.warn({ ...exchange.summary, inMessage: exchange.busy }, 'connection closed without A-RELEASE or A-ABORT');
        return;
      }
      switch (pdu.type) {
        case pduType.pData:
          for (const response of await exchange.receive(pdu.parts)) this.#send(response);
          break;
        case pduType.releaseRq:
          // PS3.8 9.3.6 / 7.2: a release with a message still outstanding is a protocol error.
          if (exchange.busy) throw new UpperLayerError('A-RELEASE-RQ in the middle of a message', abortReason.unexpectedPdu);
          this.#logger.info(exchange.summary, 'association released');
          this.#send(encodeReleaseResponse());
          return this.#linger();
        case pduType.abort:
          this.#logger.info({ ...exchange.summary, inMessage: exchange.busy }, 'association aborted by the peer');
          return;
        default:
          throw new UpperLayerError(`unexpected PDU type ${pdu.type} during the association`, abortReason.unexpectedPdu);
      }
    }
  }

  async #associate(request: AssociateRequest): Promise<MessageExchange | undefined> {
    const { calledAeTitle, callingAeTitle } = request;
    this.#logger = this.#logger.child({ calledAeTitle, callingAeTitle });
    const reject = (result: 1 | 2, source: 1 | 2 | 3, reason: number, why: string) => {
      this.#logger.warn({ result, source, reason }, `association rejected: ${why}`);
      this.#deps.metrics?.dicomAssociation('rejected', why);
      this.#send(encodeAssociateReject(result, source, reason));
      // Permanent rejections are recorded for operators; transient ones (capacity) are not refusals of the peer.
      if (result === 1) recordRefused(this.#deps.database, { surface: 'dicom', kind: reason === 7 ? 'dicom-called-ae-unknown' : 'dicom-association-rejected', remoteAddress: this.#remoteAddress, reason: why, details: { called_ae_title: calledAeTitle, calling_ae_title: callingAeTitle } });
      return undefined;
    };
    // PS3.8 9.3.4 table 9-21 gives every (source, reason) pair used below.
    if ((request.protocolVersion & 0x0001) === 0) return reject(1, 2, 2, 'protocol version not supported');
    if (request.applicationContext !== applicationContextUid) return reject(1, 1, 2, 'application context not supported');
    if (!this.#deps.limits.acquire(this.#remoteAddress)) return reject(2, 3, 2, 'local limit of concurrent associations reached');
    this.#holdsSlot = true;
    let site;
    try {
      site = calledAeTitle ? await findSiteByAeTitle(this.#deps.database, calledAeTitle) : undefined;
    } catch (error) {
      if (error instanceof TransientStorageError) return reject(2, 3, 1, 'database unavailable');
      throw error;
    }
    if (!site) return reject(1, 1, 7, 'called AE title not recognised');
    const negotiation = negotiate(request.contexts, request.roleSelections);
    const context: AssociationContext = {
      site: siteContextFor(site, { kind: 'dicom', callingAeTitle, remoteAddress: this.#remoteAddress }),
      database: this.#deps.database,
      logger: this.#logger.child({ siteId: site.id }),
      layout: this.#deps.layout,
      storeLimits: this.#deps.storeLimits,
      ...(this.#deps.metrics ? { metrics: this.#deps.metrics } : {}),
      ...(this.#deps.traffic ? { traffic: this.#deps.traffic } : {}),
      callingAeTitle,
      remoteAddress: this.#remoteAddress,
    };
    this.#logger = context.logger;
    this.#send(
      encodeAssociateAccept({
        calledAeTitle,
        callingAeTitle,
        contexts: negotiation.results,
        roleSelections: negotiation.roleSelections,
        maxPduLength: this.#deps.settings.maxPduLength,
      }),
    );
    this.#logger.info(
      { accepted: negotiation.accepted.size, proposed: request.contexts.length, peerMaxPdu: request.maxPduLength, implementation: request.implementationClassUid },
      'association accepted',
    );
    this.#deps.metrics?.dicomAssociation('accepted');
    this.#deps.traffic?.count({ siteId: site.id, senderKind: 'ae-title', sender: callingAeTitle, surface: 'dicom', measure: 'association', ok: true });
    return new MessageExchange(context, negotiation.accepted, request.maxPduLength, (pdu) => this.#sendWhenWritable(pdu));
  }

  /**
   * The next whole PDU; undefined when the peer closed cleanly between PDUs. `timeoutMs` bounds
   * each read, or with `fixedDeadline` the whole PDU.
   */
  async #nextPdu(timeoutMs: number, fixedDeadline = false): Promise<Pdu | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pdu = this.#framer.next();
      if (pdu) return pdu;
      const chunk = await this.#read(fixedDeadline ? Math.max(0, deadline - Date.now()) : timeoutMs);
      if (chunk === undefined) {
        if (this.#framer.pendingBytes > 0) throw new UpperLayerError('connection closed in the middle of a PDU', abortReason.invalidPduParameterValue);
        return undefined;
      }
      this.#framer.push(chunk);
    }
  }

  #read(timeoutMs: number): Promise<Buffer | undefined> {
    let timer: NodeJS.Timeout | undefined;
    return new Promise<Buffer | undefined>((resolve, reject) => {
      timer = setTimeout(() => reject(new Timeout()), timeoutMs);
      this.#interrupt = () => reject(new Interrupted());
      this.#reader.next().then(
        (result) => resolve(result.done ? undefined : (result.value as Buffer)),
        () => resolve(undefined), // reset or destroyed: treated as a close
      );
    }).finally(() => {
      clearTimeout(timer);
      this.#interrupt = undefined;
    });
  }

  #fail(error: unknown): void {
    const summary = this.#exchange?.summary;
    if (error instanceof Timeout) {
      this.#logger.warn({ ...summary }, 'association timed out');
      // PS3.8 9.2.3: ARTIM expiry before the association closes the transport; once associated, A-ABORT.
      if (this.#exchange) this.#send(encodeAbort(abortSource.serviceProvider, abortReason.notSpecified));
    } else if (error instanceof Interrupted) {
      this.#logger.info({ ...summary }, 'association aborted: the listener is shutting down');
      this.#send(encodeAbort(abortSource.serviceUser, 0));
    } else if (error instanceof UpperLayerError || error instanceof CommandSetError) {
      this.#logger.warn({ ...summary, reason: error.message }, 'protocol error: A-ABORT');
      const reason = error instanceof UpperLayerError ? error.reason : abortReason.invalidPduParameterValue;
      this.#send(encodeAbort(abortSource.serviceProvider, reason));
    } else {
      this.#logger.error({ ...summary, err: error }, 'association failed');
      this.#send(encodeAbort(abortSource.serviceProvider, abortReason.notSpecified));
    }
  }

  /** After RJ or RP the peer closes the connection; ARTIM bounds the wait (PS3.8 9.2.3, Sta13). */
  async #linger(): Promise<void> {
    this.#socket.end();
    const deadline = Date.now() + this.#deps.settings.artimTimeoutMs;
    try {
      while ((await this.#read(Math.max(0, deadline - Date.now()))) !== undefined) {
        // Anything the peer still sends after RJ or RP is read and dropped.
      }
    } catch {
      // ARTIM expired or shutdown: the connection is closed regardless.
    }
  }

  /** Sends and waits until the socket takes more, or is gone (an operation's writes never hang). */
  #sendWhenWritable(bytes: Buffer): Promise<void> {
    return writeWhenWritable(this.#socket, bytes, () => new Error('the association is closed'));
  }

  #send(bytes: Buffer): void {
    if (!this.#socket.destroyed && this.#socket.writable) this.#socket.write(bytes);
  }
}
