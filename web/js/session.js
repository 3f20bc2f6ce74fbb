// @ts-check
/**
 * Signing out, and the idle warning: the server ends a session after idle_timeout_seconds without
 * a request (CG_ADMIN_SESSION_IDLE_SECONDS); idle_warning_seconds before that a dialog offers to
 * stay signed in (POST /api/session/extend) and counts down, so that nobody loses their place,
 * or a report being typed, to a timeout they did not see coming.
 */
import { del, post, whenActive } from './api.js';
import { h, replace } from './dom.js';

/** Signs out on the server; the page forgets the user whatever the answer. */
/** @param {() => void} done */
export async function signOut(done) {
  stopIdleWatch();
  try {
    await del('/api/session');
  } catch {
    // The session may have ended already; nothing else to do.
  }
  done();
}

/** Why the sign-in page is shown, when the session ended under the user (read once). */
let endedNotice = '';

/** @param {string} notice */
export function noteSessionEnded(notice) {
  endedNotice = notice;
}

export function takeSessionEndedNotice() {
  const notice = endedNotice;
  endedNotice = '';
  return notice;
}

/** @type {{ idle: number; warning: number; onEnded: () => void } | null} */
let watch = null;
let lastActivity = Date.now();
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
/** @type {HTMLDialogElement | null} */
let dialog = null;

/**
 * Starts (or restarts) watching for idleness with the session's limits.
 * @param {{ idle_timeout_seconds?: number; idle_warning_seconds?: number }} session
 * @param {() => void} onEnded called when the limit passes without an answer
 */
export function watchIdle(session, onEnded) {
  if (!session.idle_timeout_seconds) return;
  watch = { idle: session.idle_timeout_seconds, warning: session.idle_warning_seconds ?? 120, onEnded };
  noteActivity();
}

export function stopIdleWatch() {
  watch = null;
  clearTimeout(timer);
  closeWarning();
}

/**
 * Tabs of one browser share the session cookie, so activity in any tab keeps the session alive:
 * each tab publishes its last request here and reads the others' before warning or signing out.
 */
const sharedActivityKey = 'cg.session-activity';

function sharedActivity() {
  try {
    return Number(localStorage.getItem(sharedActivityKey)) || 0;
  } catch {
    return 0;
  }
}

function noteActivity() {
  lastActivity = Date.now();
  try {
    localStorage.setItem(sharedActivityKey, String(lastActivity));
  } catch {
    // Storage disabled: each tab then judges by its own requests.
  }
  if (!watch) return;
  closeWarning();
  schedule();
}

whenActive(noteActivity);

function schedule() {
  clearTimeout(timer);
  if (!watch) return;
  const warnAt = lastActivity + (watch.idle - watch.warning) * 1000;
  timer = setTimeout(tick, Math.max(0, warnAt - Date.now()));
}

/** The moment the server may end the session: the idle limit less the margin for its bookkeeping. */
function endsAt() {
  if (!watch) return Date.now();
  // idle_warning_seconds includes the server's touch interval; the last two minutes (or third)
  // of it are the countdown, the rest is that margin.
  const margin = watch.warning - Math.min(120, Math.floor(watch.idle / 3));
  return lastActivity + (watch.idle - margin) * 1000;
}

function tick() {
  if (!watch) return;
  const elsewhere = sharedActivity();
  if (elsewhere > lastActivity) {
    // Another tab was used meanwhile: the session is younger than this tab thought.
    lastActivity = elsewhere;
    closeWarning();
    schedule();
    return;
  }
  const left = Math.round((endsAt() - Date.now()) / 1000);
  if (left <= 0) {
    const { onEnded } = watch;
    noteSessionEnded('You were signed out after a period without activity. Sign in again to continue: a report you were writing is kept in this browser and offered back.');
    // Ended here too, in case the server's own clock has not got there yet.
    void signOut(onEnded);
    return;
  }
  showWarning(left);
  timer = setTimeout(tick, 1000);
}

/** @param {number} seconds */
function countdown(seconds) {
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return minutes > 0 ? `${minutes} min ${rest} s` : `${rest} s`;
}

/** @param {number} secondsLeft */
function showWarning(secondsLeft) {
  if (dialog) {
    const slot = dialog.querySelector('[data-countdown]');
    if (slot) replace(slot, countdown(secondsLeft));
    return;
  }
  const stay = h('button', { type: 'button', class: 'primary' }, 'Stay signed in');
  const leave = h('button', { type: 'button' }, 'Sign out now');
  const problem = h('p', { class: 'field-error', role: 'alert' });
  dialog = /** @type {HTMLDialogElement} */ (h(
    'dialog',
    { 'aria-labelledby': 'idle-title', 'aria-describedby': 'idle-text', class: 'idle-warning' },
    h('h2', { id: 'idle-title' }, 'Your session is about to end'),
    h('p', { id: 'idle-text' }, 'You have not used the app for a while. For the patients\' privacy you will be signed out in ', h('strong', { 'data-countdown': '' }, countdown(secondsLeft)), '.'),
    // Announced once, not every second: the countdown itself is not a live region.
    problem,
    h('div', { class: 'actions' }, stay, leave),
  ));
  stay.addEventListener('click', async () => {
    try {
      await post('/api/session/extend', {});
    } catch (error) {
      replace(problem, /** @type {any} */ (error).status === 401 ? 'The session has already ended: sign in again.' : 'The service did not answer; try again.');
    }
  });
  leave.addEventListener('click', () => {
    if (!watch) return;
    const { onEnded } = watch;
    void signOut(onEnded);
  });
  dialog.addEventListener('cancel', (event) => event.preventDefault());
  document.body.appendChild(dialog);
  dialog.showModal();
  stay.focus();
}

function closeWarning() {
  if (!dialog) return;
  dialog.close();
  dialog.remove();
  dialog = null;
}
