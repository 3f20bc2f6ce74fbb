import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { loadConfig, type GatewayConfig } from '../../src/config/env.ts';
import { claimExport } from '../../src/domain/bulk-export/export-jobs.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { runExport } from '../../src/fhir/export/export-runner.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

/** An in-process FHIR origin whose export jobs the test runs itself (`runPendingExports`). */
export interface ExportOrigin {
  db: TestDatabase;
  app: FastifyInstance;
  config: GatewayConfig;
  /** Claims and runs every queued job, one after another, as a worker does. */
  runPendingExports(owner?: string): Promise<number>;
  /** With `listen`: http://127.0.0.1:{port}/fhir */
  baseUrl: string;
}

export function useExportOrigin(env: NodeJS.ProcessEnv = {}, options: { listen?: boolean } = {}): ExportOrigin {
  const origin = {} as ExportOrigin;
  before(async () => {
    origin.db = await createTestDatabase();
    origin.config = loadConfig({ CG_DATA_DIR: mkdtempSync(join(tmpdir(), 'cg-export-')), ...env });
    const logger = pino({ level: process.env.CG_TEST_LOG_LEVEL ?? 'silent' });
    origin.app = await createOrigin(fhirSurface, { database: origin.db.database, config: origin.config, logger });
    origin.runPendingExports = async (owner = 'test-worker') => {
      let ran = 0;
      for (let job = await claimExport(origin.db.database, owner, 30); job; job = await claimExport(origin.db.database, owner, 30)) {
        await runExport({ database: origin.db.database, settings: origin.config.bulkExport, owner, logger, stopping: () => false }, job);
        ran++;
      }
      return ran;
    };
    // In this hook: top-level hooks of a file are not chained, so the listen cannot be a hook of its own.
    if (options.listen) {
      await origin.app.listen({ port: 0, host: '127.0.0.1' });
      origin.baseUrl = `http://127.0.0.1:${(origin.app.server.address() as AddressInfo).port}/fhir`;
    }
  });
  after(async () => {
    await origin.app.close();
    await origin.db.drop();
  });
  return origin;
}

export const asyncHeaders = { prefer: 'respond-async', accept: 'application/fhir+json' };

/** The path of a status or file URL (inject takes paths). */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

export function ndjsonLines(body: string): Record<string, any>[] {
  return body.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, any>);
}

/**
 * `count` Observations of one new patient written straight into the current-version table in one
 * statement (what a export reads), for tests that need more rows than the API would write quickly.
 */
export async function insertObservations(db: { query(text: string, values?: unknown[]): Promise<unknown> }, siteId: string, count: number, padding = 0): Promise<void> {
  await db.query(
    `WITH patient AS (
       INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content)
       SELECT $1::uuid, 'Patient', p.id, 1, now(), jsonb_build_object('resourceType', 'Patient', 'id', p.id::text, 'meta', jsonb_build_object('versionId', '1'))
         FROM (SELECT gen_random_uuid() AS id) AS p
       RETURNING id
     )
     INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id)
     SELECT $1::uuid, 'Observation', o.id, 1, now(),
            jsonb_build_object('resourceType', 'Observation', 'id', o.id::text, 'status', 'final', 'code', jsonb_build_object('text', 'Hb'),
                               'subject', jsonb_build_object('reference', 'Patient/' || patient.id), 'valueQuantity', jsonb_build_object('value', o.k),
                               'note', jsonb_build_array(jsonb_build_object('text', repeat('x', $3::int)))),
            patient.id
       FROM patient, (SELECT gen_random_uuid() AS id, k FROM generate_series(1, $2::int) AS k) AS o`,
    [siteId, count, padding],
  );
}
