import { randomInt } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePortsOnEvery, startHaproxy, type RunningHaproxy } from '../../test/support/haproxy.ts';
import { createScenarioDatabase, requireSurfaces, type Environment } from '../harness/environment.ts';
import { campaignWorkers, GatewayProcess } from '../harness/gateway-process.ts';
import { provisionSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';
import { sleep } from '../harness/timing.ts';
import { MixedLoad } from '../load/mixed-load.ts';

const balancer = '127.0.0.1';
const nodeAddresses = ['127.0.0.2', '127.0.0.3'] as const;

/**
 * Issue 21 point 5. Two nodes (a supervisor and two workers each) on one PostgreSQL and one shared
 * DICOM storage folder, behind HAProxy with the repository's configuration on loopback; the mixed
 * load goes through the balancer only. One node's whole process group is SIGKILLed and restarted,
 * again and again, while the other serves: what either acknowledged must be there exactly once,
 * and what was cut off half-way must have left nothing behind.
 */
export const multiNode: Scenario = {
  id: 'multi-node',
  title: '7. Several nodes: two behind HAProxy, one killed again and again',
  budgetMs: 15 * 60_000,
  async run(context, report) {
    const databaseUrl = await createScenarioDatabase(context, 'multi-node');
    const storage = join(context.workDir, 'shared-dicom');
    mkdirSync(storage, { recursive: true });
    const ports = await freePortsOnEvery([balancer, ...nodeAddresses]);
    const nodes = await Promise.all(
      nodeAddresses.map((address, index) =>
        GatewayProcess.create({
          dataDir: join(context.workDir, `node${index + 1}`, 'data'),
          logDir: join(context.workDir, `node${index + 1}`, 'logs'),
          databaseUrl,
          bind: address,
          ports,
          env: { CG_NODE_ID: `node${index + 1}`, CG_DICOM_STORAGE_DIR: storage, CG_TRUSTED_PROXIES: balancer },
        }),
      ),
    );
    const [victim, survivor] = nodes as [GatewayProcess, GatewayProcess];
    const sql = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    sql.on('error', () => {});
    // The load and the checks address the balancer: it listens on the nodes' ports at 127.0.0.1.
    const front: Environment = { gateway: victim, databaseUrl, sql, close: async () => {} };
    let haproxy: RunningHaproxy | undefined;
    let load: MixedLoad | undefined;
    try {
      const site = await provisionSite(victim, 'nodes');
      // One after the other: the first creates the first-run administrator and the paging secret.
      await victim.start();
      await survivor.start();
      if (requireSurfaces(report, victim, ['mllp', 'dicom', 'fhir']).length) return;
      haproxy = await startHaproxy({ bind: balancer, nodes: [nodeAddresses[0], nodeAddresses[1]], ports, dir: context.workDir });
      await haproxy.waitFor('node1', 'UP');
      await haproxy.waitFor('node2', 'UP');

      const kills = 5;
      load = new MixedLoad(front, site, context.workDir, `N${Date.now().toString(36)}`);
      const senders = (count: number) => Math.max(1, Math.round(count * Math.min(1, context.scale)));
      load.start({ mllpSenders: senders(8), dicomAssociations: senders(4), fhirWriters: senders(16) });
      const takenOutMs: number[] = [];
      for (let i = 0; i < kills; i++) {
        await sleep(randomInt(1_000, 5_000));
        const killedAt = Date.now();
        await victim.kill();
        await haproxy.waitFor('node1', 'DOWN', 30_000);
        takenOutMs.push(Date.now() - killedAt);
        context.log(`kill ${i + 1}/${kills}: ${load.hl7.acknowledged} HL7, ${load.dicom.acknowledged} DICOM, ${load.fhir.acknowledged} FHIR acknowledged so far`);
        // The survivor alone for a moment, then the victim back and in the balancer's rotation.
        await sleep(randomInt(500, 2_000));
        await victim.start();
        await haproxy.waitFor('node1', 'UP', 60_000);
      }
      await sleep(1_500);
      await load.drain(90_000);
      report.injected = `${kills} SIGKILLs of one node's process group (supervisor and ${campaignWorkers} workers) at random moments, each after 1-5 s of load on both nodes, restarted 0.5-2 s after HAProxy marked it down; the other node (${campaignWorkers} workers) served throughout; ${senders(8)} MLLP senders, ${senders(4)} DICOM associations and ${senders(16)} FHIR writers through HAProxy; senders retry what was not acknowledged`;
      await load.verify(report, 'multi-node', storage);

      const servers = await haproxy.servers();
      const served = (node: string, backend: string) => servers.find((s) => s.server === node && s.backend === backend)?.total ?? 0;
      const spread = ['fhir', 'mllp', 'dicom'].map((backend) => `${backend} ${served('node1', backend)}/${served('node2', backend)}`);
      check(report, 'both nodes took FHIR, MLLP and DICOM traffic', ['fhir', 'mllp', 'dicom'].every((backend) => served('node1', backend) > 0 && served('node2', backend) > 0), `node1/node2 connections or requests: ${spread.join(', ')}`);
      check(report, 'the node that was not killed never exited', survivor.running && survivor.unexpectedExits.length === 0, survivor.unexpectedExits.join('; ') || `running since its start`);
      check(report, 'the killed node exited only when killed', victim.unexpectedExits.length === 0, victim.unexpectedExits.map((e) => `${e}: ${victim.crashExcerpt()}`).join('; ') || 'only the injected kills');
      report.figures['SIGKILLs (process group)'] = kills;
      report.figures['kill to marked down by the health check, median ms'] = takenOutMs.sort((a, b) => a - b)[Math.floor(takenOutMs.length / 2)] ?? 0;
      report.figures['node1/node2 share (connections or requests)'] = spread.join(', ');
      for (const [name, count] of Object.entries(load.answerCounts())) report.figures[`answers: ${name}`] = count;
    } finally {
      load?.stop();
      await haproxy?.stop();
      for (const node of nodes) await node.stop();
      await sql.end().catch(() => {});
    }
  },
};
