/**
 * Client addresses through a load balancer. Behind HAProxy every connection comes from the
 * balancer's address, yet the service authorises MLLP senders by address, caps connections per
 * address and logs and audits who called. A balancer listed in CG_TRUSTED_PROXIES may put a PROXY
 * protocol header (v1 or v2) before a connection's bytes; the service then takes the client's
 * address from it, for every use of the socket's remote address. Nobody else may: a connection
 * from any other address is handed to its protocol untouched, so a header it sends is just bytes
 * that are not HL7, DICOM or HTTP, and refused as such. From a trusted balancer the header is
 * optional (its health checks and a person on that host connect without one), and a malformed
 * one closes the connection.
 */
import { BlockList, isIP, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { scanProxyHeader, type ClientAddress } from './proxy-header.ts';

/** CG_TRUSTED_PROXIES: addresses and CIDR ranges of the load balancers. */
export class TrustedProxies {
  readonly #list = new BlockList();
  readonly size: number;

  constructor(entries: readonly string[]) {
    this.size = entries.length;
    for (const entry of entries) {
      const [address, prefix] = entry.split('/');
      const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.#list.addAddress(address!, family);
      else this.#list.addSubnet(address!, Number(prefix), family);
    }
  }

  has(address: string): boolean {
    const plain = plainAddress(address);
    const family = isIP(plain);
    return family !== 0 && this.#list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  }
}

function plainAddress(address: string): string {
  return /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)?.[1] ?? address;
}

/** How long a trusted balancer's connection may take to send its first bytes (HAProxy sends the header at once). */
const headerWaitMs = 10_000;

type ConnectionHandler = (this: Server, socket: Socket) => void;

/**
 * Puts PROXY protocol reading in front of a server's own connection handling (its 'connection'
 * listeners: an MLLP or DICOM handler, or Node's HTTP parser), for connections from `trusted`.
 * Does nothing when no proxy is trusted. Plain TCP only: a TLS server reads the socket natively,
 * past bytes read here (HTTP origins with TLS take client addresses from X-Forwarded-For).
 */
export function acceptProxyProtocol(server: Server, trusted: TrustedProxies, logger: Logger): void {
  if (trusted.size === 0) return;
  const handlers = server.listeners('connection') as ConnectionHandler[];
  server.removeAllListeners('connection');
  const handOver = (socket: Socket) => {
    for (const handler of handlers) handler.call(server, socket);
    // A handler that reads in flowing mode ('data') needs the socket resumed; one that reads
    // through 'readable' (an async iterator) does not, and resuming then would drop the bytes.
    if (socket.listenerCount('data') > 0) socket.resume();
  };
  server.on('connection', (socket: Socket) => {
    if (!trusted.has(socket.remoteAddress ?? '')) return handOver(socket);
    readHeader(socket).then(
      (client) => {
        if (socket.destroyed) return;
        if (client) presentAs(socket, client);
        handOver(socket);
      },
      (error: Error) => {
        logger.warn({ proxy: socket.remoteAddress, reason: error.message }, 'connection from a trusted proxy closed: its PROXY protocol header is invalid');
        socket.destroy();
      },
    );
  });
}

/**
 * Reads up to the end of a PROXY header, or the first bytes when there is none, and puts back what
 * follows it; resolves with the client the header names (undefined: the connection is the proxy's
 * own) and rejects when the header is malformed. The socket is left paused.
 */
function readHeader(socket: Socket): Promise<ClientAddress | undefined> {
  return new Promise((resolve, reject) => {
    let received: Buffer = Buffer.alloc(0);
    const finish = (rest: Buffer, outcome: () => void) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (rest.length > 0) socket.unshift(rest);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const scan = scanProxyHeader(received);
      if (scan.kind === 'incomplete') return;
      if (scan.kind === 'absent') return finish(received, () => resolve(undefined));
      if (scan.kind === 'invalid') return finish(Buffer.alloc(0), () => reject(new Error(scan.reason)));
      finish(received.subarray(scan.length), () => resolve(scan.client));
    };
    // Closed before saying anything (a TCP health check): nothing to hand over.
    const onClose = () => finish(Buffer.alloc(0), () => resolve(undefined));
    const timer = setTimeout(() => {
      const scan = scanProxyHeader(received);
      if (scan.kind === 'incomplete' && received.length > 0) finish(Buffer.alloc(0), () => reject(new Error('an unfinished PROXY protocol header')));
      else finish(received, () => resolve(undefined));
    }, headerWaitMs);
    socket.on('data', onData);
    socket.once('close', onClose);
    // Until a handler takes the socket over, its errors (a reset) must not be unhandled.
    socket.on('error', () => {});
  });
}

/** From here on the socket reports the client's address wherever its remote address is read. */
function presentAs(socket: Socket, client: ClientAddress): void {
  Object.defineProperty(socket, 'remoteAddress', { value: client.address, configurable: true });
  Object.defineProperty(socket, 'remotePort', { value: client.port, configurable: true });
  Object.defineProperty(socket, 'remoteFamily', { value: isIP(client.address) === 6 ? 'IPv6' : 'IPv4', configurable: true });
}
