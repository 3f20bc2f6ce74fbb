import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../../src/config/env.ts';
import type { HttpSurface } from '../../src/platform/http/surface.ts';
import { startGateway } from '../../src/server/gateway.ts';
import { createLogger } from '../../src/server/logger.ts';
import { surfaceCatalogue, type SurfaceCatalogue, type TcpSurface } from '../../src/server/surfaces.ts';

/**
 * Used only with `npm run bench -- --dev-serve`: the composition root with the product's
 * catalogue plus any surface module present in the tree that the catalogue does not list yet.
 * Results measured this way say so (launcher "dev-serve" in latest.json); `serve` is the default.
 */
const root = join(import.meta.dirname, '../..');

async function exported<T>(path: string, name: string): Promise<T | undefined> {
  if (!existsSync(join(root, path))) return undefined;
  try {
    return ((await import(pathToFileURL(join(root, path)).href)) as Record<string, T>)[name];
  } catch (error) {
    process.stderr.write(`dev-serve: ${path} left out: ${(error as Error).message.split('\n')[0]}\n`);
    return undefined;
  }
}

const catalogue: SurfaceCatalogue = { http: [...surfaceCatalogue.http], tcp: [...surfaceCatalogue.tcp] };
const http: [string, string, SurfaceCatalogue['http'][number]['port']][] = [
  ['src/fhir/surface.ts', 'fhirSurface', 'fhir'],
  ['src/hl7v2/surface.ts', 'hl7v2OnlySurface', 'hl7'],
];
for (const [path, name, port] of http) {
  if (catalogue.http.some((entry) => entry.port === port)) continue;
  const surface = await exported<HttpSurface>(path, name);
  if (surface) catalogue.http.push({ surface, port });
}
const tcp: [string, string, 'mllp' | 'dicom'][] = [
  ['src/hl7v2/mllp/listener.ts', 'startMllpListener', 'mllp'],
  ['src/dicom/listener.ts', 'startDicomListener', 'dicom'],
];
for (const [path, name, port] of tcp) {
  if (catalogue.tcp.some((entry) => entry.port === port)) continue;
  const start = await exported<TcpSurface['start']>(path, name);
  if (start) catalogue.tcp.push({ surface: { name: port, start }, port });
}

const config = loadConfig();
const gateway = await startGateway(config, createLogger(config.logLevel), catalogue);
// The same listing `serve` prints, which the bench waits for.
process.stderr.write(`Clinical Gateway is running (data in ${config.dataDir}):\n${gateway.listening.map((s) => `  ${s.name.padEnd(13)} ${s.protocol}://${s.host}:${s.port}`).join('\n')}\n`);
const stop = () => void gateway.stop().then(() => process.exit(0), () => process.exit(1));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
