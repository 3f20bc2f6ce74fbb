/**
 * What profiling found for each target the committed run missed, keyed by target name. Rendered
 * under the targets table of latest.md; the full analysis, with the measurements, is in
 * docs/architecture/performance.md (section "Targets: what profiling found, what was fixed, what remains").
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
  'Met in the last full run (0.09x at the start of this work, 0.35x before creates were batched). A create is one statement after ' +
  'validation (a data-modifying CTE writing the current row, the version row and the token rows, with the subject check folded in), ' +
  'and concurrent creates are written together (src/domain/records/create-batch.ts): the creates of one event-loop turn, and those ' +
  'arriving while a batch runs, leave as one statement committed by one transaction, each answered only after that commit; one batch ' +
  'runs at a time unless it has run for 25 ms. Measured before the batching: per create the service spent 181-257 µs of CPU and ' +
  'PostgreSQL 253-323 µs, per baseline (b) insert its server 40-88 µs and PostgreSQL 71-90 µs; batched, PostgreSQL\'s share per ' +
  'create roughly halves. Two batches allowed at once made 54% of batches single creates (a finished batch let the next create start ' +
  'one alone); gathering each event-loop turn and one batch at a time gave 1.09x over that. When this figure misses, look at the ' +
  'machine first: the service still spends about twice the CPU per create of baseline (b)\'s server (validation alone about 40 µs), ' +
  'so a load generator or PostgreSQL competing for the two cores hurts it more. Details: docs/architecture/performance.md.';

const mllp =
  'Not reachable on this machine while every ACK waits for its commit. 0.5x of the frame-and-ACK baseline, which does no I/O, means ' +
  '10,300-25,000 messages a second (its rate at 8 connections was 20,627 to 49,966 over the last ten full runs): at most 80-194 µs of ' +
  'CPU per message, both cores together, for everything: the MLLP exchange, parsing, validation and a durable commit. Baseline (b) of ' +
  'the same run is the floor of any ACK-after-commit intake, one single-row INSERT per request with the same commit settings and nothing ' +
  'else, and it peaks at 5,500-13,000 a second over those runs, always below half the frame-and-ACK rate of the same run. The intake ' +
  'itself went from 14 statements per ADT^A01 (new patient) to 4 plus BEGIN and ' +
  'COMMIT (the duplicate check is the message log\'s unique key, the PV1 visit is written with the log entry, the record write is one ' +
  'statement, the fixed statements are prepared once per connection) and the sender is authorized from memory until a credential ' +
  'change is notified. The MLLP scenarios run on a fresh database, and its tables grew from empty faster than autovacuum analyses them ' +
  '(at most once a minute): with no statistics PostgreSQL chose indexes by tie, and a token lookup walked 12,714 rows of another index ' +
  '(4 ms) where the token primary key finds it directly. Whether autovacuum came by during a run is the likely reason earlier runs ranged from 303 to 979 ' +
  'messages a second. The service now analyses a table as soon as it outgrows its statistics (src/storage/planner-statistics.ts): ' +
  'ADT^A01 at 8 connections 814-1,551 a second over the last nine full runs. A CPU profile at 8 connections ' +
  'showed the service 44% idle, waiting for PostgreSQL, and about 1.9 ms of CPU per message across all processes: two cores gave about ' +
  '1,050 such messages a second on that run\'s machine, about what was measured there, so the machine, not a wait, is the limit (the ' +
  'machine of the latest run was about twice as fast: baseline (a) 20,187 against 10,596 reads a second). The remaining lever is ' +
  'committing the messages of several connections in one transaction, each still acknowledged only after that commit (what FHIR ' +
  'creates now do, through src/storage/batch-queue.ts); it would not close a gap of this size.';

const dicomSmallOrthanc =
  'Orthanc, traced with strace, makes one fdatasync per instance and nothing else (20 instances: 20 fdatasync of the DICOM files, none ' +
  'of its SQLite WAL index-wal, none of a folder), so a crash right after its success answer can lose the file\'s name or its index ' +
  'entry. The service acknowledges only what survives a crash: the temporary file\'s name (durable ahead of the transfer: a spare file ' +
  'named in a batch, or its folder\'s fsync while the dataset arrives), the file\'s data and its final name (a hard link; the two ' +
  'fsyncs in parallel), then the PostgreSQL commit of the index (a WAL flush), which must follow the file\'s flush: an index entry ' +
  'committed first could, after a crash, answer a retry "already stored" for a file that never reached the disk.';

/** Measured by acknowledging early, for the measurement only, in a copy of the service. */
const flushesAreNotTheGap =
  'The flushes the service makes beyond Orthanc\'s are not what keeps it behind. Measured on a harness (the service on the local ' +
  'PostgreSQL, six rounds, each the service as it is, two copies changed for the measurement only, and Orthanc, in turn; medians): ' +
  'answering without waiting for the final name\'s folder fsync gave 291 and 423 instances/s at one and four associations against ' +
  '319 and 470 for the service as it is (no gain); committing the index beside the file\'s flush instead of after it, and answering ' +
  'after both, 338 and 450 (1.06x at one association, nothing at four); Orthanc 371 and 635. Per instance, at four associations, the ' +
  'whole machine spent 3.2-3.8 ms of CPU on the service\'s runs (the service 1.8-2.0 ms, PostgreSQL 0.6-0.7) against 2.5-2.8 ms on ' +
  'Orthanc\'s (its process 1.6-1.8): the gap is the CPU that the index in PostgreSQL and the service\'s own work add, not a flush. ' +
  'This machine\'s ext4 runs without a journal (perf shows ext4_fsync_nojournal), so each fsync writes its own data and inode, and ' +
  'a file\'s name is durable only through its folder\'s fsync. Part of that CPU is gone: the instance row\'s two deferred foreign ' +
  'keys locked its study\'s and its series\' rows at every commit, rows that every store of the series locks too; without them ' +
  '(migration 0502) 1.09x the instances a second at one and at four associations (medians of 11 alternating pairs each, 8 above 1), ' +
  'PostgreSQL 0.55-0.65 ms of CPU per instance where it spent 0.6-0.9.';

const dicomSmallOne =
  `${dicomSmallOrthanc} With one association the sender waits for each answer, so the chain of those steps is on the critical path. Timed ` +
  'inside the handler on a harness (the service on the local PostgreSQL, storescu, medians of 4,000 instances), from the end of the ' +
  'transfer: pool checkout and BEGIN done at 0.25 ms, the claim of the SOP Instance UID back at 0.8, the temporary name durable at 0.8 ' +
  'and the file linked at 0.9, the fsyncs done at 1.0-1.2, COMMIT at 1.6 ms. Two changes took the BEGIN round trip and the wait for ' +
  'the temporary name off that chain: BEGIN is sent while the dataset arrives, and spare temporary files are created and named in ' +
  'batches before they are needed. With both, in the same process: BEGIN done at 0.14, file linked at 0.33, claim back at 0.66, file ' +
  'durable at 0.92, COMMIT at 1.30 ms; in eight alternating pairs of harness runs, 1.02x-1.15x the throughput without them (geometric ' +
  'mean 1.10x). The bench itself cannot resolve that: in one hour, `--only dicom` on the previous code gave 0.80x and 0.94x Orthanc ' +
  'and on this code 0.69x-0.81x, with Orthanc between 329 and 460 instances/s. What remains after the transfer is the file\'s flush ' +
  'and then PostgreSQL\'s WAL flush, two flushes in sequence against Orthanc\'s one, plus the claim statement (0.5 ms, in parallel ' +
  `with the first flush). ${flushesAreNotTheGap}`;

const dicomSmallFour =
  `${dicomSmallOrthanc} With four associations the two cores are the limit (80-85% busy during the run). ` +
  'CPU per instance: the service 1.7-2.3 ms and PostgreSQL 0.6-0.9 ms, against 1.5-2.1 ms for Orthanc\'s whole process; ' +
  'by thread, once warm (a process\'s third run): the main thread 0.9-1.0 ms, V8\'s helper threads 0.06-0.22, libuv\'s thread pool ' +
  '0.7 ms of kernel time (the file-system calls: create, write, two fsyncs, link, close, unlink). perf record of the service: 40% of ' +
  'its samples in the kernel, 18 points of them switching threads, 12% in V8\'s garbage collector, 2.6% in SHA-256. Tried and not ' +
  'kept: the quick file-system calls (link, unlink, close, the dataset written in one writev at the end) made synchronously on the ' +
  'main thread saved about 0.2 ms of CPU per instance in alternating runs, but creating a file then took 0.11 ms on average on the ' +
  'event loop (waiting on the file system while other fsyncs run), which would stall every other surface. Spare files and BEGIN ' +
  'ahead: 1.025x in eight alternating pairs; the embedded PostgreSQL reached over its Unix socket instead of loopback TCP: 1.08x (7 ' +
  'of 8 pairs above 1). Earlier rounds removed a lock (every instance wrote its study\'s row and held it until COMMIT) and reuse ' +
  `open folder descriptors for fsyncs. ${flushesAreNotTheGap} Matching Orthanc needs the service's and PostgreSQL's CPU per ` +
  'instance cut by about a quarter together.';

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
