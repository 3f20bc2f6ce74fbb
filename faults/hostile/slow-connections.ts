import { connect, type Socket } from 'node:net';
import { associateRequest } from '../clients/dicom-pdu.ts';
import type { GatewayProcess, SurfaceName } from '../harness/gateway-process.ts';

/**
 * Connections that never finish: slowloris on every HTTP origin (headers or a body dribbled one
 * byte at a time) and half-open MLLP and DICOM connections (nothing sent, or a frame / PDU
 * begun and never ended). Each records when the service closed it.
 */
export interface SlowConnection {
  label: string;
  openedAt: number;
  closedAt?: number;
}

const httpSurfaces: SurfaceName[] = ['fhir', 'hl7', 'mpps', 'connectivity', 'admin'];

function open(port: number, label: string, onConnect: (socket: Socket) => void): { connection: SlowConnection; socket: Socket } {
  const connection: SlowConnection = { label, openedAt: Date.now() };
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  socket.on('data', () => {});
  socket.on('close', () => {
    connection.closedAt ??= Date.now();
  });
  socket.on('connect', () => onConnect(socket));
  return { connection, socket };
}

export class SlowConnections {
  readonly connections: SlowConnection[] = [];
  readonly #sockets: Socket[] = [];
  readonly #timers: NodeJS.Timeout[] = [];

  #add(port: number, label: string, onConnect: (socket: Socket) => void): void {
    const { connection, socket } = open(port, label, onConnect);
    this.connections.push(connection);
    this.#sockets.push(socket);
  }

  /** Dribbles `bytes` one byte every `everyMs`, for ever (until the server closes). */
  #dribble(socket: Socket, bytes: Buffer, everyMs: number): void {
    let at = 0;
    const timer = setInterval(() => {
      if (socket.destroyed) return clearInterval(timer);
      socket.write(bytes.subarray(at % bytes.length, (at % bytes.length) + 1));
      at++;
    }, everyMs);
    this.#timers.push(timer);
  }

  slowloris(gateway: GatewayProcess, perOrigin: number): void {
    for (const surface of httpSurfaces) {
      if (!gateway.listening.has(surface)) continue;
      for (let i = 0; i < perOrigin; i++) {
        // Slow headers: the request line, then one header byte every 2 s, never the blank line.
        this.#add(gateway.ports[surface], `${surface} slow headers`, (socket) => {
          socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
          this.#dribble(socket, Buffer.from('X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), 2_000);
        });
        // Slow body: complete headers announcing 1 MB, then one byte every 2 s.
        this.#add(gateway.ports[surface], `${surface} slow body`, (socket) => {
          socket.write('POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n');
          this.#dribble(socket, Buffer.from('{"a":"'), 2_000);
        });
      }
    }
  }

  halfOpen(gateway: GatewayProcess, calledAe: string): void {
    if (gateway.listening.has('mllp')) {
      this.#add(gateway.ports.mllp, 'MLLP connected, nothing sent', () => {});
      this.#add(gateway.ports.mllp, 'MLLP frame begun, never ended', (socket) => socket.write('\x0bMSH|^~\\&|HALF|OPEN|CG|CG|20260101||ADT^A04|HALF1|P|2.5.1\r'));
    }
    if (gateway.listening.has('dicom')) {
      this.#add(gateway.ports.dicom, 'DICOM connected, nothing sent (ARTIM)', () => {});
      this.#add(gateway.ports.dicom, 'DICOM PDU header begun, never ended', (socket) => socket.write(Buffer.from([0x01, 0x00, 0x00, 0x00])));
      this.#add(gateway.ports.dicom, 'DICOM association accepted, then silence', (socket) =>
        socket.write(associateRequest({ calledAe, callingAe: 'HALFOPEN', abstractSyntax: '1.2.840.10008.1.1', transferSyntaxes: ['1.2.840.10008.1.2'] })),
      );
    }
  }

  closeAll(): void {
    for (const timer of this.#timers) clearInterval(timer);
    for (const socket of this.#sockets) socket.destroy();
  }

  /** Per label: how many were closed by the service and the longest time it took. */
  summary(now = Date.now()): { label: string; total: number; closed: number; slowestMs: number }[] {
    const labels = [...new Set(this.connections.map((c) => c.label))];
    return labels.map((label) => {
      const mine = this.connections.filter((c) => c.label === label);
      return {
        label,
        total: mine.length,
        closed: mine.filter((c) => c.closedAt !== undefined).length,
        slowestMs: Math.max(...mine.map((c) => (c.closedAt ?? now) - c.openedAt)),
      };
    });
  }
}
