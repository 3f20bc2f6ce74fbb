import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { startChild, httpAnswers, tcpAccepts, type RunningChild } from './lib/child.ts';
import { clearSite, ensureBenchSchema, loadSites } from './dataset/load-dataset.ts';
import { ensureDatabase } from './lib/external-database.ts';
import { gatewaySettings, startGatewayProcess, type GatewayProcess } from './lib/gateway-process.ts';
import { progress } from './lib/log.ts';
import { describeMachine, loadAverageNow } from './lib/machine.ts';
import { parseOptions } from './lib/options.ts';
import { baselinePorts, benchHost } from './lib/ports.ts';
import { ensureSites, existingSites, provisionMllpSite, provisionSite } from './lib/provision.ts';
import { ensureDicomTools } from './lib/setup.ts';
import type { BenchResults } from './report/model.ts';
import { computeTargets } from './report/targets.ts';
import { writeResults } from './report/write-results.ts';
import type { BenchContext } from './scenarios/context.ts';
import { runDicomScenarios } from './scenarios/dicom.ts';
import { runWadoScenarios } from './scenarios/dicomweb.ts';
import { largeSet, smallSet } from './load/dicom-data.ts';
import { runDicomQueryScenario } from './scenarios/dicom-query.ts';
import { gatewayWatched, runFhirScenarios } from './scenarios/fhir.ts';
import { runExportScenario } from './scenarios/fhir-export.ts';
import { runMllpScenarios } from './scenarios/mllp.ts';

/**
 * npm run bench: every surface side by side with its baseline, in one run (issue 8), and each
 * with the service at every worker count of --workers (1 and 2 by default; issue 21 point 6).
 * 1. FHIR on the cached data set (bench/scratch/dataset-<size>), against baselines (a) and (b)
 *    with as many worker processes as the service.
 * 2. MLLP and DICOM on a fresh scratch service, against baseline (b) over MLLP, the
 *    frame-and-ACK server, Orthanc and storescp.
 * 3. Targets, then bench/results/latest.{json,md} (quick.{json,md} for --quick).
 * Each group runs with 1 worker, then 2, before the next group, so that the two are measured
 * close together in time.
 */
const root = resolve(import.meta.dirname, '..');
const options = parseOptions(process.argv.slice(2));
// Settings of the service other than its defaults (BENCH_GATEWAY_ENV), read once: a malformed one stops the bench before it starts.
const measuredSettings = gatewaySettings();
const started = performance.now();
const workDir = join(root, 'bench', 'scratch');
const logDir = join(workDir, 'logs');
mkdirSync(logDir, { recursive: true });
const serverUrl = process.env.CG_DATABASE_URL?.trim() || undefined;
const context: BenchContext = {
  root,
  options,
  workDir,
  logDir,
  series: [],
  skipped: [],
  runTag: Date.now().toString(36).slice(-5),
};
const machine = describeMachine(root);
const writePatients = options.quick ? 500 : 5_000;

async function startGateway(name: string, dataDir: string, databaseUrl: string | undefined, workers: number): Promise<GatewayProcess> {
  return startGatewayProcess({
    root,
    dataDir,
    workers,
    ...(databaseUrl ? { databaseUrl } : {}),
    logFile: join(logDir, `gateway-${name}-w${workers}.log`),
    logLevel: options.logLevel,
    launcher: options.launcher,
    ...(options.cpuProfileDir ? { cpuProfileDir: resolve(options.cpuProfileDir) } : {}),
  });
}

async function fhirPhase(workers: number): Promise<void> {
  const { dataset } = options;
  const databaseUrl = serverUrl ? await ensureDatabase(serverUrl, `cg_bench_${dataset.name}`, { fresh: false }) : undefined;
  const gateway = await startGateway(`dataset-${dataset.name}`, join(workDir, `dataset-${dataset.name}`), databaseUrl, workers);
  let baseline: RunningChild | undefined;
  try {
    const fhir = gateway.surfaces.get('fhir');
    if (!fhir) {
      context.skipped.push({ scenario: 'fhir', reason: 'the service started no FHIR surface' });
      return;
    }
    const existing = await existingSites(gateway.databaseUrl);
    const [main, writes] = await Promise.all([
      provisionSite(root, gateway.env, existing, 'bench-main', 'BENCHMAIN'),
      provisionSite(root, gateway.env, existing, 'bench-writes', 'BENCHWRITES'),
    ]);
    const others = await ensureSites(
      gateway.databaseUrl,
      existing,
      Array.from({ length: dataset.otherSites }, (_, i) => ({ name: `bench-other-${i + 1}`, aeTitle: `BENCHOTHER${i + 1}` })),
    );
    progress(`data set ${dataset.name}: ${dataset.patients} patients, ${dataset.patients * dataset.observationsPerPatient} observations, ${dataset.otherSites} other sites (cached when already loaded)`);
    const loaded = await loadSites(gateway.databaseUrl, [
      { siteId: main.id, patients: dataset.patients, observationsPerPatient: dataset.observationsPerPatient },
      ...others.map((site) => ({ siteId: site.id, patients: dataset.otherSitePatients, observationsPerPatient: dataset.observationsPerPatient })),
    ]);
    progress(loaded.loaded > 0 ? `loaded ${loaded.loaded} resources in ${loaded.seconds.toFixed(0)} s` : 'data set already loaded');
    // The write site starts every bench run with the same patients and nothing else.
    const client = new pg.Client({ connectionString: gateway.databaseUrl });
    await client.connect();
    try {
      await ensureBenchSchema(client);
      await clearSite(client, writes.id);
      await client.query('TRUNCATE bench.baseline_resource');
    } finally {
      await client.end();
    }
    await loadSites(gateway.databaseUrl, [{ siteId: writes.id, patients: writePatients, observationsPerPatient: 0 }]);
    baseline = await startChild({
      command: process.execPath,
      args: ['bench/baselines/http-baseline.ts'],
      cwd: root,
      env: { ...process.env, BENCH_DATABASE_URL: gateway.databaseUrl, BENCH_SITE_ID: main.id, BENCH_BASELINE_PORT: String(baselinePorts.http), BENCH_BASELINE_WORKERS: String(workers) },
      logFile: join(logDir, `http-baseline-w${workers}.log`),
      ready: httpAnswers(`http://${benchHost}:${baselinePorts.http}/`),
    });
    if (options.scenarios.has('fhir')) {
      await runFhirScenarios(context, {
        gateway,
        fhirPort: fhir.port,
        baseline: { watched: { ...gatewayWatched({ pid: baseline.pid, ...(gateway.postgresPid !== undefined ? { postgresPid: gateway.postgresPid } : {}) }) }, port: baselinePorts.http },
        main,
        writes,
        mainPatients: dataset.patients,
        writePatients,
        drain: () => drainSessions(gateway.databaseUrl),
      });
    }
    // The export is measured against COPY of the same rows, once: its ratio does not depend on the workers.
    if (workers === options.workers[0]) await runExportScenario(context, { gateway, fhirPort: fhir.port, main });
  } finally {
    await baseline?.stop();
    await gateway.stop();
  }
}

/** Waits (at most two minutes) until no session of the service is running a query. */
async function drainSessions(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND application_name = 'clinical-gateway' AND pid <> pg_backend_pid()",
      );
      if (rows[0]!.n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    progress('the service still has running queries after two minutes; going on');
  } finally {
    await client.end();
  }
}

/** A fresh service per group, so that one group's memory and files do not carry into the next. */
async function scratchPhase(group: 'mllp' | 'dicom' | 'query', workers: number): Promise<void> {
  const dataDir = join(workDir, `scratch-${group}`);
  rmSync(dataDir, { recursive: true, force: true });
  const databaseUrl = serverUrl ? await ensureDatabase(serverUrl, `cg_bench_scratch_${group}`, { fresh: true }) : undefined;
  const gateway = await startGateway(`scratch-${group}`, dataDir, databaseUrl, workers);
  const pool = new pg.Pool({ connectionString: gateway.databaseUrl, max: 2 });
  // An idle client losing its server (the service restarting it, an operator) must not end the bench.
  pool.on('error', () => {});
  try {
    const mllp = gateway.surfaces.get('mllp');
    if (group === 'mllp') {
      if (!mllp) context.skipped.push({ scenario: 'mllp', reason: 'the service started no MLLP listener' });
      else {
        await provisionMllpSite(root, gateway.env, 'bench-mllp', 'BENCHMLLP');
        const client = await pool.connect();
        try {
          await ensureBenchSchema(client);
        } finally {
          client.release();
        }
        const baseline = await startChild({
          command: process.execPath,
          args: ['bench/baselines/mllp-ack-server.ts'],
          cwd: root,
          env: { ...process.env, BENCH_BASELINE_PORT: String(baselinePorts.mllp) },
          logFile: join(logDir, `mllp-baseline-w${workers}.log`),
          ready: tcpAccepts(benchHost, baselinePorts.mllp),
        });
        let insertBaseline: RunningChild | undefined;
        try {
          insertBaseline = await startChild({
            command: process.execPath,
            args: ['bench/baselines/mllp-ack-server.ts'],
            cwd: root,
            env: { ...process.env, BENCH_BASELINE_PORT: String(baselinePorts.mllpInsert), BENCH_DATABASE_URL: gateway.databaseUrl, BENCH_BASELINE_WORKERS: String(workers) },
            logFile: join(logDir, `mllp-baseline-b-w${workers}.log`),
            ready: tcpAccepts(benchHost, baselinePorts.mllpInsert),
          });
          const postgres = gateway.postgresPid !== undefined ? { postgres: gateway.postgresPid } : {};
          await runMllpScenarios(context, {
            gateway: gatewayWatched(gateway),
            workers,
            mllpPort: mllp.port,
            baseline: { pid: baseline.pid, port: baselinePorts.mllp },
            insertBaseline: { watched: { roots: [insertBaseline.pid], ...postgres }, port: baselinePorts.mllpInsert },
          });
        } finally {
          await insertBaseline?.stop();
          await baseline.stop();
        }
      }
    }
    const dicom = gateway.surfaces.get('dicom');
    if (group === 'query') {
      if (!dicom) context.skipped.push({ scenario: 'dicom.find', reason: 'the service started no DICOM listener' });
      else if (ensureDicomTools().includes('dcmtk')) context.skipped.push({ scenario: 'dicom.find', reason: 'dcmtk is not installed (apt-get install dcmtk)' });
      else {
        const site = (await ensureSites(gateway.databaseUrl, [], [{ name: 'bench-query', aeTitle: 'BENCHQUERY' }]))[0]!;
        await runDicomQueryScenario(context, { gateway: gatewayWatched(gateway), dicomPort: dicom.port, pool, site });
      }
    }
    if (group === 'dicom') {
      const missing = ensureDicomTools();
      if (!dicom) context.skipped.push({ scenario: 'dicom', reason: 'the service started no DICOM listener' });
      else if (missing.includes('dcmtk')) context.skipped.push({ scenario: 'dicom', reason: 'dcmtk is not installed (apt-get install dcmtk)' });
      else {
        if (missing.includes('orthanc')) context.skipped.push({ scenario: 'dicom orthanc', reason: 'Orthanc is not installed (apt-get install orthanc)' });
        await runDicomScenarios(context, {
          gateway: gatewayWatched(gateway),
          workers,
          withStorescp: workers === options.workers[0],
          dicomPort: dicom.port,
          newSite: async (aeTitle) => (await ensureSites(gateway.databaseUrl, [], [{ name: `bench-dicom-${aeTitle}`, aeTitle }]))[0]!,
          countInstances: async (siteId) =>
            (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [siteId])).rows[0]!.n,
        });
        const dicomweb = gateway.surfaces.get('dicomweb');
        if (!dicomweb) context.skipped.push({ scenario: 'dicomweb', reason: 'the service started no DICOMweb origin' });
        else {
          const setsDir = join(workDir, 'dicom-sets');
          const site = await provisionSite(root, gateway.env, [], `bench-wado-${context.runTag}`, `BW${context.runTag.toUpperCase()}`);
          await runWadoScenarios(
            context,
            { gateway: gatewayWatched(gateway), dicomPort: dicom.port, dicomwebPort: dicomweb.port, site: { aeTitle: site.aeTitle, apiKey: site.apiKey }, workers },
            { small: await smallSet(setsDir, options.dicom.smallCount), large: await largeSet(setsDir, 'large', options.dicom.largeCount, options.dicom.largeFrames) },
          );
        }
      }
    }
  } finally {
    await pool.end();
    await gateway.stop();
    // The scratch service's DICOM files take gigabytes; nothing in them is needed afterwards.
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A phase that fails is reported as not measured; the others still run and the report is written. */
async function phase(name: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    const reason = `failed: ${(error as Error).message.split('\n')[0]}`;
    context.skipped.push({ scenario: name, reason });
    progress(`${name} ${reason}`);
  }
}

for (const group of ['fhir', 'mllp', 'dicom', 'query'] as const) {
  if (!options.scenarios.has(group) && !(group === 'fhir' && options.scenarios.has('fhir-export'))) continue;
  // The query scenario measures C-FIND's latency over a large index, not scaling: one worker count.
  for (const workers of group === 'query' ? options.workers.slice(0, 1) : options.workers) {
    await phase(`${group} (CG_WORKERS=${workers})`, () => (group === 'fhir' ? fhirPhase(workers) : scratchPhase(group, workers)));
  }
}

machine.loadAverage.end = loadAverageNow();
const measurements = context.series.filter((series) => series.size > 0).map((series) => series.toMeasurement());
const results: BenchResults = {
  mode: options.quick ? 'quick' : 'full',
  machine,
  launcher: options.launcher,
  database: serverUrl ? 'PostgreSQL from CG_DATABASE_URL (bench databases cg_bench_* on that server)' : 'embedded PostgreSQL 15 (the default)',
  dataset: {
    'patients (main site)': options.dataset.patients,
    'observations (main site)': options.dataset.patients * options.dataset.observationsPerPatient,
    'other sites': options.dataset.otherSites,
    'patients per other site': options.dataset.otherSitePatients,
    'observations per other site': options.dataset.otherSitePatients * options.dataset.observationsPerPatient,
  },
  runs: options.runs,
  settings: {
    httpSecondsPerRun: options.httpSeconds,
    concurrencies: options.concurrencies,
    mllpMessagesPerRun: options.mllpMessages,
    dicom: options.dicom,
    workers: options.workers,
    serviceLogLevel: options.logLevel,
    scenarios: [...options.scenarios],
    ...(Object.keys(measuredSettings).length > 0 ? { gatewaySettings: measuredSettings } : {}),
  },
  measurements,
  targets: computeTargets(measurements, { fullDataset: !options.quick, workers: options.workers }),
  skipped: context.skipped,
  durationSeconds: (performance.now() - started) / 1000,
};
const written = writeResults(join(root, 'bench', 'results'), results, options.output);
process.stdout.write(`\n${results.targets.map((t) => `${t.met ? 'met    ' : 'MISSED '} ${t.name}: ${t.value ?? '–'} ${t.unit}${t.ratio !== null ? ` (${t.ratio}x)` : ''} [${t.target}]`).join('\n')}\n`);
process.stdout.write(`\nwritten ${written.json} and ${written.markdown} in ${Math.round(results.durationSeconds)} s\n`);
