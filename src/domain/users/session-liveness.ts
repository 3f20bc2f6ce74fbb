/**
 * When a session of the administration app is live: before its absolute end and used within the
 * idle limit (CG_ADMIN_SESSION_IDLE_SECONDS). One rule for the session itself and for what
 * depends on it (the DICOMweb viewing tokens it asked for), so neither outlives the other.
 */

/**
 * The SQL condition on the admin_session row aliased `alias`; `idleSecondsParameter` is the
 * query's placeholder holding the idle limit in seconds (e.g. "$2").
 */
export function liveSessionCondition(alias: string, idleSecondsParameter: string): string {
  return `${alias}.expires_at > now() AND ${alias}.last_seen_at > now() - make_interval(secs => ${idleSecondsParameter})`;
}
