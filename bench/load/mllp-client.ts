import { connect, type Socket } from 'node:net';
import { percentile } from '../lib/stats.ts';
import { FrameReader, frame } from './mllp-framing.ts';

/**
 * A small MLLP sender (no well-kept npm load tool speaks MLLP): `connections` sockets, each
 * sending one message and waiting for its acknowledgement before the next, as an interface
 * engine does in original mode. Bounded by a message count and by time.
 */
export interface MllpLoad {
  host: string;
  port: number;
  connections: number;
  messages: number;
  seconds: number;
  message: (n: number) => string;
}

export interface MllpLoadResult {
  messagesPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
  sent: number;
  /** MSA-1 codes of the acknowledgements (AA, AE, AR, CA, …). */
  ackCodes: Record<string, number>;
  failed: number;
}

export async function runMllpLoad(load: MllpLoad): Promise<MllpLoadResult> {
  const latencies: number[] = [];
  const ackCodes: Record<string, number> = {};
  let next = 0;
  let failed = 0;
  const deadline = performance.now() + load.seconds * 1000;
  const started = performance.now();

  const worker = async () => {
    const socket = await open(load.host, load.port);
    const reader = new FrameReader();
    let waiting: ((ack: Buffer) => void) | undefined;
    socket.on('data', (chunk) => reader.push(chunk, (ack) => waiting?.(ack)));
    const closed = new Promise<never>((_, reject) => socket.once('close', () => reject(new Error('connection closed'))));
    closed.catch(() => {});
    try {
      while (next < load.messages && performance.now() < deadline) {
        const n = next++;
        const sentAt = performance.now();
        const acked = new Promise<Buffer>((resolve) => (waiting = resolve));
        socket.write(frame(load.message(n)));
        const ack = await Promise.race([acked, closed, timeout(ackTimeoutMs)]);
        latencies.push(performance.now() - sentAt);
        const code = /\rMSA\|([^|\r]*)/.exec(ack.toString('latin1'))?.[1] ?? 'none';
        ackCodes[code] = (ackCodes[code] ?? 0) + 1;
      }
    } catch {
      failed++;
    } finally {
      socket.destroy();
    }
  };
  await Promise.all(Array.from({ length: load.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  return {
    messagesPerSecond: (ackCodes.AA ?? 0) / seconds,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    sent: latencies.length,
    ackCodes,
    failed,
  };
}

const ackTimeoutMs = 30_000;

function timeout(ms: number): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error('no acknowledgement')), ms).unref());
}

function open(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, noDelay: true });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}
