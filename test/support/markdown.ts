import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const repositoryRoot = join(import.meta.dirname, '..', '..');

/** A Markdown file of the repository, by its path from the root (`README.md`, `docs/fhir.md`). */
export function readDocument(path: string): string {
  return readFileSync(join(repositoryRoot, path), 'utf8');
}

/**
 * The text under the first heading whose title starts with `title`, down to the next heading of
 * the same or a higher level. Fenced code is skipped when looking for headings, since shell
 * comments start with `#` too.
 */
export function section(markdown: string, title: string): string {
  const lines = markdown.split('\n');
  let inFence = false;
  let start = -1;
  let level = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trimStart().startsWith('```')) inFence = !inFence;
    if (inFence) continue;
    const heading = /^(#{1,6}) (.*)$/.exec(line);
    if (!heading) continue;
    if (start < 0 && heading[2]!.startsWith(title)) {
      start = index;
      level = heading[1]!.length;
    } else if (start >= 0 && heading[1]!.length <= level) {
      return lines.slice(start, index).join('\n');
    }
  }
  if (start < 0) throw new Error(`no section "${title}"`);
  return lines.slice(start).join('\n');
}

export interface FencedBlock {
  /** The info string after the opening fence (`sh`, `json`, or empty). */
  language: string;
  text: string;
}

/** The fenced code blocks of a Markdown text, in order; a block indented in a list loses its indent. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  return [...markdown.matchAll(/^( *)```([^\n`]*)\n([\s\S]*?)^\1```$/gm)].map((match) => {
    const indent = new RegExp(`^ {0,${match[1]!.length}}`, 'gm');
    return { language: match[2]!.trim(), text: match[3]!.replace(indent, '') };
  });
}
