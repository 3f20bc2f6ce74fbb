/**
 * What profiling found for each target that the committed full run missed, keyed by target name.
 * Rendered under the targets table of latest.md; the full analysis, with the measurements, is in
 * docs/architecture.md (section "Targets missed: causes and fixes" of the benchmarks).
 */
const readAndAuth =
  'Per request the service makes 4 database round trips where baseline (a) makes 1: API-key authentication (src/domain/keys/api-keys.ts, authenticateApiKey) ' +
  'selects the key joined to its user, then the site (findSiteById), then runs `UPDATE api_key SET last_used_at …` on every request (its WHERE clause only ' +
  'stops the write, not the statement), before the read itself; the service\'s CPU stays at 14-15% of a core, so it waits. Four ' +
  'round trips against one explain about 0.25x; the committed run is lower still (0.08x at 1 connection, 0.20x at 16) and varied 4x between ' +
  'runs (29-122 req/s at 1 connection), and read by id is the first scenario after the service starts, so start-up work (the FHIR definitions ' +
  'loaded at start, JIT, new pool backends) overlaps it: searches by identifier, which return the same rows, ran at 301 req/s at 16 connections ' +
  'against 125 for reads. A longer warm-up in the bench is the next thing to try before drawing more from that gap. ' +
  'And the product default CG_LOG_LEVEL=info logs two lines per request through pino with ' +
  'synchronous writes: `writev` is 18% of all CPU samples of the FHIR phase (node --cpu-prof). Fix: one SELECT joining api_key, app_user and site; ' +
  'issue the last_used_at UPDATE only when an in-process per-key timestamp is older than a minute; log one line per request (Fastify ' +
  '`disableRequestLogging` plus an onResponse line) through `pino.destination({ sync: false })` in src/server/logger.ts.';

const searchTail =
  'The SQL is not the problem any more: after the store owner\'s fix (correlated EXISTS on the token key, page ids from a covering index) EXPLAIN ' +
  'ANALYZE on this data set gives 0.2-1.5 ms per statement, and patient+code meets the target (p95 15.8 ms). A search request is five sequential ' +
  'statements (three for API-key authentication, the bounded count, the page) and the service\'s CPU stays under 15% of a core: it waits on ' +
  'round trips, each exposed to the scheduling tail of this shared machine (baseline (a)\'s single primary-key select: p95 4.2 ms in the median ' +
  'run, 30.8 ms in the worst). Identifier (p95 43 ms) and name (31 ms) need the authentication fix of the read target (one statement instead of ' +
  'three); re-measure on a quiet machine.';

const dicomSmall =
  'Per ~130 KB instance the service waits on more durable steps than Orthanc: the file fsync, a rename and an fsync of the target folder (and of ' +
  'any folder created for a new study/series, src/dicom/storage/layout.ts moveIntoPlace), and a PostgreSQL transaction of five round trips ' +
  '(BEGIN, the instance claim INSERT, the study upsert, the series upsert, COMMIT with its WAL flush: src/domain/imaging/index-instance.ts ' +
  'indexInstance), plus an info log line per instance written synchronously; Orthanc does one file write with fsync and one SQLite commit in ' +
  'process. The service\'s CPU stays low (it waits), and on the large set at four associations, where the fixed per-instance cost is spread over ' +
  '10-30 MB, the same path is faster than Orthanc. Fix: the claim, study and series writes as one statement (a data-modifying CTE) so an instance costs BEGIN, one ' +
  'statement, COMMIT; concurrent renames into one folder sharing one folder fsync (one fsync makes every rename before it durable, as ' +
  'PostgreSQL\'s group commit does for WAL), so no instance is acknowledged before its entry is durable; the per-instance log line at debug.';

export const findings: Record<string, string> = {
  'DICOM small set instances/s, 1 association(s), fsync before success': dicomSmall,
  'DICOM small set instances/s, 4 association(s), fsync before success': dicomSmall,
  'FHIR read by id, 16 connections': readAndAuth,
  'Peak resident memory of the service, every scenario':
    'The service loads the whole FHIR R4 definitions at start (HL7 v2 now loads them before accepting) or at the first write: ' +
    'loadStructureDefinitions (src/domain/records/validation.ts) indexes all of profiles-types.json and profiles-resources.json (35 MB of JSON), ' +
    'requiredBindingIssues (required-bindings.ts) reads valuesets.json and v3-codesystems.json, and readDefinitionBundle (definitions.ts) keeps every ' +
    'parsed bundle in a module-level Map for the life of the process. A bare Node process goes from 76 MB to 299 MB while loading and stays at 243 MB; ' +
    'indexing only the StructureDefinitions of the stored types and all data types, and keeping no raw bundle, measured 135 MB. Fix: filter the ' +
    'bundle entries before indexStructureDefinitionBundle, drop the Map, extract the required-binding value sets of the stored types once.',
  'Peak resident memory of the service during one ~300 MB C-STORE':
    'Not the C-STORE: the listener streams to disk, and the ~300 MB instance raises the peak by less than 20 MB over the 130 KB ones (Orthanc: 931 MB). The level is the FHIR ' +
    'definitions held by every service process (see the previous target), reached when the first instance of an unknown patient creates the patient.',
  'FHIR create, 16 connections':
    'A create is one transaction of about 10 statements (BEGIN, the 3 authentication statements above, pg_advisory_xact_lock on the business identifier, ' +
    'its SELECT, INSERT of the current row, the version row and the token rows, COMMIT: src/domain/records/write.ts insertResource/writeRows) where ' +
    'baseline (b) sends one auto-committed INSERT; plus @medplum/core validateResource on every write (the largest JavaScript self-time in the profile). ' +
    'Fix: the authentication fix above, and one statement for the three inserts (a data-modifying CTE: WITH c AS (INSERT … clinical_resource), ' +
    'v AS (INSERT … clinical_resource_version) INSERT … clinical_resource_token) so a create costs BEGIN, lock+check, insert, COMMIT.',
  'FHIR search by identifier p95, 1 connection': searchTail,
  'FHIR search by name p95, 1 connection': searchTail,
  'FHIR search by patient-code p95, 1 connection': searchTail,
  'DICOM large set MB/s, 1 association(s), fsync before success':
    'Orthanc 68.3 MB/s, the service 60.7 (0.89x) at one association in the committed run; the spreads overlap (service 51.7-116, Orthanc 67.0-88.3), ' +
    'an earlier run on a busier machine had the service ahead (27.3 against 25.0 MB/s), and at four associations the service is 1.39x (75.2 against ' +
    '54.2). What separates them at one association is the per-instance fixed cost described for the small set (folder fsync, five-statement ' +
    'transaction) and the service\'s CPU (about 50% of a core, copying P-DATA through the event loop into the file) against Orthanc\'s 41%; the ' +
    'small-set fix applies here too.',
  'MLLP ADT^A01, 8 connections, ACK after commit':
    'The baseline frames and acknowledges without any I/O; 0.5x of it means 0.5x of a server that never writes. An ADT^A01 in the gateway is one durable ' +
    'transaction of about 13 statements (message-log look-up, BEGIN, identifier lock, patient select, insert of patient, version and tokens with FHIR ' +
    'validation, visit, message log, COMMIT) and the service CPU stays at 15-20% of a core: it waits for PostgreSQL. The same run shows the machine\'s ' +
    'ceiling for durable commits: baseline (b), one single-row INSERT per request with the same commit settings, is an upper bound of ACK-after-commit ' +
    'messages per second (1,615-1,892 a second at 16-64 connections in the committed run), while half the MLLP baseline is 6,829 a second, ' +
    'so the target cannot be met on this hardware while every ACK waits for its commit. ' +
    'What would narrow the gap: fewer statements per message (one CTE for the patient rows and the message log), and in ' +
    'src/hl7v2/mllp/listener.ts the sender authorization (authorizeSender, then findSiteById: 2 more round trips per message) cached per connection ' +
    'and MSH-3/MSH-4 pair instead of repeated for every message.',
};
