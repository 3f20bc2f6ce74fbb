import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { prepareCreate } from '../src/domain/records/write.ts';
import type { SiteContext } from '../src/domain/site-context.ts';
import { buildAck } from '../src/hl7v2/ack/build-ack.ts';
import { parseEr7 } from '../src/hl7v2/er7/parse.ts';
import { ingestHl7v2 } from '../src/hl7v2/intake/intake.ts';
import { planMessage } from '../src/hl7v2/intake/plan.ts';
import { createTestDatabase } from '../test/support/database.ts';
import { createTestSite } from '../test/support/sites.ts';
import { ticksPerSecond } from './lib/alternating.ts';
import { adtA01 } from './load/hl7-messages.ts';

/**
 * The CPU an ADT^A01 for a new patient (the MLLP scenario's message) costs, without the network
 * and the load client: first each step of the service in this process (parse, plan, the
 * Patient's validation and index values, ACK), then PostgreSQL's backends' CPU per message
 * through the whole intake when messages come 1, 4 or 8 at once (the new patients of several
 * connections share a call and a commit). Needs CG_TEST_DATABASE_URL (a scratch database is
 * made and dropped). `node bench/hl7v2-intake-cost.ts [MESSAGES]`
 */
const messages = Number(process.argv[2] ?? 1200);
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

const db = await createTestDatabase();
try {
  const site: SiteContext = await createTestSite(db.database);
  const steps = { parse: 0, plan: 0, 'validation and index values': 0, ack: 0 };
  for (const round of [0, 1]) {
    for (const name of Object.keys(steps) as (keyof typeof steps)[]) steps[name] = 0;
    for (let i = 0; i < messages; i++) {
      const raw = Buffer.from(adtA01(`S${round}`, i));
      let at = cpuMs();
      const lap = (name: keyof typeof steps) => {
        const now = cpuMs();
        steps[name] += now - at;
        at = now;
      };
      const parsed = parseEr7(raw, { defaultCharset: 'UNICODE UTF-8', maxBytes: 1024 * 1024 });
      lap('parse');
      const planned = planMessage(parsed.message!, { timeZone: 'UTC' });
      lap('plan');
      if (planned.plan?.kind !== 'demographics') throw new Error('the bench message did not plan as demographics');
      await prepareCreate(db.database, site, { ...planned.plan.patient, id: undefined }, randomUUID());
      lap('validation and index values');
      buildAck({ message: parsed.message!, code: 'AA', text: 'message accepted', problems: [] });
      lap('ack');
    }
  }
  process.stdout.write(`service steps, CPU a message: ${Object.entries(steps).map(([name, ms]) => `${name} ${((ms / messages) * 1000).toFixed(0)} µs`).join(', ')}\n`);

  const backendTicks = async () => {
    const { rows } = await db.database.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
    return rows.reduce((sum, { pid }) => {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return sum + Number(fields[11]) + Number(fields[12]);
      } catch {
        return sum;
      }
    }, 0);
  };
  let runs = 0;
  const together = async (atOnce: number, count: number) => {
    const tag = `I${process.pid}R${runs++}`;
    const before = await backendTicks();
    for (let i = 0; i < count; i += atOnce) {
      const raws = Array.from({ length: atOnce }, (_, k) => Buffer.from(adtA01(tag, i + k)));
      await Promise.all(raws.map((raw) => ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'mllp', remoteAddress: '127.0.0.1' } })));
    }
    return (((await backendTicks()) - before) / ticksPerSecond / count) * 1000;
  };
  await together(1, 200);
  await together(4, 200);
  for (let round = 1; round <= 3; round++) {
    const figures: string[] = [];
    for (const atOnce of [1, 4, 8]) figures.push(`${atOnce} at once ${(await together(atOnce, messages)).toFixed(3)} ms`);
    process.stdout.write(`round ${round}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}: PostgreSQL CPU a message, ${figures.join(', ')}\n`);
  }
} finally {
  await db.drop();
}
process.exit(0);
