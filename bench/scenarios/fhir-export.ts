import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { GatewayProcess } from '../lib/gateway-process.ts';
import { progress } from '../lib/log.ts';
import { monitored } from '../lib/process-monitor.ts';
import { benchHost } from '../lib/ports.ts';
import { gatewayWatched } from './fhir.ts';
import type { ProvisionedSite } from '../lib/provision.ts';
import { Series } from '../report/series.ts';
import type { BenchContext } from './context.ts';

/**
 * FHIR Bulk Data export (issue 22 point 7): `$export?_type=Observation` of the main site, from
 * kick-off to manifest, in resources a second, against the floor of what any export can do: the
 * same rows as `COPY (SELECT content ...) TO STDOUT` written to a file, run by run in turn.
 */
export interface ExportTargets {
  gateway: GatewayProcess;
  fhirPort: number;
  main: ProvisionedSite;
}

const pollMs = 100;

export async function runExportScenario(context: BenchContext, targets: ExportTargets): Promise<void> {
  const gateway = new Series('fhir.export', 'gateway', 1, 'resources/s');
  const baseline = new Series('fhir.export', 'copy-baseline', 1, 'resources/s');
  context.series.push(gateway, baseline);
  const url = `http://${benchHost}:${targets.fhirPort}`;
  const headers = { 'x-api-key': targets.main.apiKey, accept: 'application/fhir+json' };
  for (let run = 1; run <= context.options.runs; run++) {
    const exported = await monitored(gatewayWatched(targets.gateway), () => exportOnce(url, headers));
    gateway.add({ throughput: exported.result.count / exported.result.seconds, failed: 0 }, exported.usage);
    const copied = await monitored(gatewayWatched(targets.gateway), () => copyOnce(targets.gateway.databaseUrl, targets.main.id, join(context.workDir, 'export-baseline.txt')));
    baseline.add({ throughput: copied.result.count / copied.result.seconds, failed: 0 }, copied.usage);
    if (copied.result.count !== exported.result.count) gateway.note(`the export wrote ${exported.result.count} Observations, COPY ${copied.result.count}`);
    progress(`fhir.export run ${run}: ${exported.result.count} Observations, ${(exported.result.count / exported.result.seconds).toFixed(0)} resources/s; COPY ${(copied.result.count / copied.result.seconds).toFixed(0)} rows/s`);
  }
  gateway.note('kick-off to manifest (the files written and fsynced), the worker polls for jobs once a second');
}

async function exportOnce(url: string, headers: Record<string, string>): Promise<{ count: number; seconds: number }> {
  const started = performance.now();
  const kickOff = await fetch(`${url}/fhir/$export?_type=Observation`, { headers: { ...headers, prefer: 'respond-async' } });
  await kickOff.text();
  if (kickOff.status !== 202) throw new Error(`$export kick-off answered ${kickOff.status}`);
  const status = kickOff.headers.get('content-location')!;
  for (;;) {
    const polled = await fetch(status, { headers });
    const body = await polled.text();
    if (polled.status === 200) {
      const seconds = (performance.now() - started) / 1000;
      const manifest = JSON.parse(body) as { output: { count: number }[] };
      // Drops the files at once (they are as large as the data set).
      await fetch(status, { method: 'DELETE', headers: { 'x-api-key': headers['x-api-key']! } }).then((response) => response.text());
      return { count: manifest.output.reduce((sum, file) => sum + file.count, 0), seconds };
    }
    if (polled.status !== 202) throw new Error(`$export status answered ${polled.status}: ${body.slice(0, 200)}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function copyOnce(databaseUrl: string, siteId: string, file: string): Promise<{ count: number; seconds: number }> {
  if (!/^[0-9a-f-]{36}$/.test(siteId)) throw new Error('the site id is not a UUID');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let count = 0;
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) count++;
      done(null, chunk);
    },
  });
  try {
    const started = performance.now();
    // COPY takes no parameters; the site id is checked to be a UUID above.
    const copy = client.query(copyTo(`COPY (SELECT content FROM clinical_resource WHERE site_id = '${siteId}' AND resource_type = 'Observation') TO STDOUT`));
    const out = createWriteStream(file);
    await pipeline(copy, lines, out);
    return { count, seconds: (performance.now() - started) / 1000 };
  } finally {
    await client.end();
    await rm(file, { force: true });
  }
}
