// @ts-check
/**
 * The study page's image viewer: the series with thumbnails, and one series at a time in a
 * Cornerstone3D stack viewport read from the DICOMweb origin as the signed-in user. Scroll with
 * the wheel, the keys, the slider or the buttons; drag for window/level, zoom or pan (one finger
 * on a phone; pinch zooms); everything also from the keyboard. The libraries are loaded only here,
 * from this origin (/assets/viewer-lib/, built from the installed packages).
 */
import { h, replace } from '../dom.js';
import { dicomwebAccess } from './dicomweb-access.js';
import { seriesList } from './series-list.js';

const libraryUrl = '/assets/viewer-lib/cornerstone-viewer.js';
const instanceNumberTag = '00200013';

/** @typedef {{ index: number; count: number; dragTool: string; window: { width: number; center: number } | undefined; zoom: number; scrollTo(i: number): Promise<void>; scrollBy(d: number): Promise<void>; setDragTool(name: string): void; adjustWindow(dw: number, dc: number): void; zoomBy(f: number): void; panBy(dx: number, dy: number): void; reset(): void; onChange(listener: () => void): void; destroy(): void }} Stack */

/** @param {import('../routes.js').PageContext} context @param {any} study */
export function studyViewer(context, study) {
  const status = h('p', { class: 'viewer-status', 'aria-live': 'polite' }, 'Loading the viewer…');
  const viewport = h('div', {
    class: 'viewport', tabindex: '0', role: 'application', 'aria-roledescription': 'image viewer',
    'aria-label': 'Image. Keys: up and down arrows or Page Up and Page Down change the image; W and S widen or narrow the window, A and D move its level; plus and minus zoom; Shift with the arrows pans; R resets.',
    oncontextmenu: (/** @type {Event} */ event) => event.preventDefault(),
  });
  const slider = /** @type {HTMLInputElement} */ (h('input', { type: 'range', min: '1', max: '1', value: '1', step: '1', 'aria-label': 'Image number', disabled: true }));
  const toolButtons = {
    windowLevel: h('button', { type: 'button', 'aria-pressed': 'true', 'data-tool': 'windowLevel' }, 'Window/level'),
    zoom: h('button', { type: 'button', 'aria-pressed': 'false', 'data-tool': 'zoom' }, 'Zoom'),
    pan: h('button', { type: 'button', 'aria-pressed': 'false', 'data-tool': 'pan' }, 'Pan'),
  };
  const previous = h('button', { type: 'button', 'aria-label': 'Previous image' }, '‹');
  const next = h('button', { type: 'button', 'aria-label': 'Next image' }, '›');
  const reset = h('button', { type: 'button' }, 'Reset');
  const toolbar = h('div', { class: 'viewer-toolbar', role: 'toolbar', 'aria-label': 'Image tools' },
    h('span', { class: 'tool-group', role: 'group', 'aria-label': 'Drag to' }, Object.values(toolButtons)),
    h('span', { class: 'tool-group' }, previous, slider, next, reset));
  const seriesSlot = h('div', { class: 'viewer-series' });
  const element = h('div', { class: 'viewer' }, seriesSlot, h('div', { class: 'viewer-main' }, toolbar, h('div', { class: 'viewport-frame' }, viewport), status));

  /** @type {Stack | null} */
  let stack = null;
  /** @type {any} */
  let library = null;
  /** @type {import('./dicomweb-access.js').DicomwebAccess | null} */
  let access = null;
  let opening = 0;

  const describe = () => {
    if (!stack) return;
    const window = stack.window;
    slider.max = String(stack.count);
    slider.value = String(stack.index + 1);
    slider.disabled = stack.count < 2;
    replace(status, `Image ${stack.index + 1} of ${stack.count}`, window ? ` · Window ${window.width} / level ${window.center}` : '', ` · Zoom ${Math.round(stack.zoom * 100)}%`);
  };
  const failed = (/** @type {string} */ message) => replace(status, h('span', { class: 'viewer-error', role: 'alert' }, message));

  const open = async (/** @type {string} */ seriesUid) => {
    const attempt = ++opening;
    replace(status, 'Loading the series…');
    try {
      if (!access || !library) return;
      const response = await access.fetch(`/studies/${study.study_instance_uid}/series/${seriesUid}/metadata`, 'application/dicom+json');
      if (!response.ok) throw new Error(`the DICOMweb origin answered ${response.status}`);
      /** @type {any[]} */
      const instances = await response.json();
      instances.sort((a, b) => Number(a[instanceNumberTag]?.Value?.[0] ?? 0) - Number(b[instanceNumberTag]?.Value?.[0] ?? 0));
      const imageIds = instances.flatMap((instance) => library.addInstance(access?.url, study.study_instance_uid, seriesUid, instance));
      if (attempt !== opening) return;
      stack?.destroy();
      stack = /** @type {Stack} */ (await library.openStack(viewport, imageIds));
      stack.onChange(describe);
      describe();
      viewport.dataset.ready = 'true';
    } catch (error) {
      if (attempt === opening) failed(`These images cannot be shown: ${error instanceof Error ? error.message : String(error)}. The report can still be written.`);
    }
  };

  for (const [name, button] of Object.entries(toolButtons)) {
    button.addEventListener('click', () => {
      stack?.setDragTool(name);
      for (const other of Object.values(toolButtons)) other.setAttribute('aria-pressed', String(other === button));
    });
  }
  previous.addEventListener('click', () => void stack?.scrollBy(-1));
  next.addEventListener('click', () => void stack?.scrollBy(1));
  reset.addEventListener('click', () => stack?.reset());
  slider.addEventListener('input', () => void stack?.scrollTo(Number(slider.value) - 1));
  viewport.addEventListener('keydown', (event) => {
    if (!stack) return;
    const pan = 20;
    /** @type {Record<string, () => void>} */
    const keys = event.shiftKey
      ? { ArrowLeft: () => stack?.panBy(-pan, 0), ArrowRight: () => stack?.panBy(pan, 0), ArrowUp: () => stack?.panBy(0, -pan), ArrowDown: () => stack?.panBy(0, pan) }
      : {
          ArrowDown: () => void stack?.scrollBy(1), PageDown: () => void stack?.scrollBy(1), ArrowRight: () => void stack?.scrollBy(1),
          ArrowUp: () => void stack?.scrollBy(-1), PageUp: () => void stack?.scrollBy(-1), ArrowLeft: () => void stack?.scrollBy(-1),
          Home: () => void stack?.scrollTo(0), End: () => void stack?.scrollTo((stack?.count ?? 1) - 1),
          w: () => stack?.adjustWindow(windowStep(stack), 0), s: () => stack?.adjustWindow(-windowStep(stack), 0),
          d: () => stack?.adjustWindow(0, windowStep(stack) / 2), a: () => stack?.adjustWindow(0, -windowStep(stack) / 2),
          '+': () => stack?.zoomBy(1.25), '=': () => stack?.zoomBy(1.25), '-': () => stack?.zoomBy(0.8),
          r: () => stack?.reset(),
        };
    const action = keys[event.key.length === 1 ? event.key.toLowerCase() : event.key] ?? keys[event.key];
    if (!action || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    action();
    describe();
  });

  void (async () => {
    if (study.series.length === 0) {
      replace(status, 'No images of this study have been indexed.');
      return;
    }
    try {
      access = await dicomwebAccess(context.site.id);
      const list = seriesList(access, study.study_instance_uid, study.series, (seriesUid) => void open(seriesUid));
      replace(seriesSlot, list.element);
      library = await import(libraryUrl);
      const currentAccess = access;
      await library.startViewer({ authorization: () => currentAccess.authorization(), wasmBasePath: new URL('/assets/viewer-lib/', location.href).href });
      const first = study.series[0].series_instance_uid;
      list.select(first);
      await open(first);
    } catch (error) {
      failed(`The viewer could not start: ${error instanceof Error ? error.message : String(error)}. The report can still be written.`);
    }
  })();
  return element;
}

/** A tenth of the current window width, so that a few presses make a visible change at any scale. */
function windowStep(/** @type {Stack | null} */ stack) {
  return Math.max(1, Math.round((stack?.window?.width ?? 100) / 10));
}
