import { createEnvironment, requireSurfaces } from '../harness/environment.ts';
import { provisionSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';
import { sleep, waitUntil } from '../harness/timing.ts';
import { MixedLoad } from '../load/mixed-load.ts';
import { probeEverySurface, readiness, type ProbeAnswer } from './probes.ts';

const outageMs = 20_000;

/**
 * Issue 9 point 2. The database disappears for 20 s in the middle of the load (the private
 * cluster is stopped in immediate mode, as a crash of the server would look to the service) and
 * comes back. DESIGN.md section 2: a transient failure is "retry later" on every surface (HTTP 503,
 * HL7 AR, DIMSE out of resources), never a permanent rejection; and the service must heal by
 * itself, with the same process, once the database is back.
 */
export const databaseOutage: Scenario = {
  id: 'outage',
  title: '2. Database outage (20 s)',
  budgetMs: 5 * 60_000,
  async run(context, report) {
    const env = await createEnvironment(context, 'outage');
    let load: MixedLoad | undefined;
    try {
      const site = await provisionSite(env.gateway, 'outage');
      await env.gateway.start();
      requireSurfaces(report, env.gateway, ['mllp', 'dicom', 'fhir', 'hl7', 'mpps', 'connectivity']);
      const pidBefore = env.gateway.pid;
      load = new MixedLoad(env, site, context.workDir, `O${Date.now().toString(36)}`);
      load.start({ mllpSenders: 8, dicomAssociations: 4, fhirWriters: 16 });
      await sleep(5_000);
      const readyBefore = await readiness(env.gateway);
      check(report, 'every origin is ready before the outage', Object.values(readyBefore).every((s) => s === 200), JSON.stringify(readyBefore));

      context.log('stopping PostgreSQL');
      const outageStart = Date.now();
      context.postgres.stop('immediate');
      await sleep(3_000);
      const readyDuring = await readiness(env.gateway);
      const probes: ProbeAnswer[] = [];
      // Two rounds of probes: one early in the outage, one late (pooled connections are gone by then).
      probes.push(...(await probeEverySurface(env.gateway, site, context.workDir, `a${Date.now().toString(36)}`)));
      await sleep(Math.max(0, outageStart + outageMs - 6_000 - Date.now()));
      probes.push(...(await probeEverySurface(env.gateway, site, context.workDir, `b${Date.now().toString(36)}`)));
      await sleep(Math.max(0, outageStart + outageMs - Date.now()));
      context.postgres.start();
      const outageEnd = Date.now();
      context.log(`PostgreSQL back after ${outageEnd - outageStart} ms`);

      check(report, '/readyz answers 503 on every origin during the outage', Object.values(readyDuring).length > 0 && Object.values(readyDuring).every((s) => s === 503), JSON.stringify(readyDuring));
      for (const surface of new Set(probes.map((p) => p.surface))) {
        const mine = probes.filter((p) => p.surface === surface);
        check(
          report,
          `${surface}: "retry later" during the outage, never a permanent rejection`,
          mine.every((p) => p.retryLater),
          mine.map((p) => `${p.what}: ${p.answer}`).join('; '),
        );
      }
      const diedDuringOutage = !env.gateway.running;
      check(report, 'the service stays up through the outage', !diedDuringOutage, diedDuringOutage ? `the process exited: ${env.gateway.unexpectedExits.join('; ')}: ${env.gateway.crashExcerpt()}` : `pid ${pidBefore} still running`);
      if (diedDuringOutage) {
        // Restart it so that the rest of the scenario (retries, data check) still tells something.
        report.notes.push('The service process died during the outage and was restarted by the harness so that the senders could finish and the data check could run.');
        await env.gateway.start();
      }
      const recovered = await waitUntil(60_000, async () => Object.values(await readiness(env.gateway)).every((s) => s === 200), 500);
      const recoveryMs = Date.now() - outageEnd;
      check(report, 'the service recovers by itself (readyz 200 on every origin), same process', recovered && !diedDuringOutage && env.gateway.pid === pidBefore, `${recovered ? `ready ${recoveryMs} ms after the database came back` : 'not ready within 60 s'}; pid ${pidBefore} -> ${env.gateway.pid}`);
      const after = await probeEverySurface(env.gateway, site, context.workDir, `c${Date.now().toString(36)}`);
      check(report, 'every surface accepts work again after the outage', after.every((p) => !p.permanent && !p.retryLater && !p.answer.startsWith('no answer')), after.map((p) => `${p.surface} ${p.what}: ${p.answer}`).join('; '));

      await sleep(2_000);
      await load.drain(90_000);
      const during = [...load.hl7.answers(), ...load.dicom.answers(), ...load.fhir.answers()];
      const permanent = during.filter((a) => a.verdict === 'permanent');
      check(report, 'no load answer was a permanent rejection', permanent.length === 0, permanent.length ? `${permanent.length}: ${[...new Set(permanent.map((a) => a.detail))].slice(0, 4).join(' | ')}` : `${during.length} answers`);
      report.injected = `PostgreSQL stopped (immediate mode) for ${Math.round((outageEnd - outageStart) / 1000)} s under 8 MLLP senders, 4 DICOM associations, 16 FHIR writers; probes on every surface during the outage`;
      await load.verify(report, 'outage');
      check(report, 'the service never exited on its own', env.gateway.unexpectedExits.length === 0, env.gateway.unexpectedExits.map((e) => (e.startsWith('exit code 0 ') ? `${e}: a graceful shutdown, i.e. a SIGTERM/SIGINT from outside this campaign` : `${e}: ${env.gateway.crashExcerpt()}`)).join('; ') || 'no exit');
      report.figures['outage, ms'] = outageEnd - outageStart;
      report.figures['ready again after the database returned, ms'] = recovered ? recoveryMs : 'never';
      for (const [name, count] of Object.entries(load.answerCounts())) report.figures[`answers: ${name}`] = count;
    } finally {
      load?.stop();
      try {
        context.postgres.start();
      } catch {
        // already running
      }
      await env.close();
    }
  },
};
