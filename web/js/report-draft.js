// @ts-check
/**
 * A report being typed is kept in this browser (localStorage, per user and study) on every
 * keystroke, so that the end of a session (idle limit, sign-out in another tab) cannot lose it:
 * after signing in again the study page offers it back. It is removed once the server has saved
 * the text, and forgotten after a week.
 */
import { h } from './dom.js';
import { formatInstant } from './time-format.js';

const maxAgeMs = 7 * 24 * 60 * 60 * 1000;

/** @param {string} userId @param {string} siteId @param {string} studyUid */
function keyOf(userId, siteId, studyUid) {
  return `cg.report-draft:${userId}:${siteId}:${studyUid}`;
}

/**
 * @param {string} userId @param {string} siteId @param {string} studyUid
 * @returns {{ text: string; keptAt: string } | null}
 */
export function keptDraft(userId, siteId, studyUid) {
  try {
    const raw = localStorage.getItem(keyOf(userId, siteId, studyUid));
    if (!raw) return null;
    const kept = JSON.parse(raw);
    if (typeof kept?.text !== 'string' || typeof kept?.keptAt !== 'string') return null;
    if (Date.now() - Date.parse(kept.keptAt) > maxAgeMs) {
      forgetDraft(userId, siteId, studyUid);
      return null;
    }
    return kept;
  } catch {
    return null;
  }
}

/** @param {string} userId @param {string} siteId @param {string} studyUid @param {string} text */
export function keepDraft(userId, siteId, studyUid, text) {
  try {
    localStorage.setItem(keyOf(userId, siteId, studyUid), JSON.stringify({ text, keptAt: new Date().toISOString() }));
  } catch {
    // Storage full or disabled: the server copy (Save draft) is still there.
  }
}

/** @param {string} userId @param {string} siteId @param {string} studyUid */
export function forgetDraft(userId, siteId, studyUid) {
  try {
    localStorage.removeItem(keyOf(userId, siteId, studyUid));
  } catch {
    // Nothing kept, nothing to remove.
  }
}

/**
 * Keeps what is typed in `textarea` and, when an unsaved text from earlier differs from what the
 * editor starts with, returns a notice offering it back (restore or discard); else null.
 * @param {{ userId: string; siteId: string; studyUid: string; textarea: HTMLTextAreaElement }} spec
 */
export function guardDraft(spec) {
  const { userId, siteId, studyUid, textarea } = spec;
  const kept = keptDraft(userId, siteId, studyUid);
  textarea.addEventListener('input', () => keepDraft(userId, siteId, studyUid, textarea.value));
  if (!kept || kept.text === textarea.value || !kept.text.trim()) return null;
  const restore = h('button', { type: 'button', class: 'primary' }, 'Restore the unsaved text');
  const discard = h('button', { type: 'button' }, 'Discard it');
  const notice = h(
    'div',
    { class: 'callout draft-offer', role: 'status' },
    h('p', null, h('strong', null, 'Unsaved report text was kept in this browser'), ` (last typed ${formatInstant(kept.keptAt)}). It was not saved to the server.`),
    h('pre', { class: 'report-text' }, kept.text),
    h('div', { class: 'actions' }, restore, discard),
  );
  restore.addEventListener('click', () => {
    textarea.value = kept.text;
    notice.remove();
    textarea.focus();
  });
  discard.addEventListener('click', () => {
    forgetDraft(userId, siteId, studyUid);
    notice.remove();
    textarea.focus();
  });
  return notice;
}
