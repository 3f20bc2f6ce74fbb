/**
 * What profiling found for each target that the committed full run missed, keyed by target name.
 * Rendered under the targets table of latest.md; the full analysis, with the measurements, is in
 * docs/architecture/bench.md (section "Targets missed: causes and fixes").
 */
const readAndAuth =
  'Per request the service makes 4 database round trips where baseline (a) makes 1: API-key authentication (src/domain/keys/api-keys.ts, authenticateApiKey) ' +
  'selects the key joined to its user, then the site (findSiteById), then runs `UPDATE api_key SET last_used_at …` on every request (its WHERE clause only ' +
  'stops the write, not the statement), before the read itself. And the product default CG_LOG_LEVEL=info logs two lines per request through pino with ' +
  'synchronous writes: `writev` is 18% of all CPU samples of the FHIR phase (node --cpu-prof). Fix: one SELECT joining api_key, app_user and site; ' +
  'issue the last_used_at UPDATE only when an in-process per-key timestamp is older than a minute; log one line per request (Fastify ' +
  '`disableRequestLogging` plus an onResponse line) through `pino.destination({ sync: false })` in src/server/logger.ts.';

const searchCorrelated =
  'The token condition of src/domain/records/search.ts (conditionSql, case "token") writes `t.site_id = r.site_id AND t.site_id = $1` inside ' +
  '`r.id IN (SELECT t.resource_id …)`. The first predicate correlates the subquery, so PostgreSQL 15 cannot turn it into a semi-join and runs it once per ' +
  'candidate row (EXPLAIN ANALYZE on the full data set: 100,000 executions, 4.9 s for the count and 11.7 s for the page of Patient?identifier=; ' +
  '4.1 s for Observation?patient=&code=, 10 x 97,880 token rows). Fix: drop `t.site_id = r.site_id` (the site is already bound by `t.site_id = $1`): ' +
  'the same queries then take 0.3 ms / 0.2 ms (identifier, count / page) and 1.3 ms (patient+code), nested loops on clinical_resource_token_pkey.';

export const findings: Record<string, string> = {
  'FHIR read by id, 16 connections': readAndAuth,
  'FHIR create, 16 connections':
    'A create is one transaction of about 10 statements (BEGIN, the 3 authentication statements above, pg_advisory_xact_lock on the business identifier, ' +
    'its SELECT, INSERT of the current row, the version row and the token rows, COMMIT: src/domain/records/write.ts insertResource/writeRows) where ' +
    'baseline (b) sends one auto-committed INSERT; plus @medplum/core validateResource on every write (the largest JavaScript self-time in the profile). ' +
    'Fix: the authentication fix above, and one statement for the three inserts (a data-modifying CTE: WITH c AS (INSERT … clinical_resource), ' +
    'v AS (INSERT … clinical_resource_version) INSERT … clinical_resource_token) so a create costs BEGIN, lock+check, insert, COMMIT.',
  'FHIR search by identifier p95, 1 connection': searchCorrelated,
  'FHIR search by patient-code p95, 1 connection': searchCorrelated,
  'MLLP ADT^A01, 8 connections, ACK after commit':
    'The baseline frames and acknowledges without any I/O; 0.5x of it means 0.5x of a server that never writes. An ADT^A01 in the gateway is one durable ' +
    'transaction of about 13 statements (message-log look-up, BEGIN, identifier lock, patient select, insert of patient, version and tokens with FHIR ' +
    'validation, visit, message log, COMMIT) and the service CPU stays at 15-20% of a core: it waits for PostgreSQL. The same run shows the machine\'s ' +
    'ceiling for durable commits: baseline (b), one single-row INSERT per request with the same commit settings, is the upper bound of ACK-after-commit ' +
    'messages per second, and it is below half the MLLP baseline, so the target cannot be met on this hardware while every ACK waits for its commit. ' +
    'What would narrow the gap: fewer statements per message (one CTE for the patient rows and the message log), and in ' +
    'src/hl7v2/mllp/listener.ts the sender authorization (authorizeSender, then findSiteById: 2 more round trips per message) cached per connection ' +
    'and MSH-3/MSH-4 pair instead of repeated for every message.',
};
