import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { createLogger, loggerOptions } from '../src/server/logger.ts';

/**
 * CPU time per access line (the one line each HTTP request logs, src/platform/http/origin.ts):
 * the service's logger against a line written as soon as it is logged (its earlier setting),
 * in alternating rounds in one process, a few lines per event-loop turn as under load.
 * `node bench/access-log-cost.ts [LINES_PER_TURN] [ROUNDS]`.
 */
const linesPerTurn = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 6);
const linesPerRound = 40_000;
const folder = mkdtempSync(join(tmpdir(), 'cg-access-log-'));

function lineAtOnceLogger(file: string): Logger {
  return pino(loggerOptions('info'), pino.destination({ dest: file, sync: false }));
}

async function cpuPerLine(logger: Logger): Promise<number> {
  const before = process.cpuUsage();
  for (let written = 0; written < linesPerRound; written += linesPerTurn) {
    for (let i = 0; i < linesPerTurn; i += 1) {
      logger.info(
        { reqId: `req-${written + i}`, method: 'GET', path: '/fhir/Patient/0b6f3c1e-8f4a-4a57-9a0e-3c1f6a2d9e11', statusCode: 200, ms: 3, siteId: '5d0e1c9a-2b7f-4e3a-8c61-9f0a7b3d2e44', actor: 'api-key 1f2e3d4c' },
        'request completed',
      );
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / linesPerRound;
}

const results: { atOnce: number[]; gathered: number[] } = { atOnce: [], gathered: [] };
for (let round = 0; round < rounds; round += 1) {
  results.atOnce.push(await cpuPerLine(lineAtOnceLogger(join(folder, `at-once-${round}.log`))));
  results.gathered.push(await cpuPerLine(createLogger('info', join(folder, `gathered-${round}.log`))));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
process.stdout.write(
  `${linesPerTurn} lines a turn, ${rounds} rounds of ${linesPerRound}: CPU per line, median µs: written at once ${median(results.atOnce).toFixed(1)}, gathered ${median(results.gathered).toFixed(1)}\n`,
);
rmSync(folder, { recursive: true, force: true });
