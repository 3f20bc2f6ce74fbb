/**
 * Node options the service runs with, wherever it is started: the `clinical-gateway` launcher's
 * shebang, `npm start`, and the bench, fault and test harnesses (a test keeps them in step).
 *
 * V8 grows each young-generation semi-space up to 16 MB or more under allocation-heavy load
 * (every request parses and serialises JSON), and resident memory follows: in the FHIR benchmark
 * the service peaked at 261 MB with the default and 169 MB with 8 MB semi-spaces. Short-lived
 * request garbage still dies young at 8 MB; scavenges only run more often.
 */
export const serviceNodeOptions: readonly string[] = ['--max-semi-space-size=8'];
