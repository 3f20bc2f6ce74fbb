import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/env.ts';

test('the protective limits have their documented defaults', () => {
  assert.deepEqual(loadConfig({}).limits, {
    search: { maxValues: 200, maxRepeats: 10, timeoutMs: 10_000, workMem: '4MB', perKeyConcurrency: 4, connections: 5 },
    fhirBundle: { maxEntries: 1000, maxBytes: 16 * 2 ** 20 },
    dicom: { maxConnectionsPerAddress: 16, maxInstanceBytes: 4 * 2 ** 30, minFreeDiskBytes: 2 ** 30 },
    dicomweb: { maxStowBytes: 4 * 2 ** 30 },
    mllp: { maxConnections: 256, maxConnectionsPerAddress: 32, unfinishedFrameBytes: 64 * 2 ** 20 },
  });
});

test('limits are read from CG_* variables, sizes with units in powers of 1000 or 1024', () => {
  const { limits } = loadConfig({
    CG_SEARCH_MAX_VALUES: '50',
    CG_SEARCH_WORK_MEM: '512kB',
    CG_DICOM_MAX_INSTANCE_SIZE: '500MB',
    CG_DICOM_MIN_FREE_DISK: '0',
    CG_MLLP_UNFINISHED_BYTES: '16MiB',
    CG_FHIR_BUNDLE_MAX_ENTRIES: '100',
    CG_FHIR_BUNDLE_MAX_SIZE: '32MiB',
  });
  assert.equal(limits.fhirBundle.maxEntries, 100);
  assert.equal(limits.fhirBundle.maxBytes, 32 * 2 ** 20);
  assert.equal(limits.search.maxValues, 50);
  assert.equal(limits.search.workMem, '512kB');
  assert.equal(limits.dicom.maxInstanceBytes, 500_000_000);
  assert.equal(limits.dicom.minFreeDiskBytes, 0);
  assert.equal(limits.mllp.unfinishedFrameBytes, 16 * 2 ** 20);
});

test('a malformed limit stops the start with the variable named', () => {
  for (const [variable, value] of [
    ['CG_SEARCH_MAX_VALUES', '0'],
    ['CG_SEARCH_TIMEOUT_MS', 'ten'],
    ['CG_SEARCH_WORK_MEM', "4MB'; DROP TABLE site; --"],
    ['CG_DICOM_MAX_INSTANCE_SIZE', '4 parsecs'],
    ['CG_MLLP_UNFINISHED_BYTES', '0'],
    ['CG_FHIR_BUNDLE_MAX_ENTRIES', '0'],
    ['CG_FHIR_BUNDLE_MAX_SIZE', 'big'],
  ]) {
    assert.throws(() => loadConfig({ [variable!]: value }), (error: Error) => error instanceof ConfigError && error.message.includes(variable!), variable);
  }
});
