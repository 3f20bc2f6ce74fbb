/**
 * RLE Lossless (PS3.5 Annex G) decoding of one frame to native little-endian, sample-interleaved
 * pixel data. dcmjs-imaging 0.2.5 decodes RLE grayscale correctly but hands colour frames to its
 * pipeline still in the segments' planar order (every RGB RLE image renders as grey stripes), so
 * the renderer decodes RLE itself: a 64-byte header of segment offsets, then one PackBits stream
 * per byte plane (most significant byte of each sample first).
 */

export interface RleFrameLayout {
  rows: number;
  columns: number;
  samplesPerPixel: number;
  bitsAllocated: number;
}

export class RleDecodeError extends Error {
  override readonly name = 'RleDecodeError';
}

export function decodeRleFrame(fragment: Uint8Array, layout: RleFrameLayout): Uint8Array {
  const { rows, columns, samplesPerPixel, bitsAllocated } = layout;
  if (bitsAllocated % 8 !== 0) throw new RleDecodeError(`RLE with ${bitsAllocated} bits allocated is not decoded`);
  const bytesPerSample = bitsAllocated / 8;
  const pixels = rows * columns;
  if (fragment.byteLength < 64) throw new RleDecodeError('the RLE header is truncated');
  const header = new DataView(fragment.buffer, fragment.byteOffset, 64);
  const segments = header.getUint32(0, true);
  if (segments !== samplesPerPixel * bytesPerSample) throw new RleDecodeError(`the RLE frame has ${segments} segments where ${samplesPerPixel * bytesPerSample} are expected`);
  const output = new Uint8Array(pixels * samplesPerPixel * bytesPerSample);
  for (let segment = 0; segment < segments; segment++) {
    const start = header.getUint32(4 + segment * 4, true);
    const end = segment + 1 < segments ? header.getUint32(8 + segment * 4, true) : fragment.byteLength;
    if (start < 64 || end > fragment.byteLength || end < start) throw new RleDecodeError('an RLE segment offset is out of the frame');
    const sample = Math.floor(segment / bytesPerSample);
    // Segments run from the most significant byte; native little-endian puts it last.
    const byteInSample = bytesPerSample - 1 - (segment % bytesPerSample);
    unpackBits(fragment.subarray(start, end), output, sample * bytesPerSample + byteInSample, samplesPerPixel * bytesPerSample, pixels);
  }
  return output;
}

/** PackBits into every `stride`-th byte of `output` from `offset`, exactly `count` bytes. */
function unpackBits(input: Uint8Array, output: Uint8Array, offset: number, stride: number, count: number): void {
  let written = 0;
  let at = 0;
  while (written < count && at < input.length) {
    const header = input[at++]!;
    if (header < 128) {
      const length = Math.min(header + 1, count - written, input.length - at);
      for (let i = 0; i < length; i++) output[offset + (written++) * stride] = input[at++]!;
    } else if (header > 128) {
      const value = input[at++] ?? 0;
      const length = Math.min(257 - header, count - written);
      for (let i = 0; i < length; i++) output[offset + (written++) * stride] = value;
    }
  }
  if (written < count) throw new RleDecodeError('an RLE segment ends before its frame is complete');
}
