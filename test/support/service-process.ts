import { spawn, type ChildProcess } from 'node:child_process';
import { serviceNodeOptions } from '../../src/cli/service-runtime.ts';
import { cliPath } from './cli.ts';

/** Every surface enabled, each on a port the system picks (read back from the logs). */
export const everySurfaceOnAFreePort: NodeJS.ProcessEnv = {
  CG_FHIR_PORT: '0',
  CG_HL7_PORT: '0',
  CG_MPPS_PORT: '0',
  CG_CONNECTIVITY_PORT: '0',
  CG_ADMIN_PORT: '0',
  CG_DICOMWEB_PORT: '0',
  CG_MLLP_PORT: '0',
  CG_DICOM_PORT: '0',
};

export interface ServiceProcess {
  child: ChildProcess;
  ports: Record<string, number>;
  logs: string[];
  /** Sends SIGTERM and resolves with the exit status. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `clinical-gateway serve` as a child process, as an operator runs it; resolves once every
 * surface has logged where it listens (ports may be 0: the real ones are read from the logs).
 */
export async function startServiceProcess(env: NodeJS.ProcessEnv, expectedSurfaces: number): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...serviceNodeOptions, cliPath, 'serve'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, CG_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const ports: Record<string, number> = {};
  let buffered = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start: ${logs.slice(-5).join('\n')}`)), 120_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        logs.push(line);
        try {
          const entry = JSON.parse(line) as { msg?: string; surface?: string; port?: number };
          if (entry.msg?.includes(' listening on ') && entry.surface && entry.port !== undefined) {
            ports[entry.surface] = entry.port;
            if (Object.keys(ports).length === expectedSurfaces) {
              clearTimeout(timer);
              resolve();
            }
          }
        } catch {
          // not JSON
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}) during start-up: ${logs.slice(-10).join('\n')}`));
    });
  });
  return {
    child,
    ports,
    logs,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}
