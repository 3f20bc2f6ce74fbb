import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/env.ts';

test('CG_ADMIN_SESSION_IDLE_SECONDS: 30 minutes by default, a value in range, a clear error otherwise', () => {
  assert.deepEqual(loadConfig({}).adminSession, { idleSeconds: 1800 });
  assert.deepEqual(loadConfig({ CG_ADMIN_SESSION_IDLE_SECONDS: '900' }).adminSession, { idleSeconds: 900 });
  for (const value of ['half an hour', '0', '-5', '10', '43201', '1.5']) {
    assert.throws(() => loadConfig({ CG_ADMIN_SESSION_IDLE_SECONDS: value }), (error: unknown) => error instanceof ConfigError && error.message.includes('CG_ADMIN_SESSION_IDLE_SECONDS'), value);
  }
});
