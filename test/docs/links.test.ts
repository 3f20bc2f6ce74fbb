import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { readDocument, repositoryRoot } from '../support/markdown.ts';

function markdownFiles(folder: string): string[] {
  return readdirSync(join(repositoryRoot, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```$/gm, '');
  return new Set(
    [...withoutCode.matchAll(/^#{1,6} (.*)$/gm)].map((heading) =>
      heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'),
    ),
  );
}

test('every relative link and anchor in the README and docs/ leads somewhere', () => {
  const broken: string[] = [];
  for (const file of ['README.md', ...markdownFiles('docs')]) {
    const markdown = readDocument(file);
    const withoutCode = markdown.replace(/^```[\s\S]*?^```$/gm, '');
    for (const [, target] of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const resolved = path ? join(dirname(join(repositoryRoot, file)), path) : join(repositoryRoot, file);
      if (!existsSync(resolved)) broken.push(`${file}: ${target} (no such file)`);
      else if (anchor && resolved.endsWith('.md') && !anchors(readDocument(relative(repositoryRoot, resolved))).has(anchor)) {
        broken.push(`${file}: ${target} (no such heading)`);
      }
    }
  }
  assert.deepEqual(broken, []);
});
