import { businessIdentifier, familyName, identifierSystem, loinc, observationCodes, patientBody, syntheticId } from '../dataset/synthetic.ts';
import type { GatewayProcess } from '../lib/gateway-process.ts';
import { progress } from '../lib/log.ts';
import { monitored, type Watched } from '../lib/process-monitor.ts';
import type { ProvisionedSite } from '../lib/provision.ts';
import { benchHost } from '../lib/ports.ts';
import { runHttpLoad, type HttpLoadResult } from '../load/http-load.ts';
import { Series } from '../report/series.ts';
import { randomInt, type BenchContext } from './context.ts';
import { runFhirTransactionScenario } from './fhir-transaction.ts';

/**
 * FHIR scenarios of issue 8: read by id, search by identifier, by name substring and by
 * patient+code (also with _include of the patient, issue 22), create and update, at each concurrency, against the gateway; read and create
 * also against baselines (a) and (b), run by run in turn with the gateway's.
 */
export interface FhirTargets {
  gateway: GatewayProcess;
  fhirPort: number;
  /** Baselines (a) and (b), with as many worker processes as the service. */
  baseline: { watched: Watched; port: number };
  main: ProvisionedSite;
  writes: ProvisionedSite;
  mainPatients: number;
  writePatients: number;
  /** Resolves when the service's database sessions are idle again (queries outlive a closed client). */
  drain: () => Promise<void>;
}

/** A single answer slower than this is not put under concurrent load (see below). */
const slowRequestMs = 2_000;

interface Operation {
  key: string;
  method: 'GET' | 'POST' | 'PUT';
  baseline?: 'baseline-a' | 'baseline-b';
  site: 'main' | 'writes';
  next: () => { path: string; body?: string };
  /** What a correct answer looks like, checked once before the load. */
  check: (status: number, body: { entry?: unknown[]; resourceType?: string }) => boolean;
}

function operations(context: BenchContext, targets: FhirTargets): Operation[] {
  const { main, writes, mainPatients, writePatients } = targets;
  let created = 0;
  let updated = 0;
  const found = (status: number, body: { entry?: unknown[] }) => status === 200 && (body.entry?.length ?? 0) >= 1;
  return [
    {
      key: 'read',
      method: 'GET',
      baseline: 'baseline-a',
      site: 'main',
      next: () => ({ path: `/fhir/Patient/${syntheticId('patient', main.id, randomInt(mainPatients))}` }),
      check: (status, body) => status === 200 && body.resourceType === 'Patient',
    },
    {
      key: 'search-identifier',
      method: 'GET',
      site: 'main',
      next: () => ({ path: `/fhir/Patient?identifier=${encodeURIComponent(`${identifierSystem}|${businessIdentifier(randomInt(mainPatients))}`)}` }),
      check: found,
    },
    {
      key: 'search-name',
      method: 'GET',
      site: 'main',
      // A substring from inside a family name (about a dozen patients each in the full set).
      next: () => ({ path: `/fhir/Patient?name=${familyName(randomInt(mainPatients)).slice(1, 6).toLowerCase()}` }),
      check: found,
    },
    {
      key: 'search-patient-code',
      method: 'GET',
      site: 'main',
      next: () => {
        const patient = syntheticId('patient', main.id, randomInt(mainPatients));
        const code = observationCodes[randomInt(observationCodes.length) - 1]!.code;
        return { path: `/fhir/Observation?patient=Patient/${patient}&code=${encodeURIComponent(`${loinc}|${code}`)}` };
      },
      check: found,
    },
    {
      // Issue 22 point 7: the same search with the patient included (search mode include).
      key: 'search-patient-code-include',
      method: 'GET',
      site: 'main',
      next: () => {
        const patient = syntheticId('patient', main.id, randomInt(mainPatients));
        const code = observationCodes[randomInt(observationCodes.length) - 1]!.code;
        return { path: `/fhir/Observation?patient=Patient/${patient}&code=${encodeURIComponent(`${loinc}|${code}`)}&_include=Observation:patient` };
      },
      check: (status, body) =>
        found(status, body) && (body.entry as { search?: { mode?: string } }[]).some((entry) => entry.search?.mode === 'include'),
    },
    {
      key: 'create',
      method: 'POST',
      baseline: 'baseline-b',
      site: 'writes',
      next: () => {
        const n = ++created;
        return { path: '/fhir/Patient', body: JSON.stringify(patientBody(`C${context.runTag}-${n}`, n)) };
      },
      check: (status, body) => status === 201 && body.resourceType === 'Patient',
    },
    {
      key: 'update',
      method: 'PUT',
      site: 'writes',
      next: () => {
        const i = randomInt(writePatients);
        const id = syntheticId('patient', writes.id, i);
        const body = { ...patientBody(businessIdentifier(i), i), id, telecom: [{ system: 'phone', value: `555-${++updated}` }] };
        return { path: `/fhir/Patient/${id}`, body: JSON.stringify(body) };
      },
      check: (status, body) => status === 200 && body.resourceType === 'Patient',
    },
  ];
}

function headers(key: string, withBody: boolean): Record<string, string> {
  return {
    'x-api-key': key,
    accept: 'application/fhir+json',
    ...(withBody ? { 'content-type': 'application/fhir+json' } : {}),
  };
}

/** How often a sanity check waits out a 429 (the key's searches of the scenario before still finishing). */
const throttledRetries = 10;

async function checkOnce(url: string, operation: Operation, key: string): Promise<{ problem?: string; ms: number }> {
  const request = operation.next();
  let started = performance.now();
  let response: Response;
  let text: string;
  for (let attempt = 0; ; attempt++) {
    started = performance.now();
    response = await fetch(`${url}${request.path}`, {
      method: operation.method,
      headers: headers(key, request.body !== undefined),
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
    text = await response.text();
    if (response.status !== 429 || attempt === throttledRetries) break;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)));
  }
  const ms = performance.now() - started;
  let body: { entry?: unknown[]; resourceType?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // reported below
  }
  return operation.check(response.status, body) ? { ms } : { ms, problem: `sanity check failed: ${operation.method} ${request.path} -> ${response.status} ${text.slice(0, 300)}` };
}

export async function runFhirScenarios(context: BenchContext, targets: FhirTargets): Promise<void> {
  const { options } = context;
  const gatewayUrl = `http://${benchHost}:${targets.fhirPort}`;
  const baselineUrl = `http://${benchHost}:${targets.baseline.port}`;
  for (const operation of operations(context, targets)) {
    const site = operation.site === 'main' ? targets.main : targets.writes;
    // The first answer may pay one-time costs (the FHIR definitions load on the first write); the second is timed.
    let first = await checkOnce(gatewayUrl, operation, site.apiKey);
    if (!first.problem) first = await checkOnce(gatewayUrl, operation, site.apiKey);
    if (first.problem) {
      context.skipped.push({ scenario: `fhir.${operation.key}`, reason: first.problem });
      progress(`fhir.${operation.key}: ${first.problem}`);
      await targets.drain();
      continue;
    }
    if (first.ms > slowRequestMs) {
      await measureSlow(context, targets, gatewayUrl, operation, site.apiKey);
      continue;
    }
    const load = (url: string, connections: number, seconds: number) =>
      runHttpLoad({
        baseUrl: url,
        connections,
        seconds,
        method: operation.method,
        headers: headers(site.apiKey, operation.method !== 'GET'),
        next: operation.next,
      });
    // Warm-up (JIT, caches, pools), not measured.
    await load(gatewayUrl, 16, 1);
    if (operation.baseline) await load(baselineUrl, 16, 1);
    for (const connections of options.concurrencies) {
      const { workers } = targets.gateway;
      const gateway = new Series(`fhir.${operation.key}`, 'gateway', connections, 'req/s', workers);
      const baseline = operation.baseline ? new Series(`fhir.${operation.key}`, operation.baseline, connections, 'req/s', workers) : undefined;
      context.series.push(gateway, ...(baseline ? [baseline] : []));
      for (let run = 1; run <= options.runs; run++) {
        const measured = await monitored(gatewayWatched(targets.gateway), () => load(gatewayUrl, connections, options.httpSeconds));
        record(gateway, measured.result, measured.usage);
        if (baseline) {
          const base = await monitored(targets.baseline.watched, () => load(baselineUrl, connections, options.httpSeconds));
          record(baseline, base.result, base.usage);
        }
      }
      const m = gateway.toMeasurement();
      await targets.drain();
      progress(
        `fhir.${operation.key} c=${connections} workers=${workers}: ${m.throughput.median.toFixed(0)} req/s p95 ${m.latencyMs?.p95.median.toFixed(1)} ms` +
          (baseline ? `; ${operation.baseline} ${baseline.toMeasurement().throughput.median.toFixed(0)} req/s` : ''),
      );
    }
  }  await runFhirTransactionScenario(context, targets);
}

/**
 * An operation whose single answer takes seconds is measured one request at a time only: under
 * 16 or 64 connections its queries would hold every pooled database connection for minutes
 * (they run on after the client gives up) and turn the scenarios after it into 503s.
 */
async function measureSlow(context: BenchContext, targets: FhirTargets, url: string, operation: Operation, key: string): Promise<void> {
  const series = new Series(`fhir.${operation.key}`, 'gateway', 1, 'req/s', targets.gateway.workers);
  context.series.push(series);
  for (let run = 1; run <= context.options.runs; run++) {
    const measured = await monitored(gatewayWatched(targets.gateway), async () => {
      const started = performance.now();
      const result = await checkOnce(url, operation, key);
      return { ms: performance.now() - started, failed: result.problem ? 1 : 0 };
    });
    const { ms, failed } = measured.result;
    series.add({ throughput: 1000 / ms, p50: ms, p95: ms, p99: ms, failed }, measured.usage);
  }
  series.note(`one request takes seconds: measured one request per run at 1 connection only; 16 and 64 connections not loaded`);
  context.skipped.push({ scenario: `fhir.${operation.key} at 16 and 64 connections`, reason: 'a single request takes seconds (see the analysis of this target)' });
  await targets.drain();
  progress(`fhir.${operation.key}: slow, ${series.toMeasurement().latencyMs?.p50.median.toFixed(0)} ms a request; measured at 1 connection only`);
}

/** The service's process tree, with its PostgreSQL measured apart. */
export function gatewayWatched(gateway: Pick<GatewayProcess, 'pid' | 'postgresPid'>): Watched {
  return { roots: [gateway.pid], ...(gateway.postgresPid !== undefined ? { postgres: gateway.postgresPid } : {}) };
}

function record(series: Series, result: HttpLoadResult, usage: Parameters<Series['add']>[1]): void {
  series.add({ throughput: result.requestsPerSecond, p50: result.p50, p95: result.p95, p99: result.p99, failed: result.failed }, usage);
  const bad = Object.entries(result.statusCodes).filter(([status]) => !status.startsWith('2'));
  if (bad.length > 0) series.note(`non-2xx answers: ${bad.map(([status, count]) => `${status} x${count}`).join(', ')}`);
}
