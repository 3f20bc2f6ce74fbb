/**
 * What profiling found for each target the committed run missed, keyed by target name. Rendered
 * under the targets table of latest.md; the full analysis, with the measurements, is in
 * docs/architecture.md (section "Targets missed: causes and fixes" of the benchmarks).
 */
const fhirPerRequest =
  'Met in the last full run (0.20x at the start of this work). The causes, in the order they were found: four database round trips per ' +
  'request (key, user and site, a last_used_at UPDATE, then the read), now one, with the API key from a per-process cache that ' +
  'PostgreSQL LISTEN/NOTIFY invalidates on every committed credential change; two synchronous log lines and a pino child logger per ' +
  'request, now one asynchronous access line; and the read itself as an unnamed statement, so that PostgreSQL parsed and planned it on ' +
  'every request while baseline (a) prepares its select once: named, it took the read from 0.49x to about 0.8x. When this figure misses, ' +
  'look first at the machine: the service spends about twice the CPU per read of baseline (a) (access log, authentication, content ' +
  'negotiation, presentation), so a load generator or PostgreSQL competing for the two cores hurts it more.';

const fhirCreate =
  'A create is now one statement after validation (a data-modifying CTE writing the current row, the version row and the token rows, with ' +
  'the subject check folded in; autocommit, no BEGIN/COMMIT): 0.09x at the start of this work, now about 0.3x. Measured side by side on ' +
  'one PostgreSQL (16 connections): per create the service spends 192 µs of CPU and PostgreSQL 253-279 µs, per baseline (b) insert ' +
  'about 40 and 71. The statements alone, without HTTP or Node (pgbench, prepared, 16 clients), run at 0.30-0.38x of baseline (b)\'s ' +
  'insert: the current row with five more indexes, the version row and three or four token rows with three indexes each, no single part ' +
  'dominating. In wall time on the two cores baseline (b) takes about 86 µs a request, so 0.5x leaves 172 µs, of which the statement ' +
  'takes 119-133: the service would have 34-62 µs of CPU, no more than baseline (b)\'s own server spends with no FHIR work (validation ' +
  'alone is 34 µs). A store shaped like Medplum\'s (tokens as an array with a GIN index on the current row) measured 8,730-10,910 ' +
  'statements a second against 7,540-7,580, which would still need the service\'s CPU per create halved. Details: docs/architecture.md, ' +
  'Benchmarks.';

const mllp =
  'Not reachable on this machine while every ACK waits for its commit. 0.5x of the frame-and-ACK baseline, which does no I/O, means ' +
  '10,300-24,900 messages a second (its rate at 8 connections was 20,627 to 49,823 over the last four full runs): at most 80-194 µs of ' +
  'CPU per message, both cores together, for everything: the MLLP exchange, parsing, validation and a durable commit. Baseline (b) of ' +
  'the same run is the floor of any ACK-after-commit intake, one single-row INSERT per request with the same commit settings and nothing ' +
  'else, and it peaks at 6,300-13,000 a second over those runs, always below half the frame-and-ACK rate of the same run. The intake ' +
  'itself went from 14 statements per ADT^A01 (new patient) to 4 plus BEGIN and ' +
  'COMMIT (the duplicate check is the message log\'s unique key, the PV1 visit is written with the log entry, the record write is one ' +
  'statement, the fixed statements are prepared once per connection) and the sender is authorized from memory until a credential ' +
  'change is notified. The MLLP scenarios run on a fresh database, and its tables grew from empty faster than autovacuum analyses them ' +
  '(at most once a minute): with no statistics PostgreSQL chose indexes by tie, and a token lookup walked 12,714 rows of another index ' +
  '(4 ms) where the token primary key finds it directly. Whether autovacuum came by during a run is the likely reason earlier runs ranged from 303 to 979 ' +
  'messages a second. The service now analyses a table as soon as it outgrows its statistics (src/storage/planner-statistics.ts): ' +
  'ADT^A01 at 8 connections 874-1,551 a second over the last three full runs. A CPU profile at 8 connections ' +
  'showed the service 44% idle, waiting for PostgreSQL, and about 1.9 ms of CPU per message across all processes: two cores gave about ' +
  '1,050 such messages a second on that run\'s machine, about what was measured there, so the machine, not a wait, is the limit (the ' +
  'machine of the latest run was about twice as fast: baseline (a) 20,187 against 10,596 reads a second). The remaining lever is ' +
  'committing the messages of several connections in one transaction, each still acknowledged only after that commit; it would not ' +
  'close a gap of this size.';

const dicomSmall =
  'Orthanc, traced with strace, makes one fdatasync per instance and nothing else: no fsync of the folder that holds the new file and none ' +
  'for its SQLite index, so a crash right after its success answer can lose the file\'s name or its index entry. The service acknowledges ' +
  'only what survives a crash: the file\'s fsync, the fsync of its folder (shared by concurrent stores, like a group commit), the crash ' +
  'marker (a hard link in the temporary folder) and the PostgreSQL commit of the index (one statement for instance, study and series). ' +
  'Creating a file costs 0.5-0.8 ms of kernel CPU on this VM. This round took the small set from 0.36-0.50x to the figures above, and a ' +
  'warm service stores about 390 instances/s at one association in a longer run; the bench\'s first instances also pay for creating each ' +
  'new patient (about 3 ms). Matching Orthanc\'s rate would mean dropping one of the durable steps, which the service\'s contract (nothing ' +
  'acknowledged is lost) does not allow.';

const memory =
  'Met since the service runs with --heap-growing-percent=50 (src/cli/service-runtime.ts). Before, the FHIR scenarios, which run in ' +
  'one service process, saw its resident set rise by steps of about 60 MB at a different scenario in each run (peaks of 189 to 259 ' +
  'MB): objects of requests in flight at 64 connections are promoted, and V8 let the old generation grow to up to four times the live ' +
  'heap (31-37 MB) before collecting it. If this target is missed again, look first at the old generation\'s committed size with ' +
  '--trace-gc, then at native memory (smaps_rollup).';

export const findings: Record<string, string> = {
  'FHIR read by id, 16 connections': fhirPerRequest,
  'FHIR create, 16 connections': fhirCreate,
  'MLLP ADT^A01, 8 connections, ACK after commit': mllp,
  'DICOM small set instances/s, 1 association(s), fsync before success': dicomSmall,
  'DICOM small set instances/s, 4 association(s), fsync before success': dicomSmall,
  'Peak resident memory of the service, every scenario': memory,
};
