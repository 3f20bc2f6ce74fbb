/**
 * Intake with and without the message body purge running (docs/data-lifecycle.md, "What the
 * purge costs intake"): HL7 v2 ADT messages through the intake (parse, apply, log, commit; no
 * HTTP) from `--senders` concurrent senders, in `--rounds` rounds of two `--seconds` phases in a
 * random order: one alone, one while the purge removes bodies of another site's old messages
 * (`--rows` of them). Prints messages per second of each phase and each round's ratio of the
 * purge phase to the phase alone (same run, same machine: the ratio, not the absolute figures,
 * is the result).
 *
 *   CG_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx node bench/retention-purge.ts [--rows 200000] [--seconds 2] [--rounds 20] [--senders 8] [--rest-factor 4]
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

const { values } = parseArgs({ options: { 'rest-factor': { type: 'string', default: '4' }, rounds: { type: 'string', default: '20' }, rows: { type: 'string', default: '200000' }, seconds: { type: 'string', default: '2' }, senders: { type: 'string', default: '8' } } });
const rounds = Number(values.rounds);
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

// Each round is one phase alone and one with the purge, in a random order, and its ratio compares
// the two: drift (the intake's table growing, the machine's load, the disk's flush latency moving
// in waves of a few seconds) falls on both sides, and a random order keeps a periodic wave from
// lining up with one condition.
const alonePhases: number[] = [];
const purgePhases: number[] = [];
let bodiesPurged = 0;
let purgeRanDry = false;
async function withPurge(): Promise<number> {
  let phaseOver = false;
  const purge = purgeMessageBodies(database, { siteId: purgedSite.siteId, restFactor: Number(values['rest-factor']), stopped: () => phaseOver });
  const rate = await intakeFor(seconds * 1000);
  phaseOver = true;
  const [purged] = await purge;
  bodiesPurged += purged?.purged ?? 0;
  if ((purged?.purged ?? 0) === 0) purgeRanDry = true;
  return rate;
}
for (let round = 0; round < rounds; round++) {
  if (Math.random() < 0.5) {
    alonePhases.push(await intakeFor(seconds * 1000));
    purgePhases.push(await withPurge());
  } else {
    purgePhases.push(await withPurge());
    alonePhases.push(await intakeFor(seconds * 1000));
  }
}
await database.close();

const ratios = purgePhases.map((during, round) => during / alonePhases[round]!);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  JSON.stringify(
    {
      senders,
      seconds_per_phase: seconds,
      rounds,
      rest_factor: Number(values['rest-factor']),
      old_rows: rows,
      messages_per_second: { alone: alonePhases.map(Math.round), with_purge: purgePhases.map(Math.round) },
      ratio_with_purge_to_alone: {
        per_round: ratios.map((ratio) => Number(ratio.toFixed(2))),
        median: Number(median(ratios).toFixed(2)),
        rounds_below_1: ratios.filter((ratio) => ratio < 1).length,
        total_with_purge_to_total_alone: Number((purgePhases.reduce((a, b) => a + b, 0) / alonePhases.reduce((a, b) => a + b, 0)).toFixed(2)),
      },
      purge: { bodies: bodiesPurged, note: purgeRanDry ? 'the purge ran out of bodies in some phase: raise --rows' : 'the purge had bodies left in every phase' },
      load_average: loadavg().map((value) => Number(value.toFixed(2))),
    },
    null,
    2,
  ),
);
