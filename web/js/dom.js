// @ts-check
/**
 * A tiny element builder. Text always goes in as text nodes, never as HTML, so data from the
 * server (patient names, HL7 text) cannot inject markup.
 */

import { formatInstant } from './time-format.js';

/**
 * @param {string} tag
 * @param {Record<string, any> | null} [props]
 * @param {...any} children
 * @returns {HTMLElement}
 */
export function h(tag, props, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name === 'class') element.className = String(value);
    else if (name === 'value' || name === 'checked' || name === 'selected' || name === 'disabled') /** @type {any} */ (element)[name] = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/** @param {Node} parent @param {any[]} children */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** @param {Node} parent @param {...any} children */
export function replace(parent, ...children) {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

let idCounter = 0;
/** @param {string} prefix */
export function uid(prefix) {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/** An instant in the browser's zone with seconds and its UTC offset (time-format.js). @param {string | null | undefined} iso */
export function formatDateTime(iso) {
  return formatInstant(iso);
}

/** @param {string | null | undefined} isoDate */
export function formatDate(isoDate) {
  if (!isoDate) return '—';
  const [y, m, d] = isoDate.split('-').map(Number);
  if (!y || !m || !d) return isoDate;
  return new Date(y, m - 1, d).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/** A status word as a badge; the word itself carries the meaning (not only the colour). */
/** @param {string | null | undefined} text @param {string} [tone] */
export function badge(text, tone) {
  return h('span', { class: `badge ${tone ?? toneOf(text)}` }, text ?? 'none');
}

/** @param {string | null | undefined} text */
function toneOf(text) {
  switch ((text ?? '').toLowerCase()) {
    case 'completed': case 'aa': case 'ca': case 'active': case 'enabled': case 'processed': return 'good';
    case 'in progress': case 'draft': return 'info';
    case 'discontinued': case 'ae': case 'error': case 'revoked': case 'disabled': case 'inactive': return 'bad';
    case 'ar': case 'rejected': return 'bad';
    default: return 'neutral';
  }
}
