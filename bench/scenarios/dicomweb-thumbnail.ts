import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { progress } from '../lib/log.ts';
import { monitored, type Watched } from '../lib/process-monitor.ts';
import type { DicomSet } from '../load/dicom-data.ts';
import { Series } from '../report/series.ts';
import type { BenchContext } from './context.ts';

const run = promisify(execFile);

/**
 * Thumbnail rendering (issue 23 point 6): a JPEG thumbnail (256 x 256 at most, min-max VOI as the
 * synthetic sets carry no window) of every instance of a set the gateway holds, 4 at a time,
 * from the DICOMweb origin's /thumbnail; the baseline in the same run is dcmtk's dcmj2pnm
 * writing the same JPEG thumbnail of the same files (one process a file, 4 at a time). Thumbnails
 * a second for both; CPU ms a thumbnail for the gateway (its whole process tree, render threads
 * included) and for dcmj2pnm (the children's user + system time, from the shell's `times`).
 */
export interface ThumbnailTargets {
  /** The service's process tree, its embedded PostgreSQL (a child when CG_DATABASE_URL is unset) apart. */
  gateway: Watched;
  /** http://host:port of the DICOMweb origin. */
  base: string;
  headers: string[];
  workers: number;
}

const concurrency = 4;
const minimumThumbnails = 40;

export async function runThumbnailScenario(context: BenchContext, targets: ThumbnailTargets, set: DicomSet, name: string, sopClassUid: string): Promise<void> {
  const scenario = `dicomweb.thumbnail.${name}`;
  const gateway = new Series(scenario, 'gateway', concurrency, 'thumbnails/s', targets.workers);
  const dcmtk = new Series(scenario, 'dcmj2pnm', concurrency, 'thumbnails/s', targets.workers);
  gateway.note('GET .../instances/{uid}/thumbnail, Accept: image/jpeg (quality 90, at most 256 x 256), curl 4 at a time');
  dcmtk.note('dcmj2pnm +oj +Jq 90 +Wm +Sxv 256 (at most 256 wide) on the same files, one process a file, 4 at a time');
  context.series.push(gateway, dcmtk);
  const urls = (await instanceUrls(targets, sopClassUid)).map((path) => `${targets.base}${path}/thumbnail`);
  if (urls.length !== set.files.length) progress(`${scenario}: the gateway lists ${urls.length} instances of ${set.files.length}`);
  // A set of a few large instances is gone through several times, so that a rate is measured.
  const passes = Math.max(1, Math.ceil(minimumThumbnails / Math.max(1, urls.length)));
  const repeated = (list: string[]) => Array.from({ length: passes }, () => list).flat();
  const urlList = join(context.logDir, `${scenario}.urls`);
  writeFileSync(urlList, repeated(urls).join('\n') + '\n');
  const fileList = join(context.logDir, `${scenario}.files`);
  writeFileSync(fileList, repeated(set.files).join('\n') + '\n');
  if (passes > 1) for (const series of [gateway, dcmtk]) series.note(`each of the ${set.files.length} instances ${passes} times a run`);
  for (let round = 1; round <= context.options.runs; round++) {
    const { result, usage } = await monitored(targets.gateway, () => fetchAll(urlList, targets.headers));
    gateway.add({ throughput: (passes * urls.length) / result.seconds, failed: result.failed }, usage);
    const baseline = await dcmj2pnmAll(fileList);
    dcmtk.add(
      { throughput: (passes * set.files.length) / baseline.seconds, failed: baseline.failed },
      { peakRssMb: Number.NaN, peakPssMb: Number.NaN, cpuSeconds: baseline.cpuSeconds, cpuPercent: (100 * baseline.cpuSeconds) / baseline.seconds },
    );
  }
  progress(`${scenario}: ${[gateway, dcmtk].map((series) => {
    const m = series.toMeasurement();
    return `${series.system} ${m.throughput.median.toFixed(1)} thumbnails/s, ${m.cpuMsPerItem?.system.median.toFixed(1)} CPU ms each`;
  }).join('; ')}`);
}

/** The instance paths of the gateway's site with this SOP class (QIDO-RS, a page of 1,000 at a time). */
async function instanceUrls(targets: ThumbnailTargets, sopClassUid: string): Promise<string[]> {
  const paths: string[] = [];
  for (let offset = 0; ; offset += 1000) {
    const url = `${targets.base}/instances?SOPClassUID=${sopClassUid}&limit=1000&offset=${offset}`;
    const { stdout } = await run('curl', ['-sf', ...targets.headers.flatMap((header) => ['-H', header]), url], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const page = (stdout.trim() === '' ? [] : JSON.parse(stdout)) as Record<string, { Value?: string[] }>[];
    for (const instance of page) {
      const uid = (tag: string) => instance[tag]!.Value![0]!;
      paths.push(`/studies/${uid('0020000D')}/series/${uid('0020000E')}/instances/${uid('00080018')}`);
    }
    if (page.length < 1000) return paths;
  }
}

async function fetchAll(list: string, headers: string[]): Promise<{ seconds: number; failed: number }> {
  const curl = ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}\\n', '-H', 'Accept: image/jpeg', ...headers.flatMap((header) => ['-H', header])];
  const started = performance.now();
  const { stdout } = await run('xargs', ['-P', String(concurrency), '-n', '1', '-a', list, ...curl], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
  return { seconds: (performance.now() - started) / 1000, failed: stdout.trim().split('\n').filter((status) => status !== '200').length };
}

/** dcmj2pnm over every file, 4 at a time; the shell's `times` gives its children's CPU time. */
async function dcmj2pnmAll(list: string): Promise<{ seconds: number; failed: number; cpuSeconds: number }> {
  const script = `xargs -P ${concurrency} -n 1 -a "$1" sh -c 'dcmj2pnm +oj +Jq 90 +Wm +Sxv 256 "$0" /dev/null || echo failed'; times`;
  const started = performance.now();
  const { stdout } = await run('bash', ['-c', script, 'dcmj2pnm-all', list], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
  const seconds = (performance.now() - started) / 1000;
  const lines = stdout.trim().split('\n');
  // `times` prints the shell's own user and system time, then its children's: "0m1.234s 0m0.567s".
  const children = lines.at(-1)!.split(' ').map((value) => {
    const match = /^(\d+)m([\d.]+)s$/.exec(value);
    return match ? Number(match[1]) * 60 + Number(match[2]) : Number.NaN;
  });
  return { seconds, failed: lines.filter((line) => line === 'failed').length, cpuSeconds: children.reduce((sum, value) => sum + value, 0) };
}
