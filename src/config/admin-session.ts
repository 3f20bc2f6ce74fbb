import { ConfigError } from './config-error.ts';
import { count } from './limits.ts';

/** Sessions of the administration app (docs/admin-app.md#sessions). */
export interface AdminSessionSettings {
  /** Seconds without a request after which a session ends (the app warns before). */
  idleSeconds: number;
}

/** Under this a user could not answer the warning; above the absolute limit (12 h) it means nothing. */
const idleRange = { min: 20, max: 12 * 60 * 60 };

export function loadAdminSessionSettings(env: NodeJS.ProcessEnv): AdminSessionSettings {
  const idleSeconds = count(env, 'CG_ADMIN_SESSION_IDLE_SECONDS', 30 * 60);
  if (idleSeconds < idleRange.min || idleSeconds > idleRange.max) {
    throw new ConfigError(`CG_ADMIN_SESSION_IDLE_SECONDS must be from ${idleRange.min} to ${idleRange.max} (seconds)`);
  }
  return { idleSeconds };
}
