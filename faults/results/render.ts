import type { Scenario, ScenarioReport } from '../harness/scenario.ts';

export interface ScenarioOutcome {
  scenario: Scenario;
  report: ScenarioReport;
  durationMs: number;
  error?: string;
}

const escape = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The results table of issue 9 point 7, as Markdown. */
export function renderResults(outcomes: ScenarioOutcome[], run: { scale: number; totalMs: number; partial: boolean }): string {
  const lines: string[] = [];
  const failed = outcomes.filter((o) => o.error || o.report.checks.some((c) => !c.ok));
  lines.push('# Fault campaign results', '');
  lines.push(`Run: ${new Date().toISOString()}, ${outcomes.length} scenario(s), scale ${run.scale}${run.partial ? ' (partial run)' : ''}, ` +
    `${Math.round(run.totalMs / 1000)} s, Node ${process.version}, PostgreSQL 15 (private cluster). ` +
    `Verdict: **${failed.length === 0 ? 'all scenarios passed' : `${failed.length} scenario(s) failed`}**.`, '');
  lines.push('## Summary', '');
  // What each scenario injected is told in its own section below, so the summary stays a table.
  lines.push('| Scenario | Item | Sent | Acknowledged | Found afterwards | Lost | Duplicated | Result |');
  lines.push('|---|---|---:|---:|---:|---:|---:|---|');
  for (const o of outcomes) {
    const verdict = o.error ? 'ABORTED' : o.report.checks.every((c) => c.ok) ? 'pass' : 'FAIL';
    const tallies = o.report.tallies.length ? o.report.tallies : [undefined];
    tallies.forEach((t, i) => {
      lines.push(
        `| ${i === 0 ? o.scenario.title : ''} | ${t ? escape(t.item) : '-'} | ${t?.sent ?? '-'} | ${t?.acknowledged ?? '-'} | ${t?.found ?? '-'} | ${t ? (t.lost === 0 ? '0' : `**${t.lost}**`) : '-'} | ${t ? (t.duplicated === 0 ? '0' : `**${t.duplicated}**`) : '-'} | ${i === 0 ? verdict : ''} |`,
      );
    });
  }
  lines.push('');
  for (const o of outcomes) {
    lines.push(`## ${o.scenario.title}`, '');
    lines.push(`Duration ${Math.round(o.durationMs / 1000)} s (budget ${Math.round(o.scenario.budgetMs / 1000)} s). Injected: ${o.report.injected || '(nothing: aborted before injection)'}`, '');
    if (o.error) lines.push('Aborted:', '', '```', o.error.slice(0, 2000), '```', '');
    lines.push('| Check | Result | Detail |', '|---|---|---|');
    for (const c of o.report.checks) lines.push(`| ${escape(c.name)} | ${c.ok ? 'ok' : '**FAILED**'} | ${escape(c.detail)} |`);
    lines.push('');
    const figures = Object.entries(o.report.figures);
    if (figures.length) {
      lines.push('| Figure | Value |', '|---|---|');
      for (const [name, value] of figures) lines.push(`| ${escape(name)} | ${escape(String(value))} |`);
      lines.push('');
    }
    for (const note of o.report.notes) lines.push(`- ${note}`);
    if (o.report.notes.length) lines.push('');
  }
  return lines.join('\n');
}
