import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The public HL7 v2, HL7 v3 and DICOM samples in test/fixtures (origins in test/fixtures/NOTICE).
 * Every test, fault scenario and benchmark reaches them through here, so that they are read from
 * the repository and nowhere else, and a missing one is a clear failure at once.
 */
export const fixturesRoot = join(import.meta.dirname, '..', 'fixtures');

export class MissingFixtureError extends Error {
  constructor(path: string) {
    super(`fixture missing: ${relative(join(fixturesRoot, '..', '..'), path)} (the samples live in test/fixtures; see test/fixtures/NOTICE)`);
    this.name = 'MissingFixtureError';
  }
}

/** The absolute path of a fixture, given relative to test/fixtures; throws when it is not there. */
export function fixturePath(name: string): string {
  const path = join(fixturesRoot, name);
  if (!existsSync(path)) throw new MissingFixtureError(path);
  return path;
}

export function readFixture(name: string): Buffer {
  return readFileSync(fixturePath(name));
}

/** Fixture files under a folder of test/fixtures (recursively) with the given ending, sorted, as absolute paths. */
export function fixtureFiles(folder: string, ending: string): string[] {
  return readdirSync(fixturePath(folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(ending))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}
