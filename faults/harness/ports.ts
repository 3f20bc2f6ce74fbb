import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768-60999 by default): a port the kernel hands out for
// listen(0) can meanwhile become the source port of an outgoing connection (the service's own,
// to PostgreSQL), and the service's listen on it then fails with EADDRINUSE after a restart.
const firstPort = 20_000;
const lastPort = 32_000;

/**
 * A loopback port nobody listens on right now, outside the ephemeral range, and not one of
 * `taken`: ports handed out for listeners that have not started yet are free too when checked.
 */
export async function freeLoopbackPort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = randomInt(firstPort, lastPort);
    if (!taken.has(port) && (await canListen(port))) return port;
  }
  throw new Error(`no free loopback port between ${firstPort} and ${lastPort}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
