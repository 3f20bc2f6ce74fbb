import { randomInt } from 'node:crypto';
import { createEnvironment, requireSurfaces } from '../harness/environment.ts';
import { provisionSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';
import { sleep } from '../harness/timing.ts';
import { MixedLoad } from '../load/mixed-load.ts';

/**
 * Issue 9 point 1. SIGKILL is the harshest stop there is: no shutdown hook, no flush, sockets cut
 * mid-message. DESIGN.md section 2 promises that an acknowledgement goes out only after commit,
 * so whatever was acknowledged before a kill must be there after it, whole and exactly once.
 */
export const crashConsistency: Scenario = {
  id: 'crash',
  title: '1. Crash consistency (SIGKILL under load)',
  budgetMs: 12 * 60_000,
  async run(context, report) {
    const env = await createEnvironment(context, 'crash');
    let load: MixedLoad | undefined;
    try {
      const site = await provisionSite(env.gateway, 'crash');
      await env.gateway.start();
      requireSurfaces(report, env.gateway, ['mllp', 'dicom', 'fhir']);
      const kills = Math.max(2, Math.round(10 * Math.min(1, context.scale)));
      load = new MixedLoad(env, site, context.workDir, `K${Date.now().toString(36)}`);
      load.start({ mllpSenders: 8, dicomAssociations: 4, fhirWriters: 16 });
      const restartMs: number[] = [];
      let killedDuringStartUp = 0;
      for (let i = 0; i < kills; i++) {
        if (i % 2 === 1) {
          // Every other kill lands while the service is starting (migrations, start-up recovery
          // of the DICOM temporary directory, listeners opening): recovery must survive itself.
          const starting = env.gateway.start().catch(() => undefined);
          await sleep(randomInt(200, 4_000));
          if (!env.gateway.ready) killedDuringStartUp++;
          await env.gateway.kill();
          await starting;
          context.log(`kill ${i + 1}/${kills} during start-up`);
        } else {
          // A random moment of steady load.
          await sleep(randomInt(500, 5_000));
          await env.gateway.kill();
          context.log(`kill ${i + 1}/${kills} under load: ${load.hl7.acknowledged} HL7, ${load.dicom.acknowledged} DICOM, ${load.fhir.acknowledged} FHIR acknowledged so far`);
        }
        const t0 = Date.now();
        await env.gateway.start();
        restartMs.push(Date.now() - t0);
      }
      await sleep(1_500);
      await load.drain(90_000);
      // One last kill with nothing in flight, then a start: start-up recovery must leave no
      // temporary file behind before the files are counted.
      await env.gateway.kill();
      await env.gateway.start();
      report.injected = `${kills} SIGKILLs at random moments (half under 0.5-5 s of steady load, half 0.2-4 s into a start-up) under 8 MLLP senders, 4 DICOM associations, 16 FHIR writers; restart after each; senders retry what was not acknowledged`;
      await load.verify(report, 'crash');
      check(report, 'the service never exited on its own', env.gateway.unexpectedExits.length === 0, env.gateway.unexpectedExits.map((e) => (e.startsWith('exit code 0 ') ? `${e}: a graceful shutdown, i.e. a SIGTERM/SIGINT from outside this campaign` : `${e}: ${env.gateway.crashExcerpt()}`)).join('; ') || 'only the injected kills');
      report.figures['SIGKILLs'] = kills;
      report.figures['of which before the service was listening'] = killedDuringStartUp;
      report.figures['restart to listening, median ms'] = restartMs.sort((a, b) => a - b)[Math.floor(restartMs.length / 2)] ?? 0;
      for (const [name, count] of Object.entries(load.answerCounts())) report.figures[`answers: ${name}`] = count;
    } finally {
      load?.stop();
      await env.close();
    }
  },
};
