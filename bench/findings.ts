/**
 * What profiling found for each target that the last full run missed, keyed by target name.
 * Rendered under the targets table of latest.md; the full analysis is in docs/architecture/bench.md.
 */
export const findings: Record<string, string> = {};
