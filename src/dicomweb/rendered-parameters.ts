/**
 * The request side of rendered resources (PS3.18 8.3.5.1 and 10.4.1.1.3): the media type from
 * Accept or the `accept` query parameter (JPEG unless PNG is asked for), and the `window`,
 * `viewport` and `quality` query parameters. Anything malformed is a 400 naming the parameter.
 */
import { renderLimits, type RenderedMediaType, type RenderOptions, type RenderWindow, type VoiLutFunction } from '../domain/imaging/rendering/render-options.ts';
import { HttpProblem } from '../platform/http/http-problem.ts';
import { parseAccept } from './media-types.ts';

const supportedParameters = ['accept', 'window', 'viewport', 'quality', 'iccprofile'];
const voiLutFunctions: readonly VoiLutFunction[] = ['linear', 'linear-exact', 'sigmoid'];

export function renderedMediaType(acceptHeader: string | undefined, acceptParameter: string | undefined): RenderedMediaType {
  for (const range of parseAccept(acceptParameter ?? acceptHeader)) {
    if (range.type === 'image/png') return 'image/png';
    if (['image/jpeg', 'image/*', '*/*'].includes(range.type)) return 'image/jpeg';
  }
  throw new HttpProblem(406, 'not-acceptable', 'rendered resources are available as image/jpeg or image/png only');
}

function invalid(parameter: string, expected: string): HttpProblem {
  return new HttpProblem(400, 'invalid', `query parameter ${parameter}: ${expected}`);
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(name, 'give it once');
  return value;
}

function parseWindow(text: string): RenderWindow {
  const [center, width, fn = 'linear', ...rest] = text.split(',').map((part) => part.trim());
  const numbers = [Number(center), Number(width)];
  if (rest.length > 0 || center === '' || width === '' || numbers.some((n) => !Number.isFinite(n))) throw invalid('window', 'center,width[,function] with decimal numbers');
  if (!voiLutFunctions.includes(fn.toLowerCase() as VoiLutFunction)) throw invalid('window', `function is one of ${voiLutFunctions.join(', ')}`);
  if (numbers[1]! < 1) throw invalid('window', 'width is at least 1');
  return { center: numbers[0]!, width: numbers[1]!, function: fn.toLowerCase() as VoiLutFunction };
}

function parseViewport(text: string): { width: number; height: number; enlarge: boolean } {
  const parts = text.split(',').map((part) => part.trim());
  const side = (value: string | undefined) => (value !== undefined && /^[1-9][0-9]{0,4}$/.test(value) ? Number(value) : Number.NaN);
  const [width, height] = [side(parts[0]), side(parts[1])];
  if (parts.length !== 2 || Number.isNaN(width) || Number.isNaN(height)) throw invalid('viewport', 'width,height in pixels (source cropping is not offered)');
  if (width > renderLimits.maxViewportSide || height > renderLimits.maxViewportSide) throw invalid('viewport', `at most ${renderLimits.maxViewportSide} x ${renderLimits.maxViewportSide}`);
  return { width, height, enlarge: true };
}

function parseQuality(text: string): number {
  if (!/^[0-9]{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 100) throw invalid('quality', 'an integer from 1 to 100');
  return Number(text);
}

export interface RenderedRequest {
  acceptHeader: string | undefined;
  query: Record<string, unknown>;
  frameNumber: number;
  /** Thumbnails fit a default square when no viewport is named. */
  thumbnail: boolean;
}

export function renderOptionsOf(request: RenderedRequest): RenderOptions {
  const unknown = Object.keys(request.query).filter((name) => !supportedParameters.includes(name));
  if (unknown.length > 0) throw new HttpProblem(400, 'invalid', `unsupported query parameter ${unknown.join(', ')}: this resource takes ${supportedParameters.join(', ')}`);
  const iccProfile = single(request.query, 'iccprofile');
  if (iccProfile !== undefined && iccProfile !== 'no') throw invalid('iccprofile', 'only "no" is offered');
  const window = single(request.query, 'window');
  const viewport = single(request.query, 'viewport');
  const quality = single(request.query, 'quality');
  const side = renderLimits.defaultThumbnailSide;
  return {
    mediaType: renderedMediaType(request.acceptHeader, single(request.query, 'accept')),
    frameNumber: request.frameNumber,
    quality: quality === undefined ? renderLimits.defaultQuality : parseQuality(quality),
    ...(window !== undefined ? { window: parseWindow(window) } : {}),
    ...(viewport !== undefined ? { viewport: parseViewport(viewport) } : request.thumbnail ? { viewport: { width: side, height: side, enlarge: false } } : {}),
  };
}
