import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { check, type ScenarioReport } from '../harness/scenario.ts';
import type { FuzzWorkerResult } from './fuzz-worker.ts';
import { fuzzTargets } from './targets.ts';

const workerPath = join(import.meta.dirname, 'fuzz-worker.ts');

function runWorker(index: number, count: number, seed: number, crashDir: string, deadlineMs: number): Promise<FuzzWorkerResult | { target: string; failure: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--stack-size=984', workerPath, String(index), String(count), String(seed), crashDir, String(deadlineMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let lastProgress = 'none';
    let stderrTail = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      const progress = /progress (\d+)/g;
      for (let m = progress.exec(text); m; m = progress.exec(text)) lastProgress = m[1]!;
      stderrTail = (stderrTail + text).slice(-600);
    });
    // A worker that overruns its own deadline by a minute is stuck inside one input: a hang.
    const killer = setTimeout(() => child.kill('SIGKILL'), deadlineMs + 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      const line = stdout.trim().split('\n').at(-1);
      try {
        resolve(JSON.parse(line!) as FuzzWorkerResult);
      } catch {
        resolve({ target: fuzzTargets[index]!.name, failure: `worker ended (code ${code}, signal ${signal}) after input ${lastProgress}: ${stderrTail.replace(/\s+/g, ' ').slice(-300)}` });
      }
    });
  });
}

/**
 * Issue 9 point 5, volume half: at least 100,000 mutated inputs per parser, in-process, two
 * parsers at a time. Zero crashes (an exception that is not the parser's way of refusing input,
 * or a dead worker), zero inputs taking over 1 s.
 */
export async function fuzzEveryParser(report: ScenarioReport, options: { perParser: number; seed: number; crashDir: string; deadlineMs: number; log(m: string): void }): Promise<void> {
  const queue = fuzzTargets.map((_, index) => index);
  const results: (FuzzWorkerResult | { target: string; failure: string })[] = [];
  const lanes = Array.from({ length: 2 }, async () => {
    for (let index = queue.shift(); index !== undefined; index = queue.shift()) {
      const result = await runWorker(index, options.perParser, options.seed + index, options.crashDir, options.deadlineMs);
      options.log(`fuzz ${result.target}: ${'failure' in result ? result.failure : `${result.inputs} inputs, ${result.crashes} crashes, max ${result.maxMs.toFixed(0)} ms`}`);
      results.push(result);
    }
  });
  await Promise.all(lanes);
  for (const target of fuzzTargets) {
    const result = results.find((r) => r.target === target.name)!;
    if ('failure' in result) {
      check(report, `fuzz ${target.name}: no crash, no hang`, false, result.failure);
      continue;
    }
    check(
      report,
      `fuzz ${target.name}: >= ${options.perParser} inputs, zero crashes, zero inputs over 1 s`,
      result.inputs >= options.perParser && result.crashes === 0 && result.slowOver1s === 0,
      `${result.inputs} inputs (${result.refused} refused as invalid), ${result.crashes} crashes${result.crashSamples.length ? `: ${result.crashSamples.join(' | ')}` : ''}, ${result.slowOver1s} over 1 s, slowest ${result.maxMs.toFixed(1)} ms, seed ${options.seed + fuzzTargets.indexOf(target)}`,
    );
    report.tallies.push({ item: `fuzz inputs: ${target.name}`, sent: result.inputs, acknowledged: result.inputs - result.crashes, found: result.inputs - result.crashes, lost: result.crashes, duplicated: 0 });
  }
}
