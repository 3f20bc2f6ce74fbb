import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
}

export function useExportOrigin(env: NodeJS.ProcessEnv = {}): ExportOrigin {
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
