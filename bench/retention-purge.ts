/**
 * Intake with and without the message body purge running (docs/data-lifecycle.md, "What the
 * purge costs intake"): HL7 v2 ADT messages through the intake (parse, apply, log, commit; no
 * HTTP) from `--senders` concurrent senders for `--seconds`, first alone, then while the purge
 * removes the bodies of `--rows` old messages of another site, then alone again. Prints
 * messages per second of each phase and the ratio of the purge phase to the mean of the two
 * alone (same run, same machine: the ratio, not the absolute figures, is the result).
 *
 *   CG_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx node bench/retention-purge.ts [--rows 200000] [--seconds 20] [--senders 8] [--rest-factor 4]
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { purgeMessageBodies } from '../src/domain/retention/message-body-purge.ts';
import type { SiteContext } from '../src/domain/site-context.ts';
import { ingestHl7v2 } from '../src/hl7v2/intake/intake.ts';
import { Database } from '../src/storage/database.ts';
import { migrate } from '../src/storage/migrations.ts';
import { ensureDatabase } from './lib/external-database.ts';

const { values } = parseArgs({ options: { 'rest-factor': { type: 'string', default: '4' }, rows: { type: 'string', default: '200000' }, seconds: { type: 'string', default: '20' }, senders: { type: 'string', default: '8' } } });
const rows = Number(values.rows);
const seconds = Number(values.seconds);
const senders = Number(values.senders);
const serverUrl = process.env.CG_DATABASE_URL?.trim();
if (!serverUrl) throw new Error('set CG_DATABASE_URL to a PostgreSQL server: the measurement makes its own database on it');

const database = new Database({ connectionString: await ensureDatabase(serverUrl, 'cg_bench_retention', { fresh: true }), maxConnections: senders + 4 });
await migrate(database);

async function newSite(name: string, retentionDays: number | null): Promise<SiteContext> {
  const id = randomUUID();
  await database.query('INSERT INTO site (id, name, ae_title, message_body_retention_days) VALUES ($1, $2, $3, $4)', [id, name, name.toUpperCase(), retentionDays]);
  return { siteId: id, siteName: name, aeTitle: name.toUpperCase(), policies: { patientPutCreates: false, mllpAllowAnyIp: false }, timeZone: null, actor: { kind: 'operator' } };
}
const intakeSite = await newSite('intake', null);
const purgedSite = await newSite('purged', 30);
// Old messages of the other site, 2 KB bodies, as a year of a busy feed would leave them.
await database.query(
  `INSERT INTO inbound_message (site_id, id, protocol, transport, sending_application, sending_facility, control_id, message_type, outcome, ack_code, ack_text, raw, received_at)
   SELECT $1, gen_random_uuid(), 'hl7v2', 'mllp', 'LAB', 'HOSP', 'OLD-' || n, 'ADT^A01', 'processed', 'AA', 'MSH|ack', convert_to(repeat('x', 2048), 'UTF8'), now() - interval '400 days'
     FROM generate_series(1, $2) AS n`,
  [purgedSite.siteId, rows],
);
await database.query('ANALYZE inbound_message');

let sequence = 0;
const message = () => {
  const n = ++sequence;
  return Buffer.from(
    [`MSH|^~\\&|LAB|HOSP|GW|SITE|20260101120000||ADT^A04^ADT_A01|B${n}-${randomUUID().slice(0, 8)}|P|2.5.1`, `PID|1||MRN${n % 5000}^^^HOSP^MR||Doe^Jane${n % 5000}||19800101|F`].join('\r'),
  );
};

async function intakeFor(ms: number): Promise<number> {
  const until = performance.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (performance.now() < until) {
        const outcome = await ingestHl7v2(database, { raw: message(), site: intakeSite, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'mllp' } });
        if (outcome.ackCode !== 'AA') throw new Error(`intake answered ${outcome.ackCode}: ${outcome.ack}`);
        done++;
      }
    }),
  );
  return done / (ms / 1000);
}

await intakeFor(3000); // warm-up
const before = await intakeFor(seconds * 1000);
let purgeEnded = false;
const purgeStarted = performance.now();
const purge = purgeMessageBodies(database, { siteId: purgedSite.siteId, restFactor: Number(values['rest-factor']) }).finally(() => (purgeEnded = true));
const during = await intakeFor(seconds * 1000);
const purgedWhileMeasured = purgeEnded ? 'the purge ended inside the phase: raise --rows' : 'the purge ran through the whole phase';
const [purged] = await purge;
const purgeSeconds = (performance.now() - purgeStarted) / 1000;
const after = await intakeFor(seconds * 1000);
await database.close();

const alone = (before + after) / 2;
console.log(
  JSON.stringify(
    {
      senders,
      seconds,
      rest_factor: Number(values['rest-factor']),
      old_rows: rows,
      messages_per_second: { alone_before: Math.round(before), with_purge: Math.round(during), alone_after: Math.round(after) },
      ratio_with_purge_to_alone: Number((during / alone).toFixed(2)),
      purge: { bodies: purged?.purged ?? 0, seconds: Number(purgeSeconds.toFixed(1)), note: purgedWhileMeasured },
      load_average: loadavg().map((value) => Number(value.toFixed(2))),
    },
    null,
    2,
  ),
);
