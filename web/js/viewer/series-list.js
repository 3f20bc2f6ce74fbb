// @ts-check
/**
 * The study's series as buttons with a thumbnail each, from the DICOMweb origin's
 * /studies/{study}/series/{series}/thumbnail (JPEG). A series the origin cannot render (406, or
 * any other failure) shows a placeholder with its modality instead: the list never waits on it.
 */
import { h, replace } from '../dom.js';

/**
 * @param {import('./dicomweb-access.js').DicomwebAccess} access
 * @param {string} studyUid
 * @param {any[]} series the study page's series (series_instance_uid, modality, series_description, series_number, instance_count)
 * @param {(seriesUid: string) => void} open
 */
export function seriesList(access, studyUid, series, open) {
  /** @type {HTMLButtonElement[]} */
  const buttons = [];
  const select = (/** @type {string} */ seriesUid) => {
    for (const button of buttons) button.setAttribute('aria-pressed', String(button.dataset.series === seriesUid));
  };
  const items = series.map((s) => {
    const label = `${s.modality ?? 'Series'} ${s.series_number ?? ''}`.trim();
    const picture = h('span', { class: 'thumbnail placeholder', 'aria-hidden': 'true' }, s.modality ?? '?');
    const button = /** @type {HTMLButtonElement} */ (h('button', {
      type: 'button', class: 'series-button', 'data-series': s.series_instance_uid, 'aria-pressed': 'false',
      onclick: () => { select(s.series_instance_uid); open(s.series_instance_uid); },
    }, picture, h('span', { class: 'series-label' }, h('strong', null, label), h('span', null, s.series_description ?? ''), h('span', null, `${s.instance_count} image${s.instance_count === 1 ? '' : 's'}`))));
    buttons.push(button);
    void loadThumbnail(access, `/studies/${studyUid}/series/${s.series_instance_uid}/thumbnail`, picture);
    return h('li', null, button);
  });
  return { element: h('ul', { class: 'series-list', 'aria-label': 'Series' }, items), select };
}

/** @param {import('./dicomweb-access.js').DicomwebAccess} access @param {string} path @param {HTMLElement} slot */
async function loadThumbnail(access, path, slot) {
  try {
    const response = await access.fetch(path, 'image/jpeg');
    if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('image/')) return;
    const url = URL.createObjectURL(await response.blob());
    const image = h('img', { src: url, alt: '', width: '64', height: '64' });
    image.addEventListener('load', () => URL.revokeObjectURL(url), { once: true });
    slot.classList.remove('placeholder');
    replace(slot, image);
  } catch {
    // The placeholder stays.
  }
}
