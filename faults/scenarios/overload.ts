import { connect, type Socket } from 'node:net';
import { runAutocannon } from '../clients/autocannon.ts';
import { ackCode, MllpClient } from '../clients/mllp-client.ts';
import { admitMessage } from '../samples/hl7-messages.ts';
import { createEnvironment, requireSurfaces } from '../harness/environment.ts';
import { openDescriptors } from '../harness/process-stats.ts';
import { provisionSite } from '../harness/provision.ts';
import { check, type Scenario } from '../harness/scenario.ts';
import { sleep } from '../harness/timing.ts';

const httpClients = 500;
const idleMllpConnections = 200;
const memoryLimitBytes = 400 * 1024 * 1024;

/**
 * Issue 9 point 4. 500 HTTP clients hammer the FHIR origin (reads and writes) while 200 MLLP
 * connections sit idle. Memory and file descriptors must stay bounded, excess work must be refused
 * with 429/503 rather than queued without bound, and every request the service accepted must
 * complete: no reset connection, no timeout, no other 5xx.
 */
export const overload: Scenario = {
  id: 'overload',
  title: '4. Overload (500 HTTP clients, 200 idle MLLP connections)',
  budgetMs: 3 * 60_000,
  async run(context, report) {
    // One serving process: the 400 MB bound is a process's. With two workers the process group's
    // summed RSS starts at 494 MB (the supervisor loads the whole service while serving nothing,
    // and the node binary's pages count once per process), so the bound fails before any load.
    const env = await createEnvironment(context, 'overload', { env: { CG_WORKERS: '1' } });
    const idle: Socket[] = [];
    try {
      const site = await provisionSite(env.gateway, 'overload');
      await env.gateway.start();
      if (requireSurfaces(report, env.gateway, ['fhir', 'mllp']).length) return;
      // Every process of the service: the supervisor and its workers.
      const descriptors = () => env.gateway.processes().reduce((sum, pid) => sum + (openDescriptors(pid) ?? 0), 0);
      const baselineFds = descriptors();
      const baselineRss = env.gateway.residentBytes() ?? 0;

      let idleClosedByServer = 0;
      for (let i = 0; i < idleMllpConnections; i++) {
        const socket = connect({ host: '127.0.0.1', port: env.gateway.ports.mllp });
        socket.on('error', () => {});
        socket.on('close', () => idleClosedByServer++);
        idle.push(socket);
      }
      await sleep(1_000);

      let peakRss = 0;
      let peakFds = 0;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, env.gateway.residentBytes() ?? 0);
        peakFds = Math.max(peakFds, descriptors());
      }, 200);
      const duration = Math.max(5, Math.round(20 * Math.min(1, context.scale * 2)));
      const headers = { 'x-api-key': site.apiKey, 'content-type': 'application/fhir+json' };
      const result = await runAutocannon({
        url: `http://127.0.0.1:${env.gateway.ports.fhir}`,
        connections: httpClients,
        duration,
        timeout: 30,
        requests: [
          { method: 'GET', path: '/fhir/Patient?_count=10', headers },
          { method: 'POST', path: '/fhir/Patient', headers, body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Overload', given: ['Load'] }], gender: 'unknown' }) },
          { method: 'GET', path: '/fhir/Patient?name=overload&_count=5', headers },
        ],
      });
      // While the idle connections are still open, a real sender must still get through.
      let mllpAnswer = 'no answer';
      try {
        const client = await MllpClient.connect(env.gateway.ports.mllp);
        mllpAnswer = ackCode(await client.send(admitMessage(site.mllp, `OV${Date.now()}`, `MRN-OV-${Date.now()}`))) ?? '?';
        client.close();
      } catch (error) {
        mllpAnswer = `failed: ${(error as Error).message}`;
      }
      clearInterval(sampler);
      const idleClosedDuringRun = idleClosedByServer;
      for (const socket of idle) socket.destroy();
      await sleep(3_000);
      const afterFds = descriptors();

      const codes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
      const count = (predicate: (code: number) => boolean) => Object.entries(codes).filter(([c]) => predicate(Number(c))).reduce((n, [, v]) => n + v, 0);
      const accepted = count((c) => c >= 200 && c < 300);
      const shed = count((c) => c === 429 || c === 503);
      const otherErrors = count((c) => c >= 500 && c !== 503) + count((c) => c >= 400 && c < 500 && c !== 429);
      report.injected = `${httpClients} concurrent HTTP clients for ${duration} s on the FHIR origin (search, create, name search) with ${idleMllpConnections} idle MLLP connections open`;
      report.tallies.push({ item: 'HTTP requests answered 2xx', sent: result.requests.total, acknowledged: accepted, found: accepted, lost: result.errors, duplicated: 0 });
      check(report, 'resident memory stays under 400 MB', peakRss > 0 && peakRss < memoryLimitBytes, `peak ${(peakRss / 1048576).toFixed(0)} MB (baseline ${(baselineRss / 1048576).toFixed(0)} MB)`);
      check(report, 'file descriptors stay bounded and return to baseline', peakFds < 4 * (httpClients + idleMllpConnections) && afterFds <= baselineFds + 50, `baseline ${baselineFds}, peak ${peakFds}, after ${afterFds}`);
      check(report, 'every request is answered: no connection error, no timeout', result.errors === 0 && result.timeouts === 0, `${result.errors} errors, ${result.timeouts} timeouts of ${result.requests.total}`);
      check(report, 'no answer other than 2xx, 429 or 503', otherErrors === 0, JSON.stringify(codes));
      check(report, 'the service still served work under overload', accepted > 0, `${accepted} accepted, ${shed} refused with 429/503`);
      check(report, 'an MLLP sender gets through while 200 idle connections are open', mllpAnswer === 'AA', `MSA-1 ${mllpAnswer}`);
      check(report, 'the service never exited on its own', env.gateway.unexpectedExits.length === 0 && env.gateway.running, env.gateway.unexpectedExits.map((e) => (e.startsWith('exit code 0 ') ? `${e}: a graceful shutdown, i.e. a SIGTERM/SIGINT from outside this campaign` : `${e}: ${env.gateway.crashExcerpt()}`)).join('; ') || 'running');
      report.figures['requests'] = result.requests.total;
      report.figures['status codes'] = JSON.stringify(codes);
      report.figures['refused early (429/503)'] = shed;
      report.figures['latency p50 / p99 / max, ms'] = `${result.latency.p50} / ${result.latency.p99} / ${result.latency.max}`;
      report.figures['peak RSS, MB'] = Math.round(peakRss / 1048576);
      report.figures['peak open fds'] = peakFds;
      report.figures['idle MLLP connections closed by the service during the run'] = idleClosedDuringRun;
      if (shed === 0) report.notes.push('No request was refused with 429/503: the service absorbed the load within its limits (nothing was queued beyond the request timeout, since every request completed).');
    } finally {
      for (const socket of idle) socket.destroy();
      await env.close();
    }
  },
};
