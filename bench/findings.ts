/**
 * What profiling found for each target the committed run missed, keyed by target name. Rendered
 * under the targets table of latest.md; the full analysis, with the measurements, is in
 * docs/architecture.md (section "Targets missed: causes and fixes" of the benchmarks).
 */
const fhirPerRequest =
  'A read is now one statement (the API key comes from a per-process cache that PostgreSQL LISTEN/NOTIFY invalidates on every committed ' +
  'credential change) and one access-log line without a per-request child logger: 0.20x at the start of this work, now about 0.5x. The rest ' +
  'is CPU of the service process on a machine whose two cores also run the load generator and PostgreSQL: in a quick run the service spent ' +
  'about 87 µs of CPU per read (9,082 req/s at 79% of a core) against 38 µs for baseline (a) (20,585 req/s at 78%). strace -c shows the ' +
  'minimum of system calls per read (one writev to PostgreSQL, one write of the response, two reads), and a V8 CPU profile of the read ' +
  'phase puts 64% of the busy time inside those two writes (loopback TCP processed in the sender\'s context on this VM); the remainder is ' +
  'spread thinly over Fastify\'s hooks, content negotiation, the pg row parse, presenting and serialising the resource, ETag and ' +
  'Last-Modified. Next: serve the stored JSON text as it is (content::text) instead of parsing and re-serialising it, and compare the ' +
  'per-call cost of the same writes in baseline (a).';

const fhirCreate =
  'A create is now one statement after validation (a data-modifying CTE writing the current row, the version row and the token rows, with ' +
  'the subject check folded in; autocommit, no BEGIN/COMMIT): 0.09x at the start of this work, now about 0.33x. What is left is the work ' +
  'that makes the resource a FHIR resource: @medplum/core validation takes 34 µs per Patient (measured alone, 20,000 iterations), and ' +
  'PostgreSQL maintains what makes it searchable: the current row with its primary key and eight indexes (business identifier, seq, ' +
  'last_updated, patient, birth date, a trigram GIN index on the name, the covering id index), the version row and three or four token rows ' +
  'with three indexes each, where baseline (b) inserts one row into a table with a primary key only. On two cores shared by the load ' +
  'generator, the service and PostgreSQL, that extra PostgreSQL CPU comes straight out of the service\'s rate. Reaching 0.5x would need ' +
  'fewer indexes written per create (for example the version row and the current row as one table with a partial index), which changes ' +
  'the store\'s design; not done here.';

const mllp =
  'ACK after commit bounds this target by CPU, not by waiting. Per ADT^A01 (new patient) the service now sends 6 statements, down from 14 ' +
  '(the duplicate check is the message log\'s unique key, the PV1 visit is written with the log entry, the record write is one statement) ' +
  'and decides senders from memory until a credential change is notified. Profiled: about 0.5 ms of Node CPU per message (43% of it in ' +
  'socket writes, one per statement and one per ACK; FHIR validation about 10%; ER7 parsing and the ACK about 5%) and about 0.9 ms of ' +
  'PostgreSQL CPU (parse, plan and execution of the statements and the commit record). Two cores therefore cap one-transaction-per-message ' +
  'intake near 1,400 messages a second even with the machine to itself, while 0.5x of the frame-and-ACK baseline, which does no I/O at all, ' +
  'asks for several thousand a second: under 0.2 ms of CPU per message in total. The remaining lever is committing the messages of several ' +
  'connections in one transaction (each still acknowledged only after that commit), and named statements throughout to skip PostgreSQL\'s ' +
  'parse and plan; not done here.';

const dicomSmall =
  'Orthanc, traced with strace, makes one fdatasync per instance and nothing else: no fsync of the folder that holds the new file and none ' +
  'for its SQLite index, so a crash right after its success answer can lose the file\'s name or its index entry. The service acknowledges ' +
  'only what survives a crash: the file\'s fsync, the fsync of its folder (shared by concurrent stores, like a group commit), the crash ' +
  'marker (a hard link in the temporary folder) and the PostgreSQL commit of the index (one statement for instance, study and series). ' +
  'Creating a file costs 0.5-0.8 ms of kernel CPU on this VM. This round took the small set from 0.36-0.50x to the figures above, and a ' +
  'warm service stores about 390 instances/s at one association in a longer run; the bench\'s first instances also pay for creating each ' +
  'new patient (about 3 ms). Matching Orthanc\'s rate would mean dropping one of the durable steps, which the service\'s contract (nothing ' +
  'acknowledged is lost) does not allow.';

export const findings: Record<string, string> = {
  'FHIR read by id, 16 connections': fhirPerRequest,
  'FHIR create, 16 connections': fhirCreate,
  'MLLP ADT^A01, 8 connections, ACK after commit': mllp,
  'DICOM small set instances/s, 1 association(s), fsync before success': dicomSmall,
  'DICOM small set instances/s, 4 association(s), fsync before success': dicomSmall,
};
