/**
 * Renders one frame of a stored DICOM instance to JPEG or PNG. Decoding and the grayscale and
 * colour pipeline (Modality LUT, VOI window or VOI LUT function, MONOCHROME1 inversion, palette
 * colour, YBR conversions, planar configuration, bits stored and sign) are dcmjs-imaging's, whose
 * WebAssembly codecs (dcmjs-codecs: libjpeg-turbo 8/12-bit, IJG lossless, CharLS, OpenJPEG,
 * OpenJPH) cover every compressed transfer syntax the service stores; scaling and encoding are
 * sharp's (libvips). An uncompressed little-endian frame is read alone (native-frame.ts); other
 * files are read whole, up to renderLimits.maxSourceBytes. Synchronous decoding is CPU-bound: this runs in a render worker thread
 * (render-pool.ts), never on the event loop of a serving process.
 */
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import dcmjsImaging from 'dcmjs-imaging';
import sharp from 'sharp';
import { readNativeFrame } from './native-frame.ts';
import { decodeRleFrame } from './rle-frame.ts';
import { CannotRenderError, renderLimits, type RenderedImage, type RenderOptions } from './render-options.ts';

const { DicomImage, NativePixelDecoder, WindowLevel } = dcmjsImaging;

/** The transfer syntaxes the decoders read (dcmjs-imaging 0.2 with its codecs initialised). */
export const renderableTransferSyntaxes: ReadonlySet<string> = new Set(Object.values(dcmjsImaging.constants.TransferSyntax));

const voiLutFunctionKeyword = { linear: 'LINEAR', 'linear-exact': 'LINEAR_EXACT', sigmoid: 'SIGMOID' } as const;

interface DcmjsLog {
  setLevel(level: string): void;
  getLogger(name: string): DcmjsLog;
}

let parsersQuiet = false;

/** Quiets the parsers' per-element warnings, once per thread. */
function quietParsers(): void {
  if (parsersQuiet) return;
  parsersQuiet = true;
  dcmjsImaging.log.setLevel('silent');
  // dcmjs-imaging and its codecs parse with their own copies of dcmjs, which log odd VRs to the console.
  const imagingRequire = createRequire(import.meta.resolve('dcmjs-imaging'));
  const codecsRequire = createRequire(imagingRequire.resolve('dcmjs-codecs'));
  for (const load of [imagingRequire, codecsRequire]) {
    const { log } = load('dcmjs') as { log?: DcmjsLog };
    log?.setLevel('silent');
    log?.getLogger('validation.dcmjs').setLevel('silent');
  }
}

/** Uncompressed frames, which dcmjs-imaging reads without its WebAssembly codecs (RLE is decoded here). */
const uncompressedTransferSyntaxes: ReadonlySet<string> = new Set(['1.2.840.10008.1.2', '1.2.840.10008.1.2.1', '1.2.840.10008.1.2.2']);

let codecsReady: Promise<void> | undefined;

/**
 * The WebAssembly codecs, loaded the first time a thread meets a compressed frame: about 11 MB of
 * each render thread's memory that a site rendering only uncompressed frames never needs.
 */
function compressedFrameCodecs(): Promise<void> {
  codecsReady ??= NativePixelDecoder.initializeAsync();
  return codecsReady;
}

/** Whether this thread has loaded the WebAssembly codecs. */
export function codecsLoaded(): boolean {
  return codecsReady !== undefined;
}

export async function renderStoredFrame(path: string, options: RenderOptions): Promise<RenderedImage> {
  quietParsers();
  let image: Image;
  let frameIndex = options.frameNumber - 1;
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const nativeFrame = await readNativeFrame(handle, size, options.frameNumber);
    if (nativeFrame) {
      image = nativeFrame;
      frameIndex = 0;
    } else {
      if (size > renderLimits.maxSourceBytes) throw new CannotRenderError('too-large', `compressed instances over ${renderLimits.maxSourceBytes} bytes are not rendered: retrieve the instance`);
      image = openImage(await handle.readFile());
    }
  } finally {
    await handle.close();
  }
  const { width, height } = checkedFrame(image, frameIndex + 1);
  const transferSyntax = image.getTransferSyntaxUid();
  if (transferSyntax === rleLossless) {
    image = decodedRleImage(image, frameIndex);
    frameIndex = 0;
  } else if (!uncompressedTransferSyntaxes.has(transferSyntax)) {
    await compressedFrameCodecs();
  }
  if (options.window) image.setElement('VOILUTFunction', voiLutFunctionKeyword[options.window.function]);
  let rendered;
  try {
    rendered = image.render({
      frame: frameIndex,
      ...(options.window ? { windowLevel: new WindowLevel(options.window.width, options.window.center) } : {}),
    });
  } catch (error) {
    throw new CannotRenderError('corrupt', `the pixel data cannot be decoded: ${messageOf(error)}`);
  }
  return encode(Buffer.from(rendered.pixels), width, height, options);
}

type Image = InstanceType<typeof DicomImage>;

const rleLossless = '1.2.840.10008.1.2.5';
const explicitLittle = '1.2.840.10008.1.2.1';

/** The one frame, RLE-decoded here (rle-frame.ts says why), as a single-frame native image. */
function decodedRleImage(image: Image, frameIndex: number): Image {
  const elements = image.getElements() as Record<string, unknown>;
  const fragments = elements.PixelData as ArrayBuffer[] | undefined;
  const fragment = fragments?.[frameIndex];
  if (!fragments || fragments.length !== image.getNumberOfFrames() || !fragment) {
    throw new CannotRenderError('corrupt', 'the RLE frames cannot be told apart (one fragment a frame is expected)');
  }
  let pixels: Uint8Array;
  try {
    pixels = decodeRleFrame(new Uint8Array(fragment), {
      rows: image.getHeight(),
      columns: image.getWidth(),
      samplesPerPixel: Number(elements.SamplesPerPixel ?? 1),
      bitsAllocated: Number(elements.BitsAllocated),
    });
  } catch (error) {
    throw new CannotRenderError('corrupt', `the pixel data cannot be decoded: ${messageOf(error)}`);
  }
  const frame = pixels.buffer.slice(pixels.byteOffset, pixels.byteOffset + pixels.byteLength) as ArrayBuffer;
  return new DicomImage({ ...elements, PixelData: [frame], NumberOfFrames: 1, PlanarConfiguration: 0 }, explicitLittle);
}

function openImage(file: Buffer): Image {
  let image: Image;
  try {
    image = new DicomImage(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer);
  } catch (error) {
    throw new CannotRenderError('corrupt', `the stored file cannot be parsed: ${messageOf(error)}`);
  }
  const elements = image.getElements();
  if (elements.PixelData === undefined && elements.FloatPixelData === undefined && elements.DoubleFloatPixelData === undefined) {
    throw new CannotRenderError('no-pixel-data', 'the instance has no pixel data to render');
  }
  const transferSyntax = image.getTransferSyntaxUid();
  if (!renderableTransferSyntaxes.has(transferSyntax)) throw new CannotRenderError('unsupported', `transfer syntax ${transferSyntax} is not rendered`);
  return image;
}

function checkedFrame(image: Image, frameNumber: number): { width: number; height: number } {
  const width = image.getWidth();
  const height = image.getHeight();
  if (!(width > 0 && height > 0)) throw new CannotRenderError('corrupt', 'the instance has no Rows or Columns');
  if (width * height > renderLimits.maxFramePixels) {
    throw new CannotRenderError('too-large', `frames over ${renderLimits.maxFramePixels} pixels are not rendered (this one is ${width} x ${height}): retrieve the instance`);
  }
  const frames = image.getNumberOfFrames();
  if (frameNumber > frames) throw new CannotRenderError('no-such-frame', `the instance has ${frames} frame(s); no frame ${frameNumber}`);
  return { width, height };
}

async function encode(rgba: Buffer, width: number, height: number, options: RenderOptions): Promise<RenderedImage> {
  let pipeline = sharp(rgba, { raw: { width, height, channels: 4 } }).removeAlpha();
  if (options.viewport) pipeline = pipeline.resize({ width: options.viewport.width, height: options.viewport.height, fit: 'inside', withoutEnlargement: !options.viewport.enlarge });
  pipeline = options.mediaType === 'image/png' ? pipeline.png({ compressionLevel: 6 }) : pipeline.jpeg({ quality: options.quality });
  const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
  return { mediaType: options.mediaType, body: data, width: info.width, height: info.height };
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}
