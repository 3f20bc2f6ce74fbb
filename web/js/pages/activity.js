// @ts-check
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { browserZone, formatInstant } from '../instant.js';
import { section, table } from '../widgets.js';

/** uPlot as published on npm (MIT), served by the admin origin from node_modules; loaded on this page only. */
const uPlotModule = '/assets/vendor/uplot/uPlot.esm.js';
const uPlotStyles = '/assets/vendor/uplot/uPlot.min.css';
const refreshMs = 10_000;

/** @param {any} counts */
function countCells(counts) {
  return [String(counts.received), String(counts.accepted), String(counts.errored), String(counts.refused)];
}

function useUplotStyles() {
  if (document.querySelector(`link[href="${uPlotStyles}"]`)) return;
  document.head.append(h('link', { rel: 'stylesheet', href: uPlotStyles }));
}

/**
 * @param {HTMLElement} target
 * @param {any[]} series
 * @param {any} [existing]
 */
async function drawChart(target, series, existing) {
  const data = [series.map((point) => Date.parse(point.at) / 1000), series.map((point) => point.received), series.map((point) => point.errored)];
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
      height: 220,
      series: [{}, { label: 'Received', stroke: '#0b5d6e', width: 2 }, { label: 'Errored or refused', stroke: '#b3261e', width: 2 }],
      axes: [{}, { label: 'messages / 5 min' }],
      scales: { x: { time: true } },
    },
    data,
    target,
  );
}

/** @param {import('../routes.js').PageContext} context */
export async function activityPage(context) {
  const siteId = context.site.id;
  useUplotStyles();
  const counts = h('div');
  const senders = h('div');
  const updated = h('p', { class: 'hint', role: 'status' });
  const chart = h('div', { class: 'chart' });
  /** @type {any} */
  let plot;

  const render = async () => {
    const activity = await get(`/api/sites/${siteId}/activity`);
    counts.replaceChildren(table({
      caption: 'HL7 messages of the site',
      columns: ['Period', 'Received', 'Accepted', 'Errored (AE, AR)', 'Sender refused'],
      rows: [['Last hour', ...countCells(activity.last_hour)], ['Last 24 hours', ...countCells(activity.last_day)]],
    }), h('p', null,
      'Last message: ', formatInstant(activity.last_message_at), '. ',
      h('a', { href: `#/sites/${siteId}/refused-traffic` }, `${activity.refused_traffic_last_day} refused connections, associations and requests`), ' in the last 24 hours.'));
    senders.replaceChildren(table({
      caption: 'Senders of the last 24 hours',
      columns: ['Sender (MSH-3 / MSH-4)', 'Transport', 'Last hour: received, errored', 'Last 24 hours: received, accepted, errored, refused', 'Last message'],
      rows: activity.senders.map((/** @type {any} */ s) => [
        h('a', { href: `#/sites/${siteId}/messages${query({ sender: s.sending_facility || s.sending_application })}` }, `${s.sending_application || '—'} / ${s.sending_facility || '—'}`),
        s.transport.toUpperCase(),
        `${s.last_hour.received}, ${s.last_hour.errored}`,
        countCells(s.last_day).join(', '),
        formatInstant(s.last_message_at),
      ]),
      empty: h('p', null, 'No message in the last 24 hours.'),
    }));
    updated.textContent = `Updated ${formatInstant(activity.generated_at)}; every ${refreshMs / 1000} seconds.`;
    const drawn = drawChart(chart, activity.series, plot).then(
      (made) => (plot = made),
      () => chart.replaceChildren(h('p', null, 'The chart could not be drawn; the counts above and below are complete.')),
    );
    if (plot) await drawn;
  };
  await render();
  // Every few seconds while the page is shown; stops once another page replaced it.
  const tick = () => setTimeout(async () => {
    if (!chart.isConnected) return;
    await render().catch(() => undefined);
    tick();
  }, refreshMs);
  tick();

  return {
    title: 'Activity',
    body: [
      h('h1', null, 'Activity'),
      h('p', { class: 'lead' }, `The site's HL7 traffic: what arrived, what was accepted, what failed. Times in ${browserZone()}.`),
      section('Counts', counts, updated),
      section('Messages per five minutes, last 24 hours',
        h('figure', { 'aria-label': 'Chart of messages received, and errored or refused, per five minutes over the last 24 hours' }, chart,
          h('figcaption', { class: 'hint' }, 'Received (blue) and errored or refused (red) messages per five minutes. The counts above and the senders below give the same figures as text.'))),
      section('Senders', senders),
    ],
  };
}
