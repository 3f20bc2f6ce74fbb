import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { orthancAet, startOrthanc } from '../baselines/orthanc.ts';
import { progress } from '../lib/log.ts';
import { inNetworkOf, privateNetworkAvailable } from '../lib/netns.ts';
import { monitored, type Watched } from '../lib/process-monitor.ts';
import { baselinePorts, benchHost } from '../lib/ports.ts';
import type { DicomSet } from '../load/dicom-data.ts';
import { runStorescu } from '../load/storescu.ts';
import { Series } from '../report/series.ts';
import type { BenchContext } from './context.ts';
import { runThumbnailScenario } from './dicomweb-thumbnail.ts';

const run = promisify(execFile);

/**
 * WADO-RS retrieval (issue 23 point 6): every study of the small set (about 130 KB an instance)
 * and of the large set (10-30 MB) retrieved as multipart/related application/dicom, 4 studies at
 * a time, from the gateway's DICOMweb origin and from Orthanc's DICOMweb plugin holding the same
 * files, in turn. Both are read by the same client (curl, in Orthanc's network namespace for
 * Orthanc), which discards the bytes and reports their count. Each set, once held, also has its
 * thumbnails rendered (dicomweb-thumbnail.ts).
 */
export interface WadoTargets {
  /** The service's process tree, its PostgreSQL (a child of the service when embedded) measured apart. */
  gateway: Watched;
  dicomPort: number;
  dicomwebPort: number;
  /** A site with an API key, fresh for this phase. */
  site: { aeTitle: string; apiKey: string };
  /** The service's CG_WORKERS in this phase (the measurements are labelled with it). */
  workers: number;
}

const concurrency = 4;
/** The SOP class of each set's instances (bench/load/dicom-data.ts): CT, and multi-frame grayscale word SC. */
const sopClassOf = { small: '1.2.840.10008.5.1.4.1.1.2', large: '1.2.840.10008.5.1.4.1.1.7.3' } as const;
const accept = 'Accept: multipart/related; type="application/dicom"';

export async function runWadoScenarios(context: BenchContext, targets: WadoTargets, sets: { small: DicomSet; large: DicomSet }): Promise<void> {
  const store = (port: number, calledAet: string, set: DicomSet, label: string, networkOf?: number) =>
    runStorescu({
      host: benchHost, port, calledAet, callingAet: 'BENCHSCU', files: set.files, associations: 4,
      logDir: context.logDir, label, timeoutSeconds: 600, ...(networkOf !== undefined ? { networkOf } : {}),
    });
  const gatewayBase = `http://${benchHost}:${targets.dicomwebPort}`;
  const gatewayHeaders = [`X-API-Key: ${targets.site.apiKey}`];
  for (const [name, set] of [['small', sets.small], ['large', sets.large]] as const) {
    const scenario = `dicomweb.wado.${name}`;
    const gateway = new Series(scenario, 'gateway', concurrency, 'inst/s', targets.workers);
    const orthancSeries = new Series(scenario, 'orthanc', concurrency, 'inst/s', targets.workers);
    context.series.push(gateway, orthancSeries);
    // Both sets go to the same site: the large set's retrieval takes only its own studies (Orthanc,
    // fresh for each set, holds only that set's).
    const heldBefore = new Set(await studyUids(`${gatewayBase}/studies?limit=1000`, gatewayHeaders));
    await store(targets.dicomPort, targets.site.aeTitle, set, `${scenario}-gateway-store`);
    const gatewayStudies = (await studyUids(`${gatewayBase}/studies?limit=1000`, gatewayHeaders)).filter((uid) => !heldBefore.has(uid));
    let orthanc: Awaited<ReturnType<typeof startOrthanc>> | undefined;
    if (privateNetworkAvailable()) {
      orthanc = await startOrthanc(context.workDir, { dicomweb: true });
      await store(baselinePorts.orthancDicom, orthancAet, set, `${scenario}-orthanc-store`, orthanc.pid);
    } else {
      context.skipped.push({ scenario: `${scenario} orthanc`, reason: 'no private network namespace for Orthanc' });
    }
    try {
      const orthancBase = `http://${benchHost}:${baselinePorts.orthancHttp}/dicom-web`;
      const orthancStudies = orthanc ? await studyUids(`${orthancBase}/studies?limit=1000`, [], orthanc.pid) : [];
      if (orthanc && orthancStudies.length !== gatewayStudies.length) throw new Error(`${scenario}: the gateway holds ${gatewayStudies.length} studies of the set, Orthanc ${orthancStudies.length}`);
      for (let round = 1; round <= context.options.runs; round++) {
        const { result, usage } = await monitored(targets.gateway, () => retrieve(context, `${scenario}-gateway-r${round}`, gatewayStudies.map((uid) => `${gatewayBase}/studies/${uid}`), gatewayHeaders));
        gateway.add({ throughput: set.files.length / result.seconds, mbPerSecond: result.bytes / 1024 / 1024 / result.seconds, failed: result.failed }, usage);
        if (orthanc) {
          const { result: other, usage: otherUsage } = await monitored(orthanc.pid, () =>
            retrieve(context, `${scenario}-orthanc-r${round}`, orthancStudies.map((uid) => `${orthancBase}/studies/${uid}`), [], orthanc!.pid),
          );
          orthancSeries.add({ throughput: set.files.length / other.seconds, mbPerSecond: other.bytes / 1024 / 1024 / other.seconds, failed: other.failed }, otherUsage);
        }
      }
    } finally {
      await orthanc?.stop();
    }
    await runThumbnailScenario(context, { gateway: targets.gateway, base: gatewayBase, headers: gatewayHeaders, workers: targets.workers }, set, name, sopClassOf[name]);
    progress(`${scenario}: ${[gateway, orthancSeries].filter((series) => series.size > 0).map((series) => {
      const m = series.toMeasurement();
      return `${series.system} ${m.throughput.median.toFixed(1)} inst/s ${m.mbPerSecond?.median.toFixed(1)} MB/s`;
    }).join('; ')}`);
  }
}

async function studyUids(url: string, headers: string[], networkOf?: number): Promise<string[]> {
  const spec = inNetworkOf(networkOf, 'curl', ['-sf', ...headers.flatMap((header) => ['-H', header]), url]);
  const { stdout } = await run(spec.command, spec.args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return (JSON.parse(stdout) as Record<string, { Value?: string[] }>[]).map((study) => study['0020000D']!.Value![0]!);
}

/** Every URL fetched once, `concurrency` at a time, by curl; the answers' bytes counted and dropped. */
async function retrieve(context: BenchContext, label: string, urls: string[], headers: string[], networkOf?: number): Promise<{ seconds: number; bytes: number; failed: number }> {
  const list = join(context.logDir, `${label}.urls`);
  writeFileSync(list, urls.join('\n') + '\n');
  const curl = ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download}\\n', '-H', accept, ...headers.flatMap((header) => ['-H', header])];
  const spec = inNetworkOf(networkOf, 'xargs', ['-P', String(concurrency), '-n', '1', '-a', list, ...curl]);
  const started = performance.now();
  const { stdout } = await run(spec.command, spec.args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
  const seconds = (performance.now() - started) / 1000;
  let bytes = 0;
  let failed = 0;
  for (const line of stdout.trim().split('\n')) {
    const [status, size] = line.split(' ');
    if (status === '200') bytes += Number(size);
    else failed++;
  }
  return { seconds, bytes, failed };
}
