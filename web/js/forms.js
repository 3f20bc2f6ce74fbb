// @ts-check
/**
 * Forms with accessible validation: every input has a label, its hint and its error are tied to
 * it with aria-describedby, an invalid field gets aria-invalid and its message right below it,
 * and the first invalid field receives focus. Problems without a field go in a summary at the top.
 */
import { ApiError } from './api.js';
import { h, replace, uid } from './dom.js';

/**
 * @param {{ label: string; name: string; type?: string; value?: string | null; required?: boolean; hint?: string;
 *   autocomplete?: string; options?: [string, string][]; attrs?: Record<string, any>; multiline?: boolean }} spec
 */
export function field(spec) {
  const id = uid(`f-${spec.name}`);
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const common = {
    id,
    name: spec.name,
    required: spec.required,
    autocomplete: spec.autocomplete,
    'aria-describedby': `${spec.hint ? `${hintId} ` : ''}${errorId}`,
    ...(spec.attrs ?? {}),
  };
  let control;
  if (spec.options) {
    control = h('select', common, spec.options.map(([value, text]) => h('option', { value, selected: value === (spec.value ?? '') }, text)));
  } else if (spec.multiline) {
    control = h('textarea', { ...common, value: spec.value ?? '' });
  } else {
    control = h('input', { ...common, type: spec.type ?? 'text', value: spec.value ?? '' });
  }
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, spec.label, spec.required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null),
    spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null,
    control,
    h('p', { class: 'field-error', id: errorId, 'data-error-for': spec.name }),
  );
}

/** @param {{ label: string; name: string; checked?: boolean; hint?: string }} spec */
export function checkbox(spec) {
  const id = uid(`f-${spec.name}`);
  const hintId = `${id}-hint`;
  return h(
    'div',
    { class: 'field checkbox' },
    h('input', { id, type: 'checkbox', name: spec.name, checked: Boolean(spec.checked), 'aria-describedby': spec.hint ? hintId : undefined }),
    h('label', { for: id }, spec.label),
    spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null,
    h('p', { class: 'field-error', 'data-error-for': spec.name }),
  );
}

/**
 * A form whose submit runs `action(values)`; while it runs the submit button is disabled, and a
 * failure is shown next to the fields.
 * @param {{ label: string; submit: string; children: any[]; action: (values: Record<string, any>, form: HTMLFormElement) => Promise<void>; secondary?: any }} spec
 */
export function form(spec) {
  const summary = h('div', { class: 'form-summary', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit', class: 'primary' }, spec.submit);
  const element = /** @type {HTMLFormElement} */ (
    h('form', { 'aria-label': spec.label, novalidate: true }, summary, spec.children, h('div', { class: 'actions' }, button, spec.secondary ?? null))
  );
  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors(element);
    if (!checkNative(element)) return;
    /** @type {HTMLButtonElement} */ (button).disabled = true;
    element.setAttribute('aria-busy', 'true');
    try {
      await spec.action(formValues(element), element);
    } catch (error) {
      showErrors(element, error);
    } finally {
      /** @type {HTMLButtonElement} */ (button).disabled = false;
      element.removeAttribute('aria-busy');
    }
  });
  return element;
}

/** The browser's own checks (required, type=email, pattern), shown our way. */
/** @param {HTMLFormElement} element */
function checkNative(element) {
  /** @type {{ field: string; message: string }[]} */
  const problems = [];
  for (const control of Array.from(element.elements)) {
    const input = /** @type {HTMLInputElement} */ (control);
    if (!input.name || !input.willValidate || input.checkValidity()) continue;
    const label = element.querySelector(`label[for="${input.id}"]`)?.textContent?.replace(/\s*\*$/, '') ?? input.name;
    let message = input.validationMessage;
    if (input.validity.valueMissing) message = `${label} is required`;
    else if (input.validity.typeMismatch && input.type === 'email') message = 'enter an e-mail address such as name@hospital.org';
    else if (input.validity.patternMismatch && input.title) message = input.title;
    problems.push({ field: input.name, message });
  }
  if (problems.length === 0) return true;
  showErrors(element, { fields: problems, message: 'Please correct the highlighted fields.' });
  return false;
}

/** @param {HTMLFormElement} element */
export function formValues(element) {
  /** @type {Record<string, any>} */
  const values = {};
  for (const control of Array.from(element.elements)) {
    const input = /** @type {HTMLInputElement} */ (control);
    if (!input.name) continue;
    values[input.name] = input.type === 'checkbox' ? input.checked : input.value;
  }
  return values;
}

/** @param {HTMLFormElement} element */
export function clearErrors(element) {
  for (const slot of Array.from(element.querySelectorAll('[data-error-for]'))) replace(slot);
  for (const invalid of Array.from(element.querySelectorAll('[aria-invalid]'))) invalid.removeAttribute('aria-invalid');
  const summary = /** @type {HTMLElement} */ (element.querySelector('.form-summary'));
  summary.hidden = true;
  replace(summary);
}

/**
 * @param {HTMLFormElement} element
 * @param {any} error an ApiError, or { fields, message }
 */
export function showErrors(element, error) {
  const fields = /** @type {{ field: string; message: string }[]} */ (error?.fields ?? []);
  /** @type {HTMLElement | null} */
  let first = null;
  const unplaced = [];
  for (const problem of fields) {
    const slot = element.querySelector(`[data-error-for="${CSS.escape(problem.field)}"]`);
    const input = /** @type {HTMLElement | null} */ (element.querySelector(`[name="${CSS.escape(problem.field)}"]`));
    if (slot && input) {
      replace(slot, problem.message);
      input.setAttribute('aria-invalid', 'true');
      first ??= input;
    } else unplaced.push(`${problem.field}: ${problem.message}`);
  }
  const summary = /** @type {HTMLElement} */ (element.querySelector('.form-summary'));
  const message = fields.length > 0 && unplaced.length === 0 ? 'Please correct the highlighted fields.' : describe(error);
  replace(summary, h('p', null, message), unplaced.length > 0 ? h('ul', null, unplaced.map((text) => h('li', null, text))) : null);
  summary.hidden = false;
  (first ?? summary).focus?.();
  if (!first) summary.setAttribute('tabindex', '-1'), summary.focus();
}

/**
 * Marks each field a failed search names, next to the field (a filter form has no summary).
 * @param {Element} form
 * @param {{ field: string; message: string }[] | undefined} fields
 */
export function markFieldProblems(form, fields) {
  // After the page is in the document: the form is built before the request that failed.
  setTimeout(() => {
    for (const problem of fields ?? []) {
      const slot = form.querySelector(`[data-error-for="${problem.field}"]`);
      if (slot) slot.textContent = problem.message;
      form.querySelector(`[name="${problem.field}"]`)?.setAttribute('aria-invalid', 'true');
    }
  }, 0);
}

/** A sentence for any failure, with the request id of a server fault to quote. */
/** @param {any} error */
export function describe(error) {
  if (error instanceof ApiError) {
    const text = sentence(error.message);
    return error.requestId ? `${text} (request id ${error.requestId})` : text;
  }
  return sentence(error?.message ?? 'Something went wrong.');
}

/** @param {string} text */
function sentence(text) {
  const trimmed = text.trim();
  if (!trimmed) return 'Something went wrong.';
  const capital = trimmed[0].toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/**
 * A search form of filters: its fields, then "submit" and "Clear" buttons. Submitting calls
 * `go` with the non-empty values of `names`, each passed through `normalize`.
 * @param {{ label: string, submit: string, names: string[], fields: Node[], go: (values: Record<string, string>) => void, normalize?: (name: string, value: string) => string }} spec
 */
export function filterForm(spec) {
  const form = h('form', { class: 'filters', 'aria-label': spec.label, role: 'search' },
    ...spec.fields,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, spec.submit),
      h('button', { type: 'button', onclick: () => spec.go({}) }, 'Clear'),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(/** @type {HTMLFormElement} */ (form));
    /** @type {Record<string, string>} */
    const next = {};
    for (const name of spec.names) {
      const value = String(data.get(name) ?? '').trim();
      if (value) next[name] = spec.normalize ? spec.normalize(name, value) : value;
    }
    spec.go(next);
  });
  return form;
}
