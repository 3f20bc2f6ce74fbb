import { join } from 'node:path';
import { http } from '../clients/http.ts';
import { createEnvironment, requireSurfaces } from '../harness/environment.ts';
import { provisionSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';
import { sleep } from '../harness/timing.ts';
import { fuzzEveryParser } from '../hostile/fuzz-in-process.ts';
import { checkLimits } from '../hostile/limits.ts';
import { exhaustResources, resourceLimitEnv } from '../hostile/resource-exhaustion.ts';
import { SlowConnections } from '../hostile/slow-connections.ts';
import { fuzzOverSockets } from '../hostile/socket-fuzz.ts';

/** How long the service may take to drop each kind of stalled connection before the check fails. */
const bounds: [RegExp, number][] = [
  [/slow headers|slow body/, 75_000], // headersTimeout 10 s / requestTimeout 30 s, checked every 30 s by Node
  [/DICOM connected|DICOM PDU header/, 60_000], // ARTIM (PS3.8 9.1.5)
  [/DICOM association accepted/, 200_000], // association idle timeout
  [/MLLP/, 330_000], // MLLP idle timeout (5 min)
];

/**
 * Issue 9 point 5. Hostile input on every parser and every socket: a mutation fuzz campaign
 * in-process for volume and over the real sockets for the whole path, stalled connections
 * (slowloris, half-open MLLP and DICOM) held open while the fuzz runs (so they are shown not to
 * block anyone), and the size, depth and entity limits. Issue 26 points 2, 3, 5 and 13: one
 * site's credentials trying to exhaust the database, the listeners, memory and disk for the
 * others, while another site keeps sending.
 */
export const hostileInput: Scenario = {
  id: 'hostile',
  title: '5. Hostile input (fuzzing, slowloris, half-open connections, limits)',
  budgetMs: 10 * 60_000,
  async run(context, report) {
    const env = await createEnvironment(context, 'hostile', { env: resourceLimitEnv });
    const slow = new SlowConnections();
    try {
      const site = await provisionSite(env.gateway, 'hostile');
      const attacker = await provisionSite(env.gateway, 'attacker');
      await env.gateway.start();
      requireSurfaces(report, env.gateway, ['fhir', 'hl7', 'mpps', 'connectivity', 'mllp', 'dicom']);
      const seed = Number(process.env.FAULTS_SEED ?? Date.now() % 1_000_000);
      const perParser = Math.round(100_000 * context.scale);
      slow.slowloris(env.gateway, 5);
      slow.halfOpen(env.gateway, site.aeTitle);
      const openedAt = Date.now();
      await sleep(1_000);

      context.log('fuzzing over the sockets while stalled connections are held open');
      await fuzzOverSockets(report, env.gateway, site, context.scale, seed);
      const healthy: string[] = [];
      for (const surface of ['fhir', 'hl7', 'mpps', 'connectivity', 'admin'] as const) {
        if (!env.gateway.listening.has(surface)) continue;
        const answer = await http({ port: env.gateway.ports[surface], path: '/healthz' }).catch(() => undefined);
        healthy.push(`${surface} ${answer?.status ?? 'no answer'}`);
      }
      check(report, 'every HTTP origin answers others while slowloris connections are open', healthy.every((h) => h.endsWith('200')), healthy.join(', '));
      await checkLimits(report, env.gateway, site);
      await exhaustResources(report, env.gateway, attacker, site, { scale: context.scale, workDir: context.workDir, log: context.log });

      context.log(`fuzzing every parser in-process (${perParser} inputs each, seed ${seed})`);
      await fuzzEveryParser(report, { perParser, seed, crashDir: join(context.workDir, 'crashes'), deadlineMs: Math.max(60_000, 240_000 * Math.min(1, context.scale * 4)), log: context.log });

      // Give every stalled connection its bound, counted from when it was opened.
      const longest = Math.max(...slow.connections.map((c) => bounds.find(([pattern]) => pattern.test(c.label))?.[1] ?? 60_000));
      while (Date.now() - openedAt < longest && slow.connections.some((c) => c.closedAt === undefined)) await sleep(1_000);
      for (const entry of slow.summary()) {
        const bound = bounds.find(([pattern]) => pattern.test(entry.label))?.[1] ?? 60_000;
        check(report, `${entry.label}: closed by the service within ${bound / 1000} s`, entry.closed === entry.total && entry.slowestMs <= bound + 2_000, `${entry.closed}/${entry.total} closed, slowest after ${(entry.slowestMs / 1000).toFixed(1)} s`);
        report.figures[`${entry.label}: time to close, s`] = (entry.slowestMs / 1000).toFixed(1);
      }
      check(report, 'the service never exited on its own', env.gateway.unexpectedExits.length === 0 && env.gateway.running, env.gateway.unexpectedExits.map((e) => (e.startsWith('exit code 0 ') ? `${e}: a graceful shutdown, i.e. a SIGTERM/SIGINT from outside this campaign` : `${e}: ${env.gateway.crashExcerpt()}`)).join('; ') || 'running');
      report.injected = `mutation fuzzing (seed ${seed}): ${perParser} inputs per parser in-process and a few thousand over the sockets; ${slow.connections.length} stalled connections (slowloris on every HTTP origin, half-open MLLP and DICOM); oversized, deep and entity-laden bodies; one site's key and sender flooding costly searches, DICOM and MLLP connections (idle, dribbling, 1 MiB unfinished frames) and an oversized C-STORE from 127.0.0.2-9 while another site sends`;
    } finally {
      slow.closeAll();
      await env.close();
    }
  },
};
