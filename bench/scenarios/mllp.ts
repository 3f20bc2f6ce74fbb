import { progress } from '../lib/log.ts';
import { monitored, type Watched } from '../lib/process-monitor.ts';
import { benchHost } from '../lib/ports.ts';
import { adtA01, oruR01 } from '../load/hl7-messages.ts';
import { runMllpLoad, type MllpLoadResult } from '../load/mllp-client.ts';
import { Series } from '../report/series.ts';
import type { BenchContext } from './context.ts';

/**
 * HL7 v2 over MLLP (issue 8): ADT^A01 and ORU^R01 (5 OBX) with 1 and 8 connections, each
 * message waiting for its acknowledgement, against the gateway (which acknowledges after its
 * commit), against baseline (b) over MLLP (one single-row INSERT committed, then the ACK) and
 * against the frame-and-acknowledge server, run by run in turn.
 */
export interface MllpTargets {
  gateway: Watched;
  workers: number;
  mllpPort: number;
  baseline: { pid: number; port: number };
  insertBaseline: { watched: Watched; port: number };
}

const kinds = {
  adt: (tag: string) => (n: number) => adtA01(tag, n),
  oru: (tag: string) => (n: number) => oruR01(tag, n, 500),
};

export async function runMllpScenarios(context: BenchContext, targets: MllpTargets): Promise<void> {
  const { options } = context;
  const load = (port: number, connections: number, message: (n: number) => string, messages = options.mllpMessages) =>
    runMllpLoad({ host: benchHost, port, connections, messages, seconds: options.mllpSeconds, message });
  const probe = await load(targets.mllpPort, 1, kinds.adt(`${context.runTag}W`), 50);
  if ((probe.ackCodes.AA ?? 0) === 0) {
    context.skipped.push({ scenario: 'mllp', reason: `the gateway did not accept ADT^A01 (acknowledgements: ${JSON.stringify(probe.ackCodes)})` });
    progress('mllp: the gateway did not accept the warm-up messages; skipped');
    return;
  }
  await load(targets.baseline.port, 1, kinds.adt(`${context.runTag}V`), 200);
  await load(targets.insertBaseline.port, 8, kinds.adt(`${context.runTag}U`), 200);
  const { workers } = targets;
  for (const [kind, make] of Object.entries(kinds)) {
    for (const connections of [1, 8]) {
      const gateway = new Series(`mllp.${kind}`, 'gateway', connections, 'msg/s', workers);
      const insert = new Series(`mllp.${kind}`, 'baseline-b', connections, 'msg/s', workers);
      const baseline = new Series(`mllp.${kind}`, 'mllp-baseline', connections, 'msg/s', workers);
      context.series.push(gateway, insert, baseline);
      for (let run = 1; run <= options.runs; run++) {
        const tag = `${context.runTag}${kind[0]}${connections}${run}w${workers}`;
        const measured = await monitored(targets.gateway, () => load(targets.mllpPort, connections, make(tag)));
        record(gateway, measured.result, measured.usage);
        const inserted = await monitored(targets.insertBaseline.watched, () => load(targets.insertBaseline.port, connections, make(`${tag}i`)));
        record(insert, inserted.result, inserted.usage);
        const base = await monitored(targets.baseline.pid, () => load(targets.baseline.port, connections, make(`${tag}b`)));
        record(baseline, base.result, base.usage);
      }
      progress(
        `mllp.${kind} c=${connections} workers=${workers}: ${gateway.toMeasurement().throughput.median.toFixed(0)} msg/s; baseline (b) ${insert.toMeasurement().throughput.median.toFixed(0)} msg/s; frame-and-ACK ${baseline.toMeasurement().throughput.median.toFixed(0)} msg/s`,
      );
    }
  }
}

function record(series: Series, result: MllpLoadResult, usage: Parameters<Series['add']>[1]): void {
  const accepted = result.ackCodes.AA ?? 0;
  series.add({ throughput: result.messagesPerSecond, p50: result.p50, p95: result.p95, p99: result.p99, failed: result.sent - accepted + result.failed }, usage);
  const other = Object.entries(result.ackCodes).filter(([code]) => code !== 'AA');
  if (other.length > 0) series.note(`acknowledgements other than AA: ${other.map(([code, count]) => `${code} x${count}`).join(', ')}`);
  if (result.failed > 0) series.note(`${result.failed} connection(s) failed`);
}
