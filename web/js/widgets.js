// @ts-check
/** Shared pieces: confirmation dialogs, copy buttons, status messages, tables, empty states. */
import { h, replace } from './dom.js';

/**
 * A modal confirmation on the native <dialog> (focus is trapped, Escape cancels).
 * @param {{ title: string; message: string; confirm: string; danger?: boolean }} spec
 * @returns {Promise<boolean>}
 */
export function confirmDialog(spec) {
  return new Promise((resolve) => {
    const titleId = `dlg-${Date.now()}`;
    const cancel = h('button', { type: 'button', value: 'cancel' }, 'Cancel');
    const ok = h('button', { type: 'button', class: spec.danger ? 'danger' : 'primary' }, spec.confirm);
    const dialog = /** @type {HTMLDialogElement} */ (
      h('dialog', { 'aria-labelledby': titleId }, h('h2', { id: titleId }, spec.title), h('p', null, spec.message), h('div', { class: 'actions' }, ok, cancel))
    );
    const finish = (/** @type {boolean} */ result) => {
      dialog.close();
      dialog.remove();
      resolve(result);
    };
    ok.addEventListener('click', () => finish(true));
    cancel.addEventListener('click', () => finish(false));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/**
 * A button that copies a text; says so in words (for screen readers too).
 * @param {() => string} text
 * @param {string} label
 */
export function copyButton(text, label) {
  const button = h('button', { type: 'button', class: 'copy', 'aria-label': label }, 'Copy');
  button.addEventListener('click', async () => {
    const value = text();
    let copied = false;
    try {
      await navigator.clipboard.writeText(value);
      copied = true;
    } catch {
      // Clipboard API needs a secure context; fall back to selecting the text for Ctrl+C.
      const area = /** @type {HTMLTextAreaElement} */ (h('textarea', { class: 'offscreen', readonly: true }, value));
      document.body.appendChild(area);
      area.select();
      copied = document.execCommand('copy');
      area.remove();
    }
    replace(button, copied ? 'Copied' : 'Select and copy');
    announce(copied ? 'Copied to the clipboard.' : 'Copy failed: select the text and press Ctrl+C.');
    setTimeout(() => replace(button, 'Copy'), 2000);
  });
  return button;
}

/** @param {string} message */
export function announce(message) {
  const region = document.getElementById('live');
  if (!region) return;
  replace(region);
  // A fresh node so that repeated messages are announced again.
  setTimeout(() => replace(region, message), 50);
}

/**
 * @param {{ caption: string; columns: string[]; rows: any[][]; empty?: any }} spec
 */
export function table(spec) {
  if (spec.rows.length === 0 && spec.empty) return spec.empty;
  return h(
    'div',
    { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': spec.caption },
    h(
      'table',
      null,
      h('caption', { class: 'visually-hidden' }, spec.caption),
      h('thead', null, h('tr', null, spec.columns.map((column) => h('th', { scope: 'col' }, column)))),
      h('tbody', null, spec.rows.map((cells) => h('tr', null, cells.map((cell) => h('td', null, cell))))),
    ),
  );
}

/** @param {string} title @param {...any} body */
export function emptyState(title, ...body) {
  return h('div', { class: 'empty' }, h('h3', null, title), body);
}

/** @param {string} title @param {...any} body */
export function section(title, ...body) {
  return h('section', { class: 'card', 'aria-label': title }, h('h2', null, title), body);
}

/** @param {string} message */
export function errorBox(message) {
  return h('div', { class: 'error-box', role: 'alert' }, h('p', null, message));
}
