// @ts-check
import { get, query } from '../api.js';
import { h } from '../dom.js';
import { browserZone, formatInstant } from '../time-format.js';
import { section, table } from '../widgets.js';
import { chartSummary, drawChart, hourlyTable, uPlotStyles } from './activity-chart.js';
import { aeTitleTable, clientTable, healthList, keyTable } from './activity-senders.js';

const refreshMs = 10_000;

/** @param {any} counts */
function countCells(counts) {
  return [String(counts.received), String(counts.accepted), String(counts.errored), String(counts.refused)];
}

function useUplotStyles() {
  if (document.querySelector(`link[href="${uPlotStyles}"]`)) return;
  document.head.append(h('link', { rel: 'stylesheet', href: uPlotStyles }));
}

/** @param {import('../routes.js').PageContext} context */
export async function activityPage(context) {
  const siteId = context.site.id;
  useUplotStyles();
  const health = h('div');
  const counts = h('div');
  const senders = h('div');
  const clients = h('div');
  const keys = h('div');
  const aeTitles = h('div');
  const updated = h('p', { class: 'hint', role: 'status' });
  const chart = h('div', { class: 'chart' });
  const summary = h('div');
  const hourly = h('div');
  /** @type {any} */
  let plot;

  const render = async () => {
    const activity = await get(`/api/sites/${siteId}/activity`);
    health.replaceChildren(healthList(activity));
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
    clients.replaceChildren(clientTable(activity, siteId));
    keys.replaceChildren(keyTable(activity));
    aeTitles.replaceChildren(aeTitleTable(activity));
    summary.replaceChildren(chartSummary(activity.series));
    hourly.replaceChildren(hourlyTable(activity.series));
    updated.textContent = `Updated ${formatInstant(activity.generated_at)}; every ${refreshMs / 1000} seconds.`;
    const drawn = drawChart(chart, activity.series, plot).then(
      (made) => (plot = made),
      () => chart.replaceChildren(h('p', null, 'The chart could not be drawn; the table of its figures per hour below is complete.')),
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
      h('p', { class: 'lead' }, `The site's traffic (HL7, DICOM, FHIR and every API key) and the service's health. Times in ${browserZone()}.`),
      section('Service health', health),
      section('Counts', counts, updated),
      section('Throughput and errors per five minutes, last 24 hours',
        h('figure', { 'aria-label': 'Chart of HL7 messages, DICOM instances and FHIR requests, and their failures, per five minutes over the last 24 hours' }, chart,
          h('figcaption', { class: 'hint' }, 'Solid lines: received, stored or requested; dashed lines: errored or failed. The legend under the chart names each line; the table below gives the same figures per hour.')),
        summary,
        h('details', null, h('summary', null, 'The chart\'s figures per hour'), hourly)),
      section('HL7 senders (MSH-3 / MSH-4)', senders),
      section('Integration clients', clients),
      section('API keys', keys),
      section('Calling AE titles (DICOM)', aeTitles),
    ],
  };
}
