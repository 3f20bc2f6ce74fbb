import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/env.ts';

test("the DICOMweb origin allows the admin origin's own address by default, and only named origins when set", () => {
  assert.deepEqual(loadConfig({}).dicomwebCorsOrigins, ['http://127.0.0.1:8084', 'http://localhost:8084']);
  assert.deepEqual(loadConfig({ CG_ADMIN_PORT: '9000', CG_BIND: '0.0.0.0' }).dicomwebCorsOrigins, ['http://127.0.0.1:9000', 'http://localhost:9000']);
  assert.deepEqual(loadConfig({ CG_BIND: '10.1.2.3' }).dicomwebCorsOrigins, ['http://10.1.2.3:8084']);
  assert.deepEqual(loadConfig({ CG_ADMIN_PORT: '0' }).dicomwebCorsOrigins, [], 'a port chosen at start is not known');
  assert.deepEqual(loadConfig({ CG_ADMIN_PORT: '' }).dicomwebCorsOrigins, [], 'no admin origin, no browser access');
  assert.deepEqual(loadConfig({ CG_DICOMWEB_CORS_ORIGINS: 'https://admin.example.org, https://Other.example.org:8443' }).dicomwebCorsOrigins, ['https://admin.example.org', 'https://other.example.org:8443']);
  assert.equal(loadConfig({}).dicomwebPublicUrl, undefined);
  assert.equal(loadConfig({ CG_DICOMWEB_PUBLIC_URL: 'https://images.example.org' }).dicomwebPublicUrl, 'https://images.example.org');
});

test('a wildcard, a path or a list where one origin is meant is a configuration error', () => {
  assert.throws(() => loadConfig({ CG_DICOMWEB_CORS_ORIGINS: '*' }), (error: unknown) => error instanceof ConfigError && /CG_DICOMWEB_CORS_ORIGINS: "\*" is not allowed/.test(error.message));
  assert.throws(() => loadConfig({ CG_DICOMWEB_CORS_ORIGINS: 'https://admin.example.org/app' }), ConfigError);
  assert.throws(() => loadConfig({ CG_DICOMWEB_PUBLIC_URL: 'https://a.example.org,https://b.example.org' }), ConfigError);
  assert.throws(() => loadConfig({ CG_DICOMWEB_PUBLIC_URL: 'images.example.org' }), ConfigError);
});
