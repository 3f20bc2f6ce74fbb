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
  budgetMs: 6 * 60_000,
  async run(context, report) {
    const env = await createEnvironment(context, 'crash');
    try {
      const site = await provisionSite(env.gateway, 'crash');
      await env.gateway.start();
      requireSurfaces(report, env.gateway, ['mllp', 'dicom', 'fhir']);
      const kills = Math.max(2, Math.round(10 * Math.min(1, context.scale)));
      const load = new MixedLoad(env, site, context.workDir, `K${Date.now().toString(36)}`);
      load.start({ mllpSenders: 8, dicomAssociations: 4, fhirWriters: 16 });
      const restartMs: number[] = [];
      for (let i = 0; i < kills; i++) {
        // A random moment: anywhere from just after start-up to a few seconds of steady load.
        await sleep(randomInt(500, 5_000));
        await env.gateway.kill();
        context.log(`kill ${i + 1}/${kills}: ${load.hl7.acknowledged} HL7, ${load.dicom.acknowledged} DICOM, ${load.fhir.acknowledged} FHIR acknowledged so far`);
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
      report.injected = `${kills} SIGKILLs at random moments (0.5-5 s of load after each restart) under 8 MLLP senders, 4 DICOM associations, 16 FHIR writers; restart after each; senders retry what was not acknowledged`;
      await load.verify(report, 'crash');
      check(report, 'the service never exited on its own', env.gateway.unexpectedExits.length === 0, env.gateway.unexpectedExits.join('; ') || 'only the injected kills');
      report.figures['SIGKILLs'] = kills;
      report.figures['restart to listening, median ms'] = restartMs.sort((a, b) => a - b)[Math.floor(restartMs.length / 2)] ?? 0;
      for (const [name, count] of Object.entries(load.answerCounts())) report.figures[`answers: ${name}`] = count;
    } finally {
      await env.close();
    }
  },
};
