// The browser side of the study viewer: Cornerstone3D's stack viewport, its DICOM image loader
// (WADO-RS frames, decoded in web workers with the WebAssembly codecs) and its navigation tools,
// behind a small API that web/js/viewer/ uses. Bundled by src/admin/viewer/viewer-bundle.ts.
import { Enums as CoreEnums, RenderingEngine, getRenderingEngine, init as initCore, metaData, utilities as coreUtilities } from '@cornerstonejs/core';
import { init as initLoader, wadors } from '@cornerstonejs/dicom-image-loader';
import { Enums as ToolEnums, PanTool, StackScrollTool, ToolGroupManager, WindowLevelTool, ZoomTool, addTool, init as initTools } from '@cornerstonejs/tools';

const { MouseBindings } = ToolEnums;
// PS3.18 8.7.3.5: frames are sent in the stored transfer syntax (the origin never transcodes), so
// every frame media type the decoders read is acceptable, not only uncompressed octet-stream.
const frameAccept = ['application/octet-stream', 'image/jpeg', 'image/jls', 'image/jp2', 'image/jpx', 'image/dicom-rle', 'image/jphc', 'image/jxl']
  .map((type) => `multipart/related; type="${type}"; transfer-syntax=*`).join(', ');
const engineId = 'cg-study-viewer';
const dragTools = { windowLevel: WindowLevelTool.toolName, zoom: ZoomTool.toolName, pan: PanTool.toolName };
let started;

/**
 * Starts the libraries once. `authorization` answers the Authorization header for the next
 * request (the token may have been renewed), `wasmBasePath` where the decoders' .wasm files are.
 */
export function startViewer({ authorization, wasmBasePath }) {
  started ??= (async () => {
    await initCore();
    initLoader({ maxWebWorkers: 1, wasmBasePath, beforeSend: async () => ({ Authorization: await authorization(), Accept: frameAccept }) });
    await initTools();
    for (const tool of [WindowLevelTool, PanTool, ZoomTool, StackScrollTool]) addTool(tool);
  })();
  return started;
}

/**
 * Registers the DICOM JSON metadata (PS3.18 F.2) of one instance; answers the WADO-RS image ids
 * of its frames (one for a single-frame image).
 */
export function addInstance(dicomwebUrl, studyUid, seriesUid, instanceJson) {
  const instanceUid = instanceJson['00080018']?.Value?.[0];
  const frames = Math.max(1, Number(instanceJson['00280008']?.Value?.[0] ?? 1) || 1);
  const imageIds = [];
  for (let frame = 1; frame <= frames; frame++) {
    const imageId = `wadors:${dicomwebUrl}/studies/${studyUid}/series/${seriesUid}/instances/${instanceUid}/frames/${frame}`;
    wadors.metaDataManager.add(imageId, instanceJson);
    imageIds.push(imageId);
  }
  return imageIds;
}

/** A stack viewport on `element` showing `imageIds`, with drag, wheel and touch navigation. */
export async function openStack(element, imageIds) {
  getRenderingEngine(engineId)?.destroy();
  ToolGroupManager.destroyToolGroup(engineId);
  const engine = new RenderingEngine(engineId);
  engine.enableElement({ viewportId: engineId, element, type: CoreEnums.ViewportType.STACK });
  const viewport = engine.getViewport(engineId);
  const tools = ToolGroupManager.createToolGroup(engineId);
  for (const name of [...Object.values(dragTools), StackScrollTool.toolName]) tools.addTool(name);
  tools.addViewport(engineId, engineId);
  // Fixed: wheel scrolls the stack, right drag or a pinch zooms, middle drag or three fingers pan.
  // The left button and one finger drive the tool chosen in the toolbar (window/level at first).
  tools.setToolActive(StackScrollTool.toolName, { bindings: [{ mouseButton: MouseBindings.Wheel }] });
  tools.setToolActive(ZoomTool.toolName, { bindings: [{ mouseButton: MouseBindings.Secondary }, { numTouchPoints: 2 }] });
  tools.setToolActive(PanTool.toolName, { bindings: [{ mouseButton: MouseBindings.Auxiliary }, { numTouchPoints: 3 }] });
  tools.setToolPassive(WindowLevelTool.toolName);
  let dragTool = 'windowLevel';
  const bindDrag = (name) => {
    for (const tool of Object.values(dragTools)) tools.setToolPassive(tool);
    tools.setToolActive(dragTools[name], { bindings: [{ mouseButton: MouseBindings.Primary }, { numTouchPoints: 1 }] });
    dragTool = name;
  };
  bindDrag('windowLevel');
  await viewport.setStack(imageIds, 0);
  viewport.render();

  const listeners = new Set();
  const changed = () => { for (const listener of listeners) listener(); };
  element.addEventListener(CoreEnums.Events.STACK_NEW_IMAGE, changed);
  element.addEventListener(CoreEnums.Events.VOI_MODIFIED, changed);
  element.addEventListener(CoreEnums.Events.CAMERA_MODIFIED, changed);
  const resize = new ResizeObserver(() => engine.resize(true, true));
  resize.observe(element);

  return {
    get index() { return viewport.getCurrentImageIdIndex(); },
    get count() { return imageIds.length; },
    get dragTool() { return dragTool; },
    /** The window as width and centre, from the displayed VOI range. */
    get window() {
      const range = viewport.getProperties().voiRange;
      if (!range) return undefined;
      const { windowWidth, windowCenter } = coreUtilities.windowLevel.toWindowLevel(range.lower, range.upper);
      return { width: Math.round(windowWidth), center: Math.round(windowCenter) };
    },
    get zoom() { return viewport.getZoom(); },
    async scrollTo(index) {
      await viewport.setImageIdIndex(Math.max(0, Math.min(imageIds.length - 1, index)));
    },
    async scrollBy(delta) { await this.scrollTo(this.index + delta); },
    setDragTool: bindDrag,
    /** Widens (positive) or narrows the window and moves its centre, in stored pixel units. */
    adjustWindow(widthDelta, centerDelta) {
      const current = this.window;
      if (!current) return;
      const width = Math.max(1, current.width + widthDelta);
      const center = current.center + centerDelta;
      const { lower, upper } = coreUtilities.windowLevel.toLowHighRange(width, center);
      viewport.setProperties({ voiRange: { lower, upper } });
      viewport.render();
    },
    zoomBy(factor) { viewport.setZoom(viewport.getZoom() * factor); viewport.render(); },
    panBy(dx, dy) { const [x, y] = viewport.getPan(); viewport.setPan([x + dx, y + dy]); viewport.render(); },
    reset() { viewport.resetProperties(); viewport.resetCamera(); viewport.render(); },
    onChange(listener) { listeners.add(listener); },
    /** Image details of the displayed image, for the overlay. */
    describe() {
      const imageId = viewport.getCurrentImageId();
      const plane = metaData.get('imagePlaneModule', imageId) ?? {};
      return { rows: plane.rows, columns: plane.columns };
    },
    destroy() {
      resize.disconnect();
      ToolGroupManager.destroyToolGroup(engineId);
      engine.destroy();
    },
  };
}
