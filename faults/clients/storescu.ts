import { spawn } from 'node:child_process';

/** What DCMTK's storescu reported for one file of a batch. */
export interface StoreOutcome {
  path: string;
  /** The status text of the C-STORE response ("Success", "Refused: OutOfResources", ...), or undefined when none came. */
  status?: string;
  acknowledged: boolean;
}

export interface StorescuResult {
  outcomes: StoreOutcome[];
  associationAccepted: boolean;
  associationRejected: boolean;
  /** "Rejected Transient" / "Rejected Permanent" when the association was refused (PS3.8 9.3.4). */
  rejection?: string;
  exitCode: number | null;
  output: string;
}

/**
 * Sends files over one association with DCMTK's storescu (an independent, widely deployed SCU)
 * and reads, from its verbose log, which file got which C-STORE response (PS3.7 9.1.1). A file is
 * acknowledged only by a Success or Warning status (PS3.4 B.2.3); a file with no response (killed
 * service, aborted association) is not.
 */
export function storescu(options: { port: number; calledAe: string; callingAe?: string; files: string[]; timeoutSeconds?: number }): Promise<StorescuResult> {
  const timeout = String(options.timeoutSeconds ?? 15);
  const args = ['-v', '-aet', options.callingAe ?? 'FAULTSSCU', '-aec', options.calledAe, '-to', timeout, '-ta', timeout, '-td', timeout, '127.0.0.1', String(options.port), ...options.files];
  return new Promise((resolve) => {
    const child = spawn('storescu', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('close', (exitCode) => resolve({ ...parseStorescuLog(output, options.files), exitCode, output }));
  });
}

export function parseStorescuLog(output: string, files: string[]): Omit<StorescuResult, 'exitCode' | 'output'> {
  const rejection = /Result:\s*(Rejected \w+)/i.exec(output)?.[1];
  const statusByFile = new Map<string, string>();
  let current: string | undefined;
  for (const line of output.split('\n')) {
    const sending = /Sending file: (.+)$/.exec(line);
    if (sending) {
      current = sending[1]!.trim();
      continue;
    }
    const response = /Received Store Response \((.+)\)\s*$/.exec(line);
    if (response && current) {
      statusByFile.set(current, response[1]!);
      current = undefined;
    }
  }
  const outcomes = files.map((path) => {
    const status = statusByFile.get(path);
    return { path, ...(status ? { status } : {}), acknowledged: status !== undefined && /^(Success|Warning)/i.test(status) };
  });
  return {
    outcomes,
    associationAccepted: /Association Accepted/i.test(output),
    associationRejected: /Association Rejected/i.test(output),
    ...(rejection ? { rejection } : {}),
  };
}
