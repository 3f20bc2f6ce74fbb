import { readFileSync } from 'node:fs';

/** The version in package.json, recorded in each backup's manifest. */
export function productVersion(): string {
  const packageJson = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return packageJson.version ?? 'unknown';
}
