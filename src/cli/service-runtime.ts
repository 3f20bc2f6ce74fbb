/**
 * Node options the service runs with, wherever it is started: the `clinical-gateway` launcher's
 * shebang, `npm start`, and the bench, fault and test harnesses (a test keeps them in step).
 *
 * V8 grows each young-generation semi-space up to 16 MB or more under allocation-heavy load
 * (every request parses and serialises JSON), and resident memory follows: in the FHIR benchmark
 * the service peaked at 261 MB with the default and 169 MB with 8 MB semi-spaces. Short-lived
 * request garbage still dies young at 8 MB; scavenges only run more often.
 *
 * What does survive (objects of requests still in flight at 64 connections) is promoted, and
 * V8 lets the old generation grow to up to four times the live heap before its next full
 * collection: with about 35 MB live, FHIR runs stepped up to 115 MB committed, and the resident
 * set peaked anywhere from 189 to 259 MB from one run to the next. A growing factor of 1.5 keeps
 * the old generation under 75 MB (peak 180 MB in the same scenarios) for 107 full collections
 * of 5 ms on average in 380 s of FHIR load. Unlike a heap cap, it cannot turn a burst into a crash.
 */
export const serviceNodeOptions: readonly string[] = ['--max-semi-space-size=8', '--heap-growing-percent=50'];

/**
 * glibc malloc settings every process of the service runs with (the launcher's shebang and
 * `npm start` set them; a supervisor adds them for its workers when they are unset, and an
 * operator's own values win). glibc reads them once, when a process starts.
 *
 * By default glibc gives threads up to 8 arenas a core, and a render thread's libvips threads
 * and libuv's pool each fill one that it seldom hands back; and its mmap threshold rises after
 * the first large free, so later frame-sized buffers stay in those arenas once freed. Two arenas,
 * and a trim threshold (which also fixes the mmap threshold at 128 KB) of 4 MB: with one render
 * thread rendering thumbnails, the process peaked at 156-159 MB instead of 171-200, and kept
 * 128-129 MB instead of 141-153 once the thread had ended, for the same CPU a CT thumbnail; in
 * the service a multi-frame one took 10-16% more (the fixed mmap threshold maps and faults in each
 * frame-sized buffer afresh), which the render threads' young generation (render-pool.ts) about
 * makes up. A trim threshold of 128 KB saved a little more but cost CPU (FHIR creates about
 * 1.4 ms a request instead of 0.9 with two workers): memory returned and taken back at every burst.
 * docs/performance.md, "Peak resident memory", has the service's figures.
 */
export const serviceMallocEnvironment: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '4194304' };

/** The malloc settings that `env` does not set already: an operator's own choice wins. */
export function missingMallocSettings(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(serviceMallocEnvironment).filter(([name]) => env[name] === undefined));
}
