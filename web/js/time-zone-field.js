// @ts-check
/**
 * The time zone setting of a site or an integration client: a text input with the browser's own
 * list of IANA zone names as suggestions, checked the way the server checks it (the runtime's
 * Intl; the server remains the authority).
 */
import { h, uid } from './dom.js';
import { field } from './forms.js';

/** @type {HTMLElement | null} */
let zoneList = null;

/** One datalist of zone names per page; the browser's Intl lists them (UTC is not among them). */
function zoneListId() {
  if (!zoneList || !zoneList.isConnected) {
    const names = ['UTC', ...(typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [])];
    zoneList = h('datalist', { id: uid('time-zones') }, names.map((name) => h('option', { value: name })));
    document.body.append(zoneList);
  }
  return zoneList.id;
}

/**
 * A message for a name that is not an IANA time zone, or null (blank is allowed: no zone).
 * @param {string} text
 */
export function timeZoneProblem(text) {
  const name = text.trim();
  if (name === '') return null;
  const refused = `"${name}" is not an IANA time zone name (for example Europe/London, America/New_York or UTC)`;
  if (!/^[A-Za-z]/.test(name)) return refused;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return null;
  } catch {
    return refused;
  }
}

/** @param {{ label: string; value?: string | null; hint: string }} spec */
export function timeZoneField(spec) {
  return field({
    label: spec.label,
    name: 'time_zone',
    value: spec.value ?? '',
    hint: spec.hint,
    autocomplete: 'off',
    attrs: { list: zoneListId(), maxlength: 64, spellcheck: 'false', placeholder: 'e.g. Europe/London' },
  });
}
