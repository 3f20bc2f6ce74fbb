import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { workerNumber } from '../platform/worker.ts';

/**
 * Lines gathered before one write: under load every request's access line was its own write to
 * stdout, about a tenth of the CPU of a FHIR read (docs/performance.md, "FHIR read by id").
 */
const gatheredBytes = 4_096;
/** A line waits at most this long for others before it is written. */
const gatherMs = 100;
/** pino's level number for error: such lines are written at once (some stand in for an audit record). */
const errorLevel = 50;

/** stdout by default; a file for measuring the cost of logging (bench/access-log-cost.ts). */
export function createLogger(level: string, dest: number | string = 1): Logger {
  // Asynchronous writes: a synchronous write per log line took a fifth of the CPU under load.
  // pino flushes the buffer when the process exits.
  const destination = pino.destination({ dest, sync: false, minLength: gatheredBytes });
  const flushSoon = flushScheduler(destination);
  return pino({
    ...loggerOptions(level),
    hooks: {
      logMethod(args, method, lineLevel) {
        method.apply(this, args);
        if (lineLevel >= errorLevel) flushSoon(true);
      },
      streamWrite(line) {
        flushSoon(false);
        return line;
      },
    },
  }, destination);
}

/** Everything but the destination (bench/access-log-cost.ts compares destinations with these). */
export function loggerOptions(level: string): LoggerOptions {
  const worker = workerNumber();
  return {
    level,
    // With several workers, each line says which one wrote it.
    base: { service: 'clinical-gateway', ...(worker !== undefined ? { worker } : {}) },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.cookie', 'req.headers.authorization', 'password', 'key', '*.password', '*.key'],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: { method?: string; url?: string; ip?: string; socket?: { remoteAddress?: string } }) => ({
        method: request.method,
        path: request.url?.split('?')[0],
        remoteAddress: request.ip ?? request.socket?.remoteAddress,
      }),
    },
  };
}

/**
 * Writes the gathered lines at once (`now`, after the line just logged is buffered: streamWrite
 * runs inside method.apply) or within gatherMs of the first line waiting, so that an idle
 * service's last lines are not held back. A flush asked for while a write is under way writes
 * nothing, so it is asked again once that write has drained. The timer never keeps a process alive.
 */
function flushScheduler(destination: DestinationStream & { flush(): void; on(event: 'drain', listener: () => void): unknown }): (now: boolean) => void {
  let timer: NodeJS.Timeout | undefined;
  let again = false;
  const flush = () => {
    timer = undefined;
    again = true;
    destination.flush();
  };
  destination.on('drain', () => {
    if (!again) return;
    again = false;
    destination.flush();
  });
  return (now) => {
    if (now) flush();
    else if (!timer) timer = setTimeout(flush, gatherMs).unref();
  };
}
