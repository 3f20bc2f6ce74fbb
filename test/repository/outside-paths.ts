import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, resolve, sep } from 'node:path';

/**
 * Finds code that reaches outside the repository: a relative path that climbs above its root (to
 * a folder of samples beside the checkout, say) or an absolute path into a development folder. A
 * fresh clone anywhere else, or CI's copy, would then miss what such a path names.
 */
export interface OutsidePath {
  file: string;
  line: number;
  text: string;
  reason: string;
}

/** Folders whose code the service, its tests, the benchmark and the fault campaign run from. */
export const scannedFolders = ['src', 'test', 'bench', 'faults', '.ci', 'bin'];
/** Generated or third-party content: samples, results, scratch work, installed packages. */
const skipped = new Set(['node_modules', 'fixtures', 'results', 'work', 'scratch', 'test-artifacts']);
const codeEndings = new Set(['.ts', '.js', '.mjs', '.cjs', '.json', '.sh', '']);

/** Home, workspace and mount folders of a developer's machine: nothing of the project lives there. */
const developmentFolder = /(?:^|[\s'"`=:(,])(\/(?:work|workspace|home|root|Users|mnt|media)\/[^\s'"`)]*)/g;
const sharedBeside = /\.\.[\\/]+shared\b|'\.\.'\s*,\s*'shared'/;
const climbingLiteral = /(['"`])((?:\.\.\/)+)[^'"`]*\1/g;
const climbingSegments = /(?:['"]\.\.['"]\s*,\s*)+/g;

export function codeFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (skipped.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && codeEndings.has(extname(entry.name))) files.push(path);
    }
  };
  for (const folder of scannedFolders) {
    try {
      walk(join(root, folder));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return [...files, join(root, 'package.json')].sort();
}

/** Every line of a file that names a path outside root. */
export function outsidePathsIn(root: string, file: string, source = readFileSync(file, 'utf8')): OutsidePath[] {
  const found: OutsidePath[] = [];
  const folder = resolve(file, '..');
  const outside = (target: string) => {
    const rel = relative(root, target);
    return rel === '..' || rel.startsWith(`..${sep}`);
  };
  source.split('\n').forEach((text, index) => {
    const report = (reason: string) => found.push({ file: relative(root, file), line: index + 1, text: text.trim(), reason });
    if (sharedBeside.test(text)) report('names a folder beside the repository');
    for (const match of text.matchAll(developmentFolder)) report(`absolute path into a development folder: ${match[1]}`);
    for (const match of text.matchAll(climbingLiteral)) {
      if (outside(resolve(folder, match[2]!))) report(`relative path that climbs out of the repository: ${match[0]}`);
    }
    for (const match of text.matchAll(climbingSegments)) {
      const levels = match[0].split(',').filter((part) => part.includes('..')).length;
      if (outside(resolve(folder, ...Array<string>(levels).fill('..')))) report(`path segments that climb out of the repository: ${match[0]}`);
    }
  });
  return found;
}
