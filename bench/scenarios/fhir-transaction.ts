import { randomUUID } from 'node:crypto';
import { businessIdentifier, identifierSystem, loinc, observationCodes, patientBody, syntheticId } from '../dataset/synthetic.ts';
import { progress } from '../lib/log.ts';
import { monitored } from '../lib/process-monitor.ts';
import { benchHost } from '../lib/ports.ts';
import { runHttpLoad } from '../load/http-load.ts';
import { Series } from '../report/series.ts';
import { randomInt, type BenchContext } from './context.ts';
import { gatewayWatched, type FhirTargets } from './fhir.ts';

/**
 * Issue 22 point 7: a 100-entry transaction Bundle (a patient upserted with ifNoneExist and 99
 * observations naming it by urn:uuid) in resources a second, against the same 100 resources
 * posted one by one (the patient with If-None-Exist, then each observation), by the same number
 * of clients, in the same run: the ratio is the figure.
 */
export const bundleSize = 100;
const concurrencies = [1, 16];

function observation(subject: string, n: number): Record<string, unknown> {
  const code = observationCodes[n % observationCodes.length]!;
  return {
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: loinc, code: code.code, display: code.display }] },
    subject: { reference: subject },
    effectiveDateTime: '2026-01-01T08:00:00Z',
    valueQuantity: { value: n, unit: code.unit },
  };
}

function transactionBody(i: number): string {
  const patientUrl = `urn:uuid:${randomUUID()}`;
  const identifier = businessIdentifier(i);
  return JSON.stringify({
    resourceType: 'Bundle',
    type: 'transaction',
    entry: [
      { fullUrl: patientUrl, resource: patientBody(identifier, i), request: { method: 'POST', url: 'Patient', ifNoneExist: `identifier=${identifierSystem}|${identifier}` } },
      ...Array.from({ length: bundleSize - 1 }, (_, n) => ({ resource: observation(patientUrl, n), request: { method: 'POST', url: 'Observation' } })),
    ],
  });
}

/** The same resources as requests of their own: each client sends a patient, then its 99 observations. */
function oneByOne(targets: FhirTargets): () => { path: string; body: string; headers?: Record<string, string> } {
  let sent = 0;
  let patient = 1;
  return () => {
    const n = sent++ % bundleSize;
    if (n === 0) {
      patient = randomInt(targets.writePatients);
      const identifier = businessIdentifier(patient);
      return { path: '/fhir/Patient', body: JSON.stringify(patientBody(identifier, patient)), headers: { 'if-none-exist': `identifier=${identifierSystem}|${identifier}` } };
    }
    return { path: '/fhir/Observation', body: JSON.stringify(observation(`Patient/${syntheticId('patient', targets.writes.id, patient)}`, n)) };
  };
}

export async function runFhirTransactionScenario(context: BenchContext, targets: FhirTargets): Promise<void> {
  const url = `http://${benchHost}:${targets.fhirPort}`;
  const headers = { 'x-api-key': targets.writes.apiKey, accept: 'application/fhir+json', 'content-type': 'application/fhir+json' };
  const check = await fetch(`${url}/fhir`, { method: 'POST', headers, body: transactionBody(1) });
  const answer = (await check.json()) as { type?: string; entry?: unknown[] };
  if (check.status !== 200 || answer.type !== 'transaction-response' || answer.entry?.length !== bundleSize) {
    const reason = `sanity check failed: POST /fhir -> ${check.status} ${JSON.stringify(answer).slice(0, 300)}`;
    context.skipped.push({ scenario: 'fhir.transaction-100', reason });
    progress(`fhir.transaction-100: ${reason}`);
    return;
  }
  const bundles = (connections: number, seconds: number) =>
    runHttpLoad({ baseUrl: url, connections, seconds, method: 'POST', headers, next: () => ({ path: '/fhir', body: transactionBody(randomInt(targets.writePatients)) }) });
  const single = (connections: number, seconds: number) => runHttpLoad({ baseUrl: url, connections, seconds, method: 'POST', headers, next: oneByOne(targets) });
  await bundles(4, 1);
  await single(4, 1);
  // A Bundle takes a good part of a second under load: shorter runs would count too few of them.
  const seconds = Math.max(context.options.httpSeconds, 3);
  for (const connections of concurrencies) {
    const transaction = new Series('fhir.transaction-100', 'gateway', connections, 'resources/s', targets.gateway.workers);
    const separate = new Series('fhir.transaction-100', 'one-by-one', connections, 'resources/s', targets.gateway.workers);
    context.series.push(transaction, separate);
    for (let run = 1; run <= context.options.runs; run++) {
      const measured = await monitored(gatewayWatched(targets.gateway), () => bundles(connections, seconds));
      const result = measured.result;
      transaction.add({ throughput: result.requestsPerSecond * bundleSize, p50: result.p50, p95: result.p95, p99: result.p99, failed: result.failed }, measured.usage);
      const base = await monitored(gatewayWatched(targets.gateway), () => single(connections, seconds));
      separate.add({ throughput: base.result.requestsPerSecond, p50: base.result.p50, p95: base.result.p95, p99: base.result.p99, failed: base.result.failed }, base.usage);
      for (const [series, figures] of [[transaction, result], [separate, base.result]] as const) {
        const bad = Object.entries(figures.statusCodes).filter(([status]) => !status.startsWith('2'));
        if (bad.length > 0) series.note(`non-2xx answers: ${bad.map(([status, count]) => `${status} x${count}`).join(', ')}`);
      }
    }
    transaction.note(`one request is a Bundle of ${bundleSize} entries; latencies are of whole Bundles`);
    await targets.drain();
    const [a, b] = [transaction.toMeasurement().throughput.median, separate.toMeasurement().throughput.median];
    progress(`fhir.transaction-100 c=${connections}: ${a.toFixed(0)} resources/s in transactions, ${b.toFixed(0)} one by one (${(a / b).toFixed(2)}x)`);
  }
}
