/**
 * One frame of an uncompressed little-endian instance, read without the rest of its pixel data:
 * the head of the file up to Pixel Data is parsed, and only the frame's bytes are read after it.
 * A thumbnail of a 300 MB multi-frame series costs its header and one frame, not the file.
 * Anything else (compressed, deflated, big endian, frames not whole bytes) is left to the
 * whole-file path (render-frame.ts).
 */
import type { FileHandle } from 'node:fs/promises';
import dcmjsImaging from 'dcmjs-imaging';
import { CannotRenderError, renderLimits } from './render-options.ts';

const { DicomImage } = dcmjsImaging;
type Image = InstanceType<typeof DicomImage>;

const implicitLittle = '1.2.840.10008.1.2';
const explicitLittle = '1.2.840.10008.1.2.1';
/** Pixel Data (7FE0,0010) as little-endian bytes. */
const pixelDataTag = Buffer.from([0xe0, 0x7f, 0x10, 0x00]);
/** The head is read in growing steps until Pixel Data is in it. */
const headSteps = [256 * 1024, 4 * 1024 * 1024, 64 * 1024 * 1024];

/**
 * The frame as a single-frame Explicit VR Little Endian image, or undefined when the file is not
 * native little endian or its Pixel Data cannot be located (the caller then reads it whole).
 */
export async function readNativeFrame(handle: FileHandle, size: number, frameNumber: number): Promise<Image | undefined> {
  for (const step of headSteps) {
    const length = Math.min(size, step);
    const head = Buffer.alloc(length);
    await handle.read(head, 0, length, 0);
    const found = locatePixelData(head);
    if (found === 'not-native') return undefined;
    if (found) {
      const { elements, valueStart, frameBytes, frames } = found;
      if (frameNumber > frames) throw new CannotRenderError('no-such-frame', `the instance has ${frames} frame(s); no frame ${frameNumber}`);
      const frame = Buffer.alloc(frameBytes);
      const { bytesRead } = await handle.read(frame, 0, frameBytes, valueStart + (frameNumber - 1) * frameBytes);
      if (bytesRead !== frameBytes) throw new CannotRenderError('corrupt', 'the stored file ends inside its pixel data');
      const pixels = frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength) as ArrayBuffer;
      return new DicomImage({ ...elements, PixelData: [pixels], NumberOfFrames: 1 }, explicitLittle);
    }
    if (length === size) return undefined;
  }
  return undefined;
}

interface Located {
  elements: Record<string, unknown>;
  valueStart: number;
  frameBytes: number;
  frames: number;
}

/**
 * The top-level Pixel Data element in `head`: each occurrence of its tag is tried in turn (an icon
 * image sequence holds one before it), the bytes before it parsed, and the element's length
 * checked against Rows x Columns x Samples x Bits Allocated x Number of Frames from that header.
 */
function locatePixelData(head: Buffer): Located | 'not-native' | undefined {
  for (let at = head.indexOf(pixelDataTag, 132); at >= 0; at = head.indexOf(pixelDataTag, at + 1)) {
    let image: Image;
    try {
      image = new DicomImage(head.buffer.slice(head.byteOffset, head.byteOffset + at) as ArrayBuffer);
    } catch {
      continue;
    }
    const syntax = image.getTransferSyntaxUid();
    if (syntax !== implicitLittle && syntax !== explicitLittle) return 'not-native';
    const elements = image.getElements() as Record<string, unknown>;
    const rows = Number(elements.Rows);
    const columns = Number(elements.Columns);
    const samples = Number(elements.SamplesPerPixel ?? 1);
    const bitsAllocated = Number(elements.BitsAllocated);
    const frames = Number(elements.NumberOfFrames ?? 1) || 1;
    if (!(rows > 0 && columns > 0 && samples > 0 && bitsAllocated > 0) || bitsAllocated % 8 !== 0) return 'not-native';
    const header = syntax === explicitLittle ? explicitHeader(head, at) : { valueStart: at + 8, length: at + 8 <= head.length ? head.readUInt32LE(at + 4) : -1 };
    const frameBytes = rows * columns * samples * (bitsAllocated / 8);
    const expected = frameBytes * frames;
    if (!header || (header.length !== expected && header.length !== expected + 1)) continue;
    if (rows * columns > renderLimits.maxFramePixels) {
      throw new CannotRenderError('too-large', `frames over ${renderLimits.maxFramePixels} pixels are not rendered (this one is ${columns} x ${rows}): retrieve the instance`);
    }
    return { elements, valueStart: header.valueStart, frameBytes, frames };
  }
  return undefined;
}

function explicitHeader(head: Buffer, at: number): { valueStart: number; length: number } | undefined {
  if (at + 12 > head.length) return undefined;
  const vr = head.toString('latin1', at + 4, at + 6);
  if ((vr !== 'OW' && vr !== 'OB') || head.readUInt16LE(at + 6) !== 0) return undefined;
  return { valueStart: at + 12, length: head.readUInt32LE(at + 8) };
}
