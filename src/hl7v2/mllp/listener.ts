/**
 * The MLLP listener (HL7 v2.5.1 Appendix C, MLLP release 1 framing): one TCP server, many
 * messages per connection answered in order, each message authorized by its integration client
 * and passed to the same intake as HTTP. TCP_NODELAY (an ACK is one small write that must not
 * wait for Nagle), keepalive, an idle timeout, bounded frames, and a shutdown that finishes the
 * message in flight before closing.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { loadStructureDefinitions } from '../../domain/records/validation.ts';
import { siteContextFor } from '../../domain/sites/sites.ts';
import { refusalOf } from '../../platform/disk-space/disk-space-guard.ts';
import type { Services } from '../../platform/services.ts';
import { isTransientDatabaseError } from '../../storage/errors.ts';
import { buildAck } from '../ack/build-ack.ts';
import { splitBatch } from '../er7/batch.ts';
import { encodeText, supportedCharset, type SupportedCharset } from '../er7/charset.ts';
import { readHeader } from '../er7/header.ts';
import { parseEr7 } from '../er7/parse.ts';
import { ingestBatchMessages } from '../intake/batch-intake.ts';
import { defaultMaxMessageBytes, ingestHl7v2 } from '../intake/intake.ts';
import { errorCodes, error } from '../problems.ts';
import { addressIsRegistered, authorizeSender } from './authorize.ts';
import { recordRefusedAddress, recordRefusedSender } from './refused-sender.ts';
import { frame, FrameScanner, type ScanEvent } from './frame-scanner.ts';
import { unmapIpv4 } from '../../domain/clients/ip-allow-list.ts';
import { FairConnectionSlots } from '../../platform/fair-connection-slots.ts';
import { acceptProxyProtocol, TrustedProxies } from '../../platform/proxy/proxied-connections.ts';

export interface MllpListenerOptions {
  host: string;
  port: number;
  maxFrameBytes?: number;
  /** Close a connection that sends nothing for this long. */
  idleTimeoutMs?: number;
  /** Overrides of CG_MLLP_MAX_CONNECTIONS, CG_MLLP_MAX_CONNECTIONS_PER_ADDRESS, CG_MLLP_UNFINISHED_BYTES. */
  maxConnections?: number;
  maxConnectionsPerAddress?: number;
  unfinishedFrameBytes?: number;
}

/**
 * Bytes of frames received and not yet handled, across every connection: unfinished frames and
 * complete ones waiting their turn. One sender's connections each holding most of a large
 * message must not take the process's memory (issue 26 point 5).
 */
class FrameMemory {
  readonly limit: number;
  used = 0;
  /** Connections holding frame bytes, with how many. */
  readonly holders = new Map<Connection, number>();
  constructor(limit: number) {
    this.limit = limit;
  }

  /**
   * Makes room for `growth` more bytes of `grower` by closing the connections holding the most,
   * largest first (like an OOM killer, it picks whoever holds the most): one sender's many large
   * unfinished frames cannot keep another's small message out. False when `grower` itself holds
   * the most: it is the one to close.
   */
  makeRoom(grower: Connection, growth: number): boolean {
    while (this.used + growth > this.limit) {
      let largest: Connection | undefined;
      for (const [holder, bytes] of this.holders) if (holder !== grower && bytes > (largest ? this.holders.get(largest)! : 0)) largest = holder;
      if (!largest || this.holders.get(largest)! <= (this.holders.get(grower) ?? 0) + growth) return false;
      largest.evict('unfinished frames over CG_MLLP_UNFINISHED_BYTES, and this connection holds the most');
    }
    return true;
  }
}

export interface RunningMllpListener {
  port: number;
  close(): Promise<void>;
}

const maxQueuedFrames = 16;
const maxUnreadAckBytes = 1024 * 1024;
const firstPassCharset = 'UNICODE UTF-8';

export async function startMllpListener(services: Services, options: MllpListenerOptions): Promise<RunningMllpListener> {
  const logger = services.logger.child({ surface: 'mllp' });
  // The record store validates against the FHIR definitions, loaded on first use (seconds of CPU
  // on the event loop): load them before accepting, not while the first message waits.
  loadStructureDefinitions();
  const connections = new Set<Connection>();
  const configured = services.config.limits.mllp;
  // Counted from accept, before the address is even checked: unregistered peers hold a socket too.
  // Only an idle connection makes room: one with a message on its way or in hand keeps its slot.
  const slots = new FairConnectionSlots<Connection>(
    options.maxConnections ?? configured.maxConnections,
    options.maxConnectionsPerAddress ?? configured.maxConnectionsPerAddress,
    (connection) => connection.idle,
  );
  const memory = new FrameMemory(options.unfinishedFrameBytes ?? configured.unfinishedFrameBytes);
  let closing = false;
  const server: Server = createServer({ noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000 }, (socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    // MLLP has no way to refuse a connection in words before a frame: it is closed, and the
    // sender, holding its message unacknowledged, sends it again later.
    const remote = unmapIpv4(socket.remoteAddress ?? '');
    const connection = new Connection(socket, services, logger, options, memory);
    const slot = slots.admit(remote, connection);
    if (!slot.admitted) {
      logger.warn({ remote, perAddress: slots.maxPerAddress, total: slots.maxTotal, reason: slot.reason }, 'MLLP connection refused: connection limit reached');
      socket.destroy();
      return;
    }
    if (slot.evicted) slot.evicted.evict('idle, and its slot was needed by a new connection');
    connections.add(connection);
    socket.once('close', () => {
      connections.delete(connection);
      connection.releaseMemory();
      slots.release(remote, connection);
    });
    connection.start();
  });
  // Behind a load balancer the sender's own address is what its integration client admits.
  acceptProxyProtocol(server, new TrustedProxies(services.config.trustedProxies), logger);
  server.on('error', (err) => logger.error({ err }, 'MLLP listener error'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  logger.info({ host: options.host, port }, 'MLLP listener started');
  return {
    port,
    async close() {
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...connections].map((connection) => connection.finish()));
      await stopped;
      logger.info('MLLP listener stopped');
    },
  };
}

class Connection {
  readonly #socket: Socket;
  readonly #services: Services;
  readonly #logger: Logger;
  readonly #scanner: FrameScanner;
  readonly #remote: string;
  readonly #maxFrameBytes: number;
  #queue: ScanEvent[] = [];
  #working: Promise<void> = Promise.resolve();
  #busy = false;
  #ending = false;
  #authorizedAddress: Promise<boolean> | undefined;
  readonly #memory: FrameMemory;
  /** This connection's share of `#memory`: its unfinished frame and its queued frames. */
  #held = 0;

  constructor(socket: Socket, services: Services, logger: Logger, options: MllpListenerOptions, memory: FrameMemory) {
    this.#socket = socket;
    this.#memory = memory;
    this.#services = services;
    this.#remote = unmapIpv4(socket.remoteAddress ?? '');
    this.#logger = logger.child({ remote: this.#remote, remotePort: socket.remotePort });
    this.#maxFrameBytes = options.maxFrameBytes ?? defaultMaxMessageBytes;
    this.#scanner = new FrameScanner({ maxFrameBytes: this.#maxFrameBytes });
    socket.setTimeout(options.idleTimeoutMs ?? 5 * 60_000);
  }

  start(): void {
    const socket = this.#socket;
    socket.on('error', (err) => this.#logger.info({ err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, 'MLLP connection error'));
    socket.on('timeout', () => {
      this.#logger.info('MLLP connection idle; closing');
      socket.destroy();
    });
    // Unknown peers are refused at once; a database outage defers the decision to the first
    // message, which is then answered AR (retry) rather than dropping a legitimate sender.
    this.#authorizedAddress = addressIsRegistered(this.#services.database, this.#remote).catch((err) => {
      if (isTransientDatabaseError(err)) return true;
      throw err;
    });
    this.#authorizedAddress.then(
      (known) => {
        if (!known) {
          this.#logger.warn('MLLP connection from an address no integration client admits; closed');
          recordRefusedAddress(this.#services.database, this.#remote);
          socket.destroy();
        }
      },
      (err) => {
        this.#logger.error({ err }, 'MLLP authorization failed; closed');
        socket.destroy();
      },
    );
    socket.on('data', (chunk: Buffer) => {
      for (const event of this.#scanner.push(chunk)) this.#queue.push(event);
      if (!this.#account()) {
        this.#logger.warn({ held: this.#held, budget: this.#memory.limit }, 'MLLP frames in memory over CG_MLLP_UNFINISHED_BYTES; connection closed, nothing was stored');
        this.#queue = [];
        this.releaseMemory();
        socket.destroy();
        return;
      }
      if (this.#queue.length >= maxQueuedFrames) socket.pause();
      this.#drain();
    });
    socket.on('end', () => {
      if (this.#scanner.bufferedBytes > 0) this.#logger.warn({ bytes: this.#scanner.bufferedBytes }, 'MLLP connection ended inside a frame; partial frame discarded');
      this.#ending = true;
      void this.#working.then(() => socket.end());
    });
  }

  /**
   * Brings this connection's share of the frame memory up to date; false when the growth does
   * not fit the budget (the connection that grows over it is the one closed).
   */
  #account(): boolean {
    if (this.#socket.destroyed) {
      this.releaseMemory();
      return true;
    }
    let held = this.#scanner.heldBytes;
    for (const event of this.#queue) held += event.kind === 'frame' ? event.payload.length : event.kind === 'oversized' ? event.head.length : 0;
    const growth = held - this.#held;
    if (growth > 0 && !this.#memory.makeRoom(this, growth)) return false;
    this.#memory.used += growth;
    this.#held = held;
    if (held > 0) this.#memory.holders.set(this, held);
    else this.#memory.holders.delete(this);
    return true;
  }

  /** Nothing received and not yet answered: no unfinished frame, no queued or running message. */
  get idle(): boolean {
    return this.#held === 0 && this.#scanner.bufferedBytes === 0 && this.#queue.length === 0 && !this.#busy;
  }

  /** Gives this connection's share of the frame memory back (closed). */
  releaseMemory(): void {
    this.#memory.used -= this.#held;
    this.#held = 0;
    this.#memory.holders.delete(this);
  }

  /** Closed to make room for others; its unacknowledged message is sent again by its sender. */
  evict(why: string): void {
    this.#logger.warn({ held: this.#held }, `MLLP connection closed: ${why}; nothing of its unfinished message was stored`);
    this.#queue = [];
    this.releaseMemory();
    this.#socket.destroy();
  }

  /** Stop reading, finish what is queued, then close. */
  async finish(): Promise<void> {
    this.#ending = true;
    this.#socket.pause();
    await this.#working;
    await new Promise<void>((resolve) => {
      if (this.#socket.destroyed) return resolve();
      this.#socket.once('close', () => resolve());
      this.#socket.end();
      setTimeout(() => this.#socket.destroy(), 2_000).unref();
    });
  }

  #drain(): void {
    if (this.#busy) return;
    this.#busy = true;
    this.#working = (async () => {
      try {
        while (this.#queue.length > 0 && !this.#socket.destroyed) {
          const event = this.#queue.shift()!;
          await this.#handle(event);
          this.#account();
          if (this.#queue.length < maxQueuedFrames / 2 && !this.#ending) this.#socket.resume();
        }
      } catch (err) {
        this.#logger.error({ err }, 'MLLP connection failed; closed');
        this.#socket.destroy();
      } finally {
        this.#busy = false;
      }
    })();
  }

  async #handle(event: ScanEvent): Promise<void> {
    if (event.kind === 'junk') {
      this.#logger.warn({ bytes: event.size }, 'MLLP bytes outside a frame discarded');
      return;
    }
    if (!(await this.#authorizedAddress)) return;
    if (event.kind === 'oversized') {
      const head = parseEr7(event.head, { defaultCharset: 'UNICODE UTF-8', maxBytes: Number.MAX_SAFE_INTEGER }).message;
      this.#logger.warn({ bytes: event.size, controlId: head ? readHeader(head).controlId : undefined }, 'MLLP frame over the limit');
      const ack = buildAck({
        ...(head ? { message: head } : {}),
        code: 'AE',
        text: 'message too large',
        problems: [error(errorCodes.dataTypeError, `the message is ${event.size} bytes; the limit is ${this.#maxFrameBytes} bytes; nothing was stored`)],
      });
      this.#write(ack, head?.charset ?? 'UNICODE UTF-8');
      return;
    }
    const batch = splitBatch(event.payload);
    if (!batch) {
      const answer = await this.#answer(event.payload);
      this.#write(answer.ack, answer.charset);
      return;
    }
    // A batch in one frame: each message authorized and taken as if framed alone, one frame of
    // ACKs in answer, in the first message's charset.
    const answered = await ingestBatchMessages(batch, (raw, halted) => this.#answer(Buffer.from(raw), halted));
    this.#write(answered.ack, answered.answers.flat()[0]?.charset ?? 'UNICODE UTF-8');
  }

  /** One message's ACK, in the charset it is to be written in; `halted`: not to be applied. */
  async #answer(payload: Buffer, halted?: Error): Promise<{ ack: string; charset: SupportedCharset; retry: boolean }> {
    // First pass: the header, to find the sender's client (whose default charset then applies).
    const first = parseEr7(payload, { defaultCharset: firstPassCharset, maxBytes: this.#maxFrameBytes });
    if (!first.message) {
      this.#logger.warn({ problems: first.problems.map((p) => p.message) }, 'MLLP frame is not an HL7 v2 message');
      return { ack: buildAck({ code: 'AE', text: 'not an HL7 v2 message', problems: first.problems }), charset: 'UNICODE UTF-8', retry: false };
    }
    const header = readHeader(first.message);
    const refuse = (text: string, problem = error(errorCodes.unknownKeyIdentifier, text, { segment: 'MSH', sequence: 1, field: 3 })) => {
      this.#services.metrics?.hl7v2Message('mllp', `${header.messageCode}^${header.triggerEvent}`, problem.code === errorCodes.applicationInternalError ? 'AR' : 'refused');
      const ack = buildAck({ message: first.message, code: 'AR', text: text.slice(0, 80), problems: [problem] });
      return { ack, charset: first.message!.charset, retry: problem.code === errorCodes.applicationInternalError };
    };
    let authorization;
    try {
      authorization = await authorizeSender(this.#services.database, this.#remote, header.sendingApplication, header.sendingFacility);
    } catch (err) {
      if (!isTransientDatabaseError(err)) throw err;
      this.#logger.warn({ controlId: header.controlId }, 'MLLP message answered AR: database unavailable');
      return refuse('temporarily unable to store the message; send it again later', error(errorCodes.applicationInternalError, 'the database is temporarily unavailable; nothing was stored; retry later'));
    }
    if (authorization.kind === 'refused') {
      this.#logger.warn({ controlId: header.controlId, sendingApplication: header.sendingApplication, sendingFacility: header.sendingFacility }, authorization.reason);
      const answer = refuse(authorization.reason);
      recordRefusedSender(this.#services.database, authorization, this.#remote, { raw: payload, message: first.message, header, ackText: answer.ack });
      return answer;
    }
    const { client, site } = authorization;
    const context = siteContextFor(site, { kind: 'integration-client', clientId: client.id, remoteAddress: this.#remote });
    const defaultCharset = supportedCharset(client.defaultCharset) ?? 'UNICODE UTF-8';
    const outcome = await ingestHl7v2(
      this.#services.database,
      {
        raw: payload,
        site: context,
        defaultCharset,
        clientTimeZone: client.timeZone,
        origin: { transport: 'mllp', remoteAddress: this.#remote, credentialId: client.id },
        maxBytes: this.#maxFrameBytes,
        ...(halted ? { refusal: halted } : refusalOf(this.#services)),
        // The first pass read the whole message already; with the same default charset it stands.
        ...(defaultCharset === firstPassCharset ? { parsed: first } : {}),
      },
      this.#logger,
    );
    // Debug, not info: every message and its answer are in the durable message log already, and
    // a line per message is a measurable share of the CPU at high rates.
    this.#logger.debug({ site: site.id, messageType: outcome.messageType, controlId: outcome.controlId, ack: outcome.ackCode, duplicate: outcome.duplicate }, 'HL7 v2 message acknowledged');
    this.#services.metrics?.hl7v2Message('mllp', outcome.messageType, outcome.ackCode);
    return { ack: outcome.ack, charset: outcome.ackCharset, retry: outcome.retry };
  }

  #write(ack: string, charset: Parameters<typeof encodeText>[1]): void {
    if (this.#socket.destroyed || !this.#socket.writable) return;
    // A peer that sends but never reads its ACKs would make us buffer them without bound.
    if (this.#socket.writableLength > maxUnreadAckBytes) {
      this.#logger.warn({ bytes: this.#socket.writableLength }, 'MLLP peer is not reading its acknowledgements; closed');
      this.#socket.destroy();
      return;
    }
    this.#socket.write(frame(encodeText(ack, charset)));
  }
}
