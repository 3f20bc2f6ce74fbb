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
  '10,300-24,900 messages a second (its rate at 8 connections was 20,627 to 49,823 over the last five full runs): at most 80-194 µs of ' +
  'CPU per message, both cores together, for everything: the MLLP exchange, parsing, validation and a durable commit. Baseline (b) of ' +
  'the same run is the floor of any ACK-after-commit intake, one single-row INSERT per request with the same commit settings and nothing ' +
  'else, and it peaks at 5,900-13,000 a second over those runs, always below half the frame-and-ACK rate of the same run. The intake ' +
  'itself went from 14 statements per ADT^A01 (new patient) to 4 plus BEGIN and ' +
  'COMMIT (the duplicate check is the message log\'s unique key, the PV1 visit is written with the log entry, the record write is one ' +
  'statement, the fixed statements are prepared once per connection) and the sender is authorized from memory until a credential ' +
  'change is notified. The MLLP scenarios run on a fresh database, and its tables grew from empty faster than autovacuum analyses them ' +
  '(at most once a minute): with no statistics PostgreSQL chose indexes by tie, and a token lookup walked 12,714 rows of another index ' +
  '(4 ms) where the token primary key finds it directly. Whether autovacuum came by during a run is the likely reason earlier runs ranged from 303 to 979 ' +
  'messages a second. The service now analyses a table as soon as it outgrows its statistics (src/storage/planner-statistics.ts): ' +
  'ADT^A01 at 8 connections 845-1,551 a second over the last four full runs. A CPU profile at 8 connections ' +
  'showed the service 44% idle, waiting for PostgreSQL, and about 1.9 ms of CPU per message across all processes: two cores gave about ' +
  '1,050 such messages a second on that run\'s machine, about what was measured there, so the machine, not a wait, is the limit (the ' +
  'machine of the latest run was about twice as fast: baseline (a) 20,187 against 10,596 reads a second). The remaining lever is ' +
  'committing the messages of several connections in one transaction, each still acknowledged only after that commit; it would not ' +
  'close a gap of this size.';

const dicomSmallOrthanc =
  'Orthanc, traced with strace, makes one fdatasync per instance and nothing else: no fsync of the folder that holds the new file and ' +
  'none for its SQLite index, so a crash right after its success answer can lose the file\'s name or its index entry. The service ' +
  'acknowledges only what survives a crash: the temporary file\'s name (its folder\'s fsync, shared, made while the dataset arrives), ' +
  'the file\'s data and its final name (a hard link; the two fsyncs in parallel), then the PostgreSQL commit of the index.';

const dicomSmallOne =
  `${dicomSmallOrthanc} With one association the sender waits for each answer, so the chain of those steps is the limit. Instrumented ` +
  '(mean of 500 instances, from the end of the transfer): the claim of the SOP Instance UID (BEGIN and one statement) returns at 0.7 ms, ' +
  'the temporary name is durable at 0.7 and the file linked at 1.0, the file\'s and the folder\'s fsyncs are done at 1.1-1.4, the ' +
  'COMMIT at 1.9 ms: two flushes in sequence after the transfer (0.3-0.5 ms each on this disk) plus two round trips to PostgreSQL. It ' +
  'was 2.6-3.0 ms: a crash marker was linked and its folder fsynced only after the transfer, and the move waited for it; the temporary ' +
  'file is now the marker itself (start-up recovery reads which instance a linked temporary file holds from its own header). Matching ' +
  'Orthanc\'s single flush would mean dropping one of the durable steps, which the service\'s contract (nothing acknowledged is lost) ' +
  'does not allow.';

const dicomSmallFour =
  `${dicomSmallOrthanc} With four associations the two cores are the limit (80-85% busy during the run, the rest waiting on those ` +
  'flushes). CPU per instance: the service 1.9-2.3 ms (0.6-0.9 of it in the kernel) and PostgreSQL 0.6-0.8 ms, against 1.5-1.6 ms for ' +
  'Orthanc\'s whole process. perf record of the service: 40% of its samples in the kernel, 18 points of them switching threads (each ' +
  'file-system call is a trip to libuv\'s thread pool and back, about nine per instance), 12% in V8\'s garbage collector, 2.6% in ' +
  'SHA-256 (duplicate detection). This round removed a wait: every instance updated its study\'s row and held that lock until COMMIT, ' +
  'so four associations sending one study queued on it (the index statement took 4.5-6 ms instead of 0.4); an instance now writes ' +
  'the study and series rows only when it changes them (new, an attribute still empty, a new modality, "last received" a second ' +
  'old), and folder fsyncs reuse open descriptors. Matching Orthanc would need the service\'s CPU per instance about halved.';

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
  'DICOM small set instances/s, 1 association(s), fsync before success': dicomSmallOne,
  'DICOM small set instances/s, 4 association(s), fsync before success': dicomSmallFour,
  'Peak resident memory of the service, every scenario': memory,
};
