import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import { FrameReader, frame } from '../load/mllp-framing.ts';

/**
 * The MLLP baselines. Without a database: a server that only frames and acknowledges (issue 8).
 * It reads the message control id (MSH-10) so that its ACK is a valid one (HL7 v2.5.1 section
 * 2.9.2, original mode), but parses nothing else and stores nothing: the floor of Node's sockets.
 *
 * With BENCH_DATABASE_URL: baseline (b) over MLLP, the floor of any intake that acknowledges
 * after its commit: each message is one single-row INSERT of its bytes, committed on its own (the
 * same server and commit settings as the service), then acknowledged. With BENCH_BASELINE_WORKERS
 * above 1 it runs that many cluster workers on one socket, each with the service's pool share.
 */
const port = Number(process.env.BENCH_BASELINE_PORT);
const databaseUrl = process.env.BENCH_DATABASE_URL;
const workers = Math.max(1, Number(process.env.BENCH_BASELINE_WORKERS ?? 1));

function controlId(message: Buffer): string {
  const segmentEnd = message.indexOf(0x0d);
  const header = message.subarray(0, segmentEnd < 0 ? message.length : segmentEnd).toString('latin1');
  return header.split('|')[9] ?? '';
}

function ack(message: Buffer): Buffer {
  const now = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const id = controlId(message);
  return frame(`MSH|^~\\&|BASELINE|BENCH|||${now}||ACK|A${id}|P|2.5.1\rMSA|AA|${id}\r`);
}

function serve(): void {
  // The service's pool share per worker (src/server/supervisor.ts, workerPoolSize), not imported.
  const pool = databaseUrl
    ? new pg.Pool({ connectionString: databaseUrl, max: workers > 1 ? Math.max(4, Math.ceil(20 / workers)) : 20, application_name: 'clinical-gateway-bench-baseline' })
    : undefined;
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    const reader = new FrameReader();
    // One message at a time per connection, answered in order, as the service does.
    let chain = Promise.resolve();
    socket.on('data', (chunk) =>
      reader.push(chunk, (message) => {
        if (!pool) {
          socket.write(ack(message));
          return;
        }
        chain = chain.then(async () => {
          await pool.query({ name: 'baseline-message', text: 'INSERT INTO bench.baseline_message (id, raw) VALUES ($1, $2)', values: [randomUUID(), Buffer.from(message)] });
          socket.write(ack(message));
        }).catch(() => {
          socket.destroy();
        });
      }),
    );
    socket.on('error', () => socket.destroy());
  });
  server.listen(port, '127.0.0.1', () => {
    if (cluster.isPrimary) process.stdout.write('listening\n');
  });
  process.on('SIGTERM', () => server.close(() => void (pool?.end() ?? Promise.resolve()).then(() => process.exit(0))));
}

if (workers > 1 && cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < workers; i++) {
    cluster.fork().on('listening', () => {
      if (++listening === workers) process.stdout.write('listening\n');
    });
  }
  cluster.on('exit', () => process.exit(1));
  process.on('SIGTERM', () => {
    cluster.removeAllListeners('exit');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  serve();
}
