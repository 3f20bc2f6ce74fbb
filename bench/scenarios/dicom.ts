import { execFileSync } from 'node:child_process';
import { orthancAet, startOrthanc } from '../baselines/orthanc.ts';
import { startStorescp, storescpAet } from '../baselines/storescp.ts';
import { progress } from '../lib/log.ts';
import { privateNetworkAvailable } from '../lib/netns.ts';
import { monitored, type ProcessUsage, type Watched } from '../lib/process-monitor.ts';
import { baselinePorts, benchHost } from '../lib/ports.ts';
import { largeSet, smallSet, type DicomSet } from '../load/dicom-data.ts';
import { runStorescu, type StoreResult } from '../load/storescu.ts';
import { Series } from '../report/series.ts';
import type { BenchContext } from './context.ts';

/**
 * DICOM C-STORE (issue 8): the small set (about 130 KB an instance) and the large set (10-30 MB)
 * with 1 and 4 associations, sent by storescu to the gateway, to Orthanc and to storescp, run by
 * run in turn; then one instance of about 300 MB to each, for peak memory. Every gateway run goes
 * to a site of its own (a new called AE title), so no run is answered from an earlier run's copy.
 */
export interface DicomTargets {
  gateway: Watched;
  workers: number;
  dicomPort: number;
  /** A fresh site for one run: its AE title. */
  newSite: (aeTitle: string) => Promise<{ id: string; aeTitle: string }>;
  countInstances: (siteId: string) => Promise<number>;
  /** storescp is a reference, not a target's baseline: measured in the first worker pass only. */
  withStorescp: boolean;
}

interface Receiver {
  system: string;
  run: (set: DicomSet, associations: number, label: string) => Promise<{ result: StoreResult; usage: ProcessUsage; stored: number }>;
}

export async function runDicomScenarios(context: BenchContext, targets: DicomTargets): Promise<void> {
  const { options } = context;
  const setsDir = `${context.workDir}/dicom-sets`;
  const scratch = `${context.workDir}/dicom-scratch`;
  const small = await smallSet(setsDir, options.dicom.smallCount);
  const large = await largeSet(setsDir, 'large', options.dicom.largeCount, options.dicom.largeFrames);
  const huge = await largeSet(setsDir, 'huge', 1, [options.dicom.hugeFrames]);
  const store = (port: number, calledAet: string, set: DicomSet, associations: number, label: string, networkOf?: number) =>
    runStorescu({
      host: benchHost, port, calledAet, callingAet: 'BENCHSCU', files: set.files, associations,
      logDir: context.logDir, label, timeoutSeconds: 600, ...(networkOf !== undefined ? { networkOf } : {}),
    });
  let siteCounter = 0;
  const receivers: Receiver[] = [
    {
      system: 'gateway',
      run: async (set, associations, label) => {
        const site = await targets.newSite(`BD${context.runTag.slice(-6).toUpperCase()}${String(++siteCounter).padStart(3, '0')}`);
        const { result, usage } = await monitored(targets.gateway, () => store(targets.dicomPort, site.aeTitle, set, associations, label));
        return { result, usage, stored: await targets.countInstances(site.id) };
      },
    },
  ];
  if (privateNetworkAvailable()) {
    receivers.push(
      {
        system: 'orthanc',
        run: async (set, associations, label) => {
          const orthanc = await startOrthanc(scratch);
          try {
            const { result, usage } = await monitored(orthanc.pid, () => store(baselinePorts.orthancDicom, orthancAet, set, associations, label, orthanc.pid));
            return { result, usage, stored: await orthanc.countInstances() };
          } finally {
            await orthanc.stop();
          }
        },
      },
    );
    if (targets.withStorescp) {
      receivers.push(
        {
          system: 'storescp',
          run: async (set, associations, label) => {
            const storescp = await startStorescp(scratch);
            try {
              const { result, usage } = await monitored(storescp.pid, () => store(baselinePorts.storescp, storescpAet, set, associations, label, storescp.pid));
              return { result, usage, stored: await storescp.countInstances() };
            } finally {
              await storescp.stop();
            }
          },
        },
      );
    }
  } else {
    context.skipped.push({ scenario: 'dicom baselines', reason: 'no private network namespace (unshare -n needs root): Orthanc and storescp cannot bind loopback only' });
  }

  const plan: { scenario: string; set: DicomSet; associations: number[]; runs: number }[] = [
    { scenario: 'dicom.small', set: small, associations: options.dicom.associations, runs: options.runs },
    { scenario: 'dicom.large', set: large, associations: options.dicom.associations, runs: options.runs },
    { scenario: 'dicom.huge', set: huge, associations: [1], runs: 1 },
  ];
  for (const { scenario, set, associations, runs } of plan) {
    for (const count of associations) {
      const all = receivers.map((receiver) => ({ receiver, series: new Series(scenario, receiver.system, count, 'inst/s', targets.workers) }));
      context.series.push(...all.map((entry) => entry.series));
      for (let run = 1; run <= runs; run++) {
        for (const { receiver, series } of all) {
          const label = `${scenario}-${receiver.system}-a${count}-r${run}-w${targets.workers}`;
          try {
            // Dirty pages of the previous run must not be written back during this one.
            execFileSync('sync');
            const { result, usage, stored } = await receiver.run(set, count, label);
            const mb = set.bytes / 1024 / 1024;
            series.add({ throughput: result.succeeded / result.seconds, mbPerSecond: (mb * result.succeeded) / set.files.length / result.seconds, failed: result.failed }, usage);
            if (stored !== set.files.length) series.note(`run ${run}: ${stored} of ${set.files.length} instances stored`);
          } catch (error) {
            series.note(`run ${run} failed: ${(error as Error).message.split('\n')[0]}`);
          }
        }
      }
      progress(
        `${scenario} a=${count} workers=${targets.workers}: ${all.map(({ series }) => {
          const m = series.toMeasurement();
          return `${series.system} ${m.throughput.median.toFixed(1)} inst/s ${m.mbPerSecond?.median.toFixed(1)} MB/s ${m.peakRssMb.median.toFixed(0)} MB`;
        }).join('; ')}`,
      );
    }
  }
}
