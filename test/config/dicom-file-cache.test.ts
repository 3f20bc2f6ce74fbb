import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/env.ts';

test('CG_DICOM_FILE_CACHE_SIZE: off by default, a size with a unit, 0 for none, anything else refused', () => {
  assert.equal(loadConfig({}).dicomFileCacheBytes, 0);
  assert.equal(loadConfig({ CG_DICOM_FILE_CACHE_SIZE: '128MiB' }).dicomFileCacheBytes, 128 * 2 ** 20);
  assert.equal(loadConfig({ CG_DICOM_FILE_CACHE_SIZE: '512MiB' }).dicomFileCacheBytes, 512 * 2 ** 20);
  assert.equal(loadConfig({ CG_DICOM_FILE_CACHE_SIZE: '200MB' }).dicomFileCacheBytes, 200_000_000);
  assert.equal(loadConfig({ CG_DICOM_FILE_CACHE_SIZE: '0' }).dicomFileCacheBytes, 0);
  for (const value of ['lots', '-1', '12 parsecs']) {
    assert.throws(() => loadConfig({ CG_DICOM_FILE_CACHE_SIZE: value }), (error: unknown) => error instanceof ConfigError && /CG_DICOM_FILE_CACHE_SIZE/.test(error.message), value);
  }
});
