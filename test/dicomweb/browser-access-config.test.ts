import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, dicomwebCorsOrigins, loadConfig } from '../../src/config/env.ts';

test("the DICOMweb origin allows the admin origin's own address by default, and only named origins when set", () => {
  assert.deepEqual(dicomwebCorsOrigins(loadConfig({})), ['http://127.0.0.1:8084', 'http://localhost:8084']);
  assert.deepEqual(dicomwebCorsOrigins(loadConfig({ CG_ADMIN_PORT: '9000', CG_BIND: '0.0.0.0' })), ['http://127.0.0.1:9000', 'http://localhost:9000']);
  assert.deepEqual(dicomwebCorsOrigins(loadConfig({ CG_BIND: '10.1.2.3' })), ['http://10.1.2.3:8084']);
  assert.deepEqual(dicomwebCorsOrigins(loadConfig({ CG_ADMIN_PORT: '0' })), [], 'a port chosen at start is not known before it listens');
  assert.deepEqual(dicomwebCorsOrigins(loadConfig({ CG_ADMIN_PORT: '' })), [], 'no admin origin, no browser access');
  assert.deepEqual(dicomwebCorsOrigins(loadConfig({ CG_DICOMWEB_CORS_ORIGINS: 'https://admin.example.org, https://Other.example.org:8443' })), ['https://admin.example.org', 'https://other.example.org:8443']);
  const started = loadConfig({ CG_ADMIN_PORT: '0' });
  started.ports.admin = 41234;
  assert.deepEqual(dicomwebCorsOrigins(started), ['http://127.0.0.1:41234', 'http://localhost:41234'], 'the port it got, once written in');
  assert.equal(loadConfig({}).dicomwebPublicUrl, undefined);
  assert.equal(loadConfig({ CG_DICOMWEB_PUBLIC_URL: 'https://images.example.org' }).dicomwebPublicUrl, 'https://images.example.org');
});

test('a wildcard, a path or a list where one origin is meant is a configuration error', () => {
  assert.throws(() => loadConfig({ CG_DICOMWEB_CORS_ORIGINS: '*' }), (error: unknown) => error instanceof ConfigError && /CG_DICOMWEB_CORS_ORIGINS: "\*" is not allowed/.test(error.message));
  assert.throws(() => loadConfig({ CG_DICOMWEB_CORS_ORIGINS: 'https://admin.example.org/app' }), ConfigError);
  assert.throws(() => loadConfig({ CG_DICOMWEB_PUBLIC_URL: 'https://a.example.org,https://b.example.org' }), ConfigError);
  assert.throws(() => loadConfig({ CG_DICOMWEB_PUBLIC_URL: 'images.example.org' }), ConfigError);
});
