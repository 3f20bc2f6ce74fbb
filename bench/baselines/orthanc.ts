import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startChild, type RunningChild } from '../lib/child.ts';
import { inPrivateNetwork, runIn } from '../lib/netns.ts';
import { baselinePorts, benchHost } from '../lib/ports.ts';

/**
 * Orthanc (Debian package `orthanc`) as the DICOM baseline, started privately (its own network
 * namespace, loopback only) with fresh storage for every run and no plugins (the DICOMweb plugin
 * for the WADO-RS baseline). SyncStorageArea
 * (on by default since Orthanc 1.9.0) flushes each file before the success status, as the
 * gateway's fsync does.
 */
export const orthancAet = 'ORTHANC';

export interface RunningOrthanc extends RunningChild {
  countInstances(): Promise<number>;
}

/** The DICOMweb plugin of the Debian package orthanc-dicomweb, for the WADO-RS baseline. */
const dicomwebPlugin = '/usr/share/orthanc/plugins/libOrthancDicomWeb.so';

export async function startOrthanc(workDir: string, options: { dicomweb?: boolean } = {}): Promise<RunningOrthanc> {
  const dir = join(workDir, 'orthanc');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const config = join(dir, 'orthanc.json');
  writeFileSync(
    config,
    JSON.stringify({
      Name: 'bench',
      StorageDirectory: join(dir, 'storage'),
      IndexDirectory: join(dir, 'storage'),
      StorageCompression: false,
      SyncStorageArea: true,
      Plugins: options.dicomweb ? [dicomwebPlugin] : [],
      ...(options.dicomweb ? { DicomWeb: { Enable: true, Root: '/dicom-web/' } } : {}),
      HttpServerEnabled: true,
      HttpPort: baselinePorts.orthancHttp,
      RemoteAccessAllowed: false,
      AuthenticationEnabled: false,
      DicomServerEnabled: true,
      DicomAet: orthancAet,
      DicomPort: baselinePorts.orthancDicom,
      DicomCheckCalledAet: true,
      DicomModalities: {},
      DicomAlwaysAllowEcho: true,
      DicomAlwaysAllowStore: true,
      SaveJobs: false,
      OverwriteInstances: false,
    }),
  );
  const statistics = `http://${benchHost}:${baselinePorts.orthancHttp}/statistics`;
  const spec = inPrivateNetwork('Orthanc', [`--logdir=${dir}`, config]);
  let pid: number | undefined;
  const child = await startChild({
    command: spec.command,
    args: spec.args,
    env: { ...process.env, TCP_NODELAY: '1' },
    logFile: join(dir, 'stdout.log'),
    onSpawn: (spawned) => (pid = spawned),
    ready: async () => (await runIn(pid, 'curl', ['-sf', statistics])).includes('CountInstances'),
  });
  return {
    ...child,
    async countInstances() {
      const body = JSON.parse(await runIn(child.pid, 'curl', ['-sf', statistics])) as { CountInstances: number };
      return body.CountInstances;
    },
  };
}
