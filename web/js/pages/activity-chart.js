// @ts-check
// The activity dashboard's chart (uPlot) and its text alternative: the same figures per hour.
import { h } from '../dom.js';
import { formatInstant } from '../time-format.js';
import { table } from '../widgets.js';

/** uPlot as published on npm (MIT), served by the admin origin from node_modules; loaded on this page only. */
const uPlotModule = '/assets/vendor/uplot/uPlot.esm.js';
export const uPlotStyles = '/assets/vendor/uplot/uPlot.min.css';

/**
 * Each line of the chart: the field of a series point, its legend label and its stroke. Failures
 * are dashed, so that they are told apart without colour.
 * @type {{ field: string, label: string, stroke: string, dash?: number[] }[]}
 */
export const chartLines = [
  { field: 'received', label: 'HL7 received', stroke: '#0b5d6e' },
  { field: 'errored', label: 'HL7 errored or refused', stroke: '#b3261e', dash: [6, 4] },
  { field: 'instances_stored', label: 'DICOM instances stored', stroke: '#4a3a8c' },
  { field: 'instances_failed', label: 'DICOM instances failed', stroke: '#8c3a6b', dash: [2, 3] },
  { field: 'fhir_requests', label: 'FHIR requests', stroke: '#2e6b2e' },
  { field: 'fhir_errored', label: 'FHIR requests errored', stroke: '#8a5a00', dash: [10, 3, 2, 3] },
];

/**
 * @param {HTMLElement} target
 * @param {any[]} series
 * @param {any} [existing]
 */
export async function drawChart(target, series, existing) {
  const data = [series.map((point) => Date.parse(point.at) / 1000), ...chartLines.map((line) => series.map((point) => point[line.field] ?? 0))];
  if (existing) {
    existing.setData(data);
    return existing;
  }
  const { default: uPlot } = await import(uPlotModule);
  // The page is built before it is shown: wait until the chart's box is in the document to size it.
  for (let tries = 0; !target.isConnected && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
  const width = Math.max(240, Math.min(target.clientWidth || 800, 1100));
  return new uPlot(
    {
      width,
      height: 240,
      series: [{}, ...chartLines.map((line) => ({ label: line.label, stroke: line.stroke, width: 2, ...(line.dash ? { dash: line.dash } : {}) }))],
      axes: [{}, { label: 'per 5 min' }],
      scales: { x: { time: true } },
    },
    data,
    target,
  );
}

/**
 * The chart's figures summed per hour, newest first: the text alternative for screen readers and
 * for anyone who wants the numbers.
 * @param {any[]} series
 */
export function hourlyTable(series) {
  /** @type {Map<string, any>} */
  const hours = new Map();
  for (const point of series) {
    const start = new Date(Date.parse(point.at));
    start.setUTCMinutes(0, 0, 0);
    const key = start.toISOString();
    const sums = hours.get(key) ?? Object.fromEntries(chartLines.map((line) => [line.field, 0]));
    for (const line of chartLines) sums[line.field] += point[line.field] ?? 0;
    hours.set(key, sums);
  }
  const rows = [...hours.entries()].reverse().map(([at, sums]) => [formatInstant(at), ...chartLines.map((line) => String(sums[line.field]))]);
  return table({ caption: 'The chart per hour', columns: ['Hour from', ...chartLines.map((line) => line.label)], rows });
}

/**
 * One sentence for the figure: totals of the last 24 hours per line.
 * @param {any[]} series
 */
export function chartSummary(series) {
  const totals = chartLines.map((line) => `${series.reduce((sum, point) => sum + (point[line.field] ?? 0), 0)} ${line.label}`);
  return h('p', { class: 'hint' }, `Last 24 hours: ${totals.join(', ')}.`);
}
