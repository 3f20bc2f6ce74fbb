/**
 * Loaded with `node --import` into every process of a test that wants the SQL the product sends
 * (the service, the CLI): when CG_TEST_STATEMENT_LOG names a file, each statement any pg client
 * of the process sends is appended to it as one JSON line {text, values}, the values as pg puts
 * them on the wire (text, bytes as base64, or null). A test instrument only: nothing in src/
 * loads it.
 */
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';

export interface RecordedStatement {
  text: string;
  values: (string | { base64: string } | null)[];
}

const logFile = process.env.CG_TEST_STATEMENT_LOG;
if (logFile) {
  // pg's own conversion of a value to what goes on the wire (text, bytes or null).
  const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue(value: unknown): unknown };
  const send = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function recordAndSend(this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    const config = typeof first === 'string' ? { text: first, values: second } : (first as { text?: string; values?: unknown });
    const values = Array.isArray(second) ? second : Array.isArray(config?.values) ? config.values : [];
    if (typeof config?.text === 'string') {
      const statement: RecordedStatement = {
        text: config.text,
        values: values.map((value: unknown) => {
          const wire = prepareValue(value);
          return Buffer.isBuffer(wire) ? { base64: wire.toString('base64') } : (wire as string | null);
        }),
      };
      appendFileSync(logFile, `${JSON.stringify(statement)}\n`);
    }
    return send.apply(this, args);
  } as typeof pg.Client.prototype.query;
}
