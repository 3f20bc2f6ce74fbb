// Development launcher (FAULTS_SERVE=dev): starts the composition root with every surface module
// that exists in the tree, before the catalogue of src/server/surfaces.ts lists them all. The real
// campaign runs `clinical-gateway serve`; results produced with this launcher say so.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../../src/config/env.ts';
import type { HttpSurface } from '../../src/platform/http/surface.ts';
import { startGateway } from '../../src/server/gateway.ts';
import { createLogger } from '../../src/server/logger.ts';
import { surfaceCatalogue, type SurfaceCatalogue, type TcpSurface } from '../../src/server/surfaces.ts';

const root = join(import.meta.dirname, '../..');

async function optional(path: string, exported: string): Promise<unknown> {
  const file = join(root, path);
  if (!existsSync(file)) return undefined;
  try {
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    return module[exported];
  } catch (error) {
    // A surface still being written in the working tree: leave it out.
    process.stderr.write(`dev-serve: ${path} not loaded: ${(error as Error).message.split('\n')[0]}\n`);
    return undefined;
  }
}

const catalogue: SurfaceCatalogue = { http: [...surfaceCatalogue.http], tcp: [...surfaceCatalogue.tcp] };
const httpCandidates: [string, string, 'fhir' | 'hl7' | 'mpps' | 'connectivity' | 'admin'][] = [
  ['src/fhir/surface.ts', 'fhirSurface', 'fhir'],
  ['src/hl7/surface.ts', 'hl7Surface', 'hl7'],
  ['src/hl7v2/surface.ts', 'hl7Surface', 'hl7'],
  ['src/mpps/surface.ts', 'mppsSurface', 'mpps'],
  ['src/connectivity/surface.ts', 'connectivitySurface', 'connectivity'],
  ['src/admin/surface.ts', 'adminSurface', 'admin'],
];
for (const [path, name, port] of httpCandidates) {
  if (catalogue.http.some((entry) => entry.port === port)) continue;
  const surface = (await optional(path, name)) as HttpSurface | undefined;
  if (surface) catalogue.http.push({ surface, port });
}
const tcpCandidates: [string, string, 'mllp' | 'dicom'][] = [
  ['src/hl7v2/mllp/listener.ts', 'startMllpListener', 'mllp'],
  ['src/dicom/listener.ts', 'startDicomListener', 'dicom'],
];
for (const [path, name, port] of tcpCandidates) {
  if (catalogue.tcp.some((entry) => entry.port === port)) continue;
  const start = (await optional(path, name)) as TcpSurface['start'] | undefined;
  if (start) catalogue.tcp.push({ surface: { name: port, start }, port });
}

const config = loadConfig();
const logger = createLogger(config.logLevel);
const gateway = await startGateway(config, logger, catalogue);
process.stderr.write(`Clinical Gateway is running (data in ${config.dataDir}):\n${gateway.listening.map((s) => `  ${s.name.padEnd(13)} ${s.protocol}://${s.host}:${s.port}`).join('\n')}\n`);
const stop = () => void gateway.stop().then(() => process.exit(0), () => process.exit(1));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
