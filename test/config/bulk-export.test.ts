import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/env.ts';

test('CG_EXPORT_*: defaults, values, and a clear error for a bad value', () => {
  const defaults = loadConfig({ CG_DATA_DIR: '/srv/cg' }).bulkExport;
  assert.deepEqual(defaults, { dir: join('/srv/cg', 'exports'), retentionHours: 24, jobsPerSite: 2, fileMaxBytes: 256 * 2 ** 20, leaseSeconds: 30 });
  const set = loadConfig({ CG_DATA_DIR: '/srv/cg', CG_EXPORT_DIR: '/srv/gateway-exports', CG_EXPORT_RETENTION_HOURS: '48', CG_EXPORT_JOBS_PER_SITE: '1', CG_EXPORT_FILE_MAX_SIZE: '1GiB', CG_EXPORT_LEASE_SECONDS: '10' }).bulkExport;
  assert.deepEqual(set, { dir: '/srv/gateway-exports', retentionHours: 48, jobsPerSite: 1, fileMaxBytes: 2 ** 30, leaseSeconds: 10 });
  for (const [name, value] of [['CG_EXPORT_RETENTION_HOURS', 'a day'], ['CG_EXPORT_JOBS_PER_SITE', '0'], ['CG_EXPORT_FILE_MAX_SIZE', 'big'], ['CG_EXPORT_LEASE_SECONDS', '-1']]) {
    assert.throws(() => loadConfig({ [name!]: value }), (error: unknown) => error instanceof ConfigError && error.message.includes(name!), name);
  }
});
