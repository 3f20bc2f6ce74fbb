/**
 * What a rendering of one frame of a stored instance asks for, and the bounds every rendering is
 * held to. The surfaces (DICOMweb /rendered and /thumbnail, the admin app) parse their own
 * parameters into these options; the rendering itself never sees a request.
 */

export type RenderedMediaType = 'image/jpeg' | 'image/png';

/** PS3.3 C.11.2.1.3 VOI LUT Function, as PS3.18 8.3.5.1.2 names it in lower case. */
export type VoiLutFunction = 'linear' | 'linear-exact' | 'sigmoid';

export interface RenderWindow {
  center: number;
  width: number;
  function: VoiLutFunction;
}

export interface RenderOptions {
  mediaType: RenderedMediaType;
  /** From 1; an instance rendering without a frame number renders its first frame. */
  frameNumber: number;
  /** Overrides the dataset's VOI (Window Center/Width, else the pixel values' range). */
  window?: RenderWindow;
  /**
   * The image is scaled to fit inside it, keeping its aspect ratio (a smaller image is enlarged
   * only when `enlarge`); none: the frame's own size.
   */
  viewport?: { width: number; height: number; enlarge: boolean };
  /** JPEG quality 1-100 (ignored for PNG). */
  quality: number;
}

export interface RenderedImage {
  mediaType: RenderedMediaType;
  body: Buffer;
  width: number;
  height: number;
}

/**
 * Bounds of one rendering. A compressed or deflated file is read whole to decode it (an
 * uncompressed little-endian one only up to its frame), and a frame is decoded whole into 4 bytes
 * a pixel before it is scaled, so such files and every frame are capped; anything larger is
 * refused (406) rather than allowed to take the process's memory.
 */
export const renderLimits = {
  /** Files read whole: every transfer syntax but Implicit and Explicit VR Little Endian. */
  maxSourceBytes: 128 * 1024 * 1024,
  /** 48 megapixels: a 6,900 x 6,900 digital radiograph still renders (about 190 MB of RGBA). */
  maxFramePixels: 48 * 1024 * 1024,
  maxViewportSide: 4096,
  /** Longest side of a thumbnail when the request names no viewport. */
  defaultThumbnailSide: 256,
  defaultQuality: 90,
} as const;

/** Why a stored instance cannot be rendered as asked (never a fault of the service). */
export type CannotRenderReason = 'no-pixel-data' | 'unsupported' | 'too-large' | 'corrupt' | 'no-such-frame';

export class CannotRenderError extends Error {
  override readonly name = 'CannotRenderError';
  readonly reason: CannotRenderReason;

  constructor(reason: CannotRenderReason, message: string) {
    super(message);
    this.reason = reason;
  }
}
