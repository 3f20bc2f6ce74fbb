// @ts-check
import { get, post } from '../api.js';
import { badge, formatDateTime, h, replace } from '../dom.js';
import { describe } from '../forms.js';
import { announce, confirmDialog, emptyState, errorBox, table } from '../widgets.js';

/**
 * The site's FHIR Bulk Data exports: what was asked for, by whom, its state and counts, and a
 * way to cancel a running export or delete a finished one with its files.
 * @param {import('../routes.js').PageContext} context
 */
export async function exportsPage(context) {
  const siteId = context.site.id;
  const { exports: jobs, retention_hours: retention } = await get(`/api/sites/${siteId}/exports`);
  const notice = h('div', { 'aria-live': 'polite' });
  const rows = jobs.map((/** @type {any} */ job) => {
    const what = [
      h('div', null, job.level === 'patient' ? 'Patient/$export' : '$export'),
      h('div', { class: 'meta' }, job.resource_types.join(', ')),
      job.since ? h('div', { class: 'meta' }, `changed since ${formatDateTime(job.since)}`) : null,
    ];
    const counts = Object.entries(job.counts).map(([type, count]) => `${type} ${count}`).join(', ');
    const cancel = job.expired
      ? null
      : h('button', { type: 'button', class: 'danger', onclick: async () => {
          const running = job.state === 'queued' || job.state === 'running';
          const ok = await confirmDialog({
            title: running ? 'Cancel export' : 'Delete export',
            message: running ? 'Cancel this export? Its files are deleted and the client polling it gets 404.' : 'Delete this export and its files now? The client can no longer download them.',
            confirm: running ? 'Cancel export' : 'Delete export',
            danger: true,
          });
          if (!ok) return;
          try {
            await post(`/api/sites/${siteId}/exports/${job.id}/cancel`, {});
            announce(running ? 'Export cancelled.' : 'Export deleted.');
            context.refresh();
          } catch (error) {
            replace(notice, errorBox(describe(error)));
          }
        } }, job.state === 'queued' || job.state === 'running' ? 'Cancel' : 'Delete');
    return [
      formatDateTime(job.created_at),
      [h('div', null, job.requested_by ?? '—'), job.requested_from ? h('div', { class: 'meta' }, job.requested_from) : null],
      what,
      [badge(job.expired ? 'expired' : job.state), job.attempts > 1 ? h('div', { class: 'meta' }, `attempt ${job.attempts}`) : null, job.error ? h('div', { class: 'meta' }, job.error) : null],
      job.finished_at ? formatDateTime(job.finished_at) : '—',
      job.state === 'completed' ? [h('div', null, `${job.resource_count} in ${job.files} file${job.files === 1 ? '' : 's'}`), counts ? h('div', { class: 'meta' }, counts) : null] : job.state === 'running' ? `${job.resource_count} so far` : '—',
      job.expires_at ? formatDateTime(job.expires_at) : '—',
      cancel,
    ];
  });
  return {
    title: 'Exports',
    body: [
      h('h1', null, 'Exports'),
      h('p', { class: 'lead' }, `FHIR Bulk Data exports of this site ($export with one of its API keys). Files are kept ${retention} hours after an export finishes.`),
      notice,
      table({
        caption: 'Bulk Data exports, newest first',
        columns: ['Requested', 'By', 'What', 'State', 'Finished', 'Resources', 'Expires', 'Actions'],
        rows,
        empty: emptyState('No exports yet', h('p', null, 'A FHIR client starts one with GET /fhir/$export and the header Prefer: respond-async.')),
      }),
    ],
  };
}
