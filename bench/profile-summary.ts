import { readFileSync } from 'node:fs';

/**
 * Summarises a V8 .cpuprofile (node --cpu-prof) by self time per function and per package or
 * source file: `node bench/profile-summary.ts FILE [TOP] [FROM_S TO_S]`. Used to find where the
 * service spends its CPU in a scenario that misses its target; FROM_S and TO_S (seconds since the
 * profile started) keep only the samples of one scenario's window of a whole-run profile.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const [file, topArg, fromArg, toArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/profile-summary.ts FILE.cpuprofile [TOP]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const top = Number(topArg ?? 25);
const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
const fromMicros = fromArg === undefined ? -Infinity : Number(fromArg) * 1e6;
const toMicros = toArg === undefined ? Infinity : Number(toArg) * 1e6;
const selfMicros = new Map<number, number>();
let elapsedMicros = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  elapsedMicros += delta;
  if (elapsedMicros >= fromMicros && elapsedMicros < toMicros) selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
});
const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);

function where(url: string): string {
  if (url === '') return '(native/V8)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1) : url;
}

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const node = byNode.get(id)!;
  const place = where(node.callFrame.url);
  const name = `${node.callFrame.functionName || '(anonymous)'} ${place}:${node.callFrame.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
}
const print = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((100 * micros) / total).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}\n`);
  }
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s sampled\n`);
print('self time by package / source file', byPlace);
print('self time by function', byFunction);
