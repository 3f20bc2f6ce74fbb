import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Cursor from 'pg-cursor';
import { pino } from 'pino';
import { claimExport } from '../../src/domain/bulk-export/export-jobs.ts';
import { exportBatchRows } from '../../src/domain/bulk-export/export-reader.ts';
import { runExport } from '../../src/fhir/export/export-runner.ts';
import { createTestSite } from '../support/sites.ts';
import { insertObservations, useExportOrigin } from './bulk-export-support.ts';

// Memory stays bounded whatever the size: the rows come through a cursor a batch at a time and
// go to the file as they come. The live heap (measured after a full collection, sampled while the
// export runs) of an export ten times larger is no larger, and far below the size of its output.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const origin = useExportOrigin();

async function exportMeasured(rows: number): Promise<{ liveGrowth: number; outputBytes: number; reads: number[] }> {
  const site = await createTestSite(origin.db.database);
  await insertObservations(origin.db.database, site.siteId, rows, 1000);
  await origin.db.database.query(
    `INSERT INTO bulk_export_job (site_id, id, level, resource_types, output_format, request_url, state) VALUES ($1, gen_random_uuid(), 'system', '{Observation}', 'application/fhir+ndjson', 'http://test/fhir/$export', 'queued')`,
    [site.siteId],
  );
  const job = (await claimExport(origin.db.database, 'memory-test', 60))!;
  const reads: number[] = [];
  const read = Cursor.prototype.read;
  Cursor.prototype.read = function (this: Cursor, size: number, ...rest: unknown[]) {
    reads.push(size);
    return (read as (...args: unknown[]) => unknown).call(this, size, ...rest);
  } as typeof read;
  collect();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sampler = setInterval(() => {
    collect();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 20);
  try {
    const output = (await runExport({ database: origin.db.database, settings: origin.config.bulkExport, owner: 'memory-test', logger: pino({ level: 'silent' }), stopping: () => false }, job))!;
    const outputBytes = output.reduce((sum, file) => sum + statSync(join(origin.config.bulkExport.dir, site.siteId, job.id, file.file)).size, 0);
    assert.equal(output.reduce((sum, file) => sum + file.count, 0), rows);
    return { liveGrowth: peak - baseline, outputBytes, reads };
  } finally {
    clearInterval(sampler);
    Cursor.prototype.read = read;
  }
}

test('an export ten times larger holds no more memory: rows are read in cursor batches and written as they come', async () => {
  const small = await exportMeasured(4_000);
  const large = await exportMeasured(40_000);
  assert.ok(large.outputBytes > 40_000_000, `the large export writes ${large.outputBytes} bytes`);
  // Every read asks the cursor for one batch, and the large export needed ten times the reads.
  assert.ok(large.reads.every((size) => size === exportBatchRows), `cursor reads of ${[...new Set(large.reads)].join(', ')} rows`);
  assert.ok(large.reads.length >= 40_000 / exportBatchRows, `${large.reads.length} cursor reads`);
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const report = `live heap growth: ${mib(small.liveGrowth)} for ${mib(small.outputBytes)} of output, ${mib(large.liveGrowth)} for ${mib(large.outputBytes)}`;
  assert.ok(large.liveGrowth < small.liveGrowth + 8 * 2 ** 20, report);
  assert.ok(large.liveGrowth < large.outputBytes / 4, report);
});
