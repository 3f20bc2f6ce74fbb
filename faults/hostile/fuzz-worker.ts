// One parser's fuzz campaign in a process of its own, so that a crash of the runtime (stack
// overflow, out of memory, an endless loop) is seen by the parent instead of ending the campaign.
//   node faults/hostile/fuzz-worker.ts <target index> <inputs> <seed> <crash dir>
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { mutate, Random } from './mutate.ts';
import { fuzzTargets } from './targets.ts';

export interface FuzzWorkerResult {
  target: string;
  inputs: number;
  refused: number;
  crashes: number;
  crashSamples: string[];
  slowOver1s: number;
  maxMs: number;
  totalMs: number;
}

// dcmjs reports every odd VR it meets through its logger; a fuzz campaign would print millions of lines.
const dcmjsLog = (createRequire(import.meta.url)('dcmjs') as { log: { setLevel(level: string): void; getLogger(name: string): { setLevel(level: string): void } } }).log;
dcmjsLog.setLevel('silent');
dcmjsLog.getLogger('validation.dcmjs').setLevel('silent');
const [indexText, countText, seedText, crashDir, deadlineText] = process.argv.slice(2);
const target = fuzzTargets[Number(indexText)]!;
const count = Number(countText);
const seed = Number(seedText);
const feed = await target.setup();
const seeds = target.seeds();
const random = new Random(seed);
// The first call loads what the parser needs once (FHIR structure definitions, code tables): it is
// made before timing starts, so that the 1 s hang threshold measures parsing only.
try {
  await feed(seeds[0]!, new Random(seed));
} catch {
  // a refusal of the seed is judged below like any other input
}
const deadline = Date.now() + Number(deadlineText ?? '600000');
const result: FuzzWorkerResult = { target: target.name, inputs: 0, refused: 0, crashes: 0, crashSamples: [], slowOver1s: 0, maxMs: 0, totalMs: 0 };
const started = performance.now();
for (let i = 0; i < count && Date.now() < deadline; i++) {
  // One in ten inputs is a seed as it is, so every parser also sees the fixtures unmutated.
  const input = i % 10 === 0 ? seeds[(i / 10) % seeds.length]! : mutate(random, seeds, target.tokens);
  const t0 = performance.now();
  try {
    await feed(input, random);
  } catch (error) {
    if (target.acceptable(error)) result.refused++;
    else {
      result.crashes++;
      if (result.crashSamples.length < 5) {
        mkdirSync(crashDir!, { recursive: true });
        const file = join(crashDir!, `${target.name.split(' ')[0]!.toLowerCase()}-${seed}-${i}.bin`);
        writeFileSync(file, input);
        result.crashSamples.push(`${(error as Error)?.name}: ${String((error as Error)?.message ?? error).slice(0, 160)} (input ${i}, ${file})`);
      }
    }
  }
  const ms = performance.now() - t0;
  if (ms > result.maxMs) result.maxMs = ms;
  if (ms > 1_000) result.slowOver1s++;
  result.inputs++;
  if (i % 5_000 === 0) process.stderr.write(`progress ${i}\n`);
}
result.totalMs = performance.now() - started;
process.stdout.write(`${JSON.stringify(result)}\n`);
