import type { PrivatePostgres } from './private-postgres.ts';

/** One line of the results table: what was sent of one kind of item and what became of it. */
export interface Tally {
  item: string;
  sent: number;
  acknowledged: number;
  found: number;
  lost: number;
  duplicated: number;
}

/** One assertion of a scenario; a scenario passes when every check holds. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ScenarioReport {
  injected: string;
  tallies: Tally[];
  checks: Check[];
  figures: Record<string, string | number>;
  notes: string[];
}

export interface ScenarioContext {
  /** A fresh working directory for this scenario (data dir, logs, generated files). */
  workDir: string;
  postgres: PrivatePostgres;
  /** 1 for the full campaign; smaller for a quick development run. */
  scale: number;
  log(message: string): void;
}

export interface Scenario {
  id: string;
  title: string;
  /** Upper bound of the scenario's running time; it fails when exceeded. */
  budgetMs: number;
  run(context: ScenarioContext, report: ScenarioReport): Promise<void>;
}

export function newReport(): ScenarioReport {
  return { injected: '', tallies: [], checks: [], figures: {}, notes: [] };
}

export function check(report: ScenarioReport, name: string, ok: boolean, detail = ''): boolean {
  report.checks.push({ name, ok, detail });
  return ok;
}
