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
