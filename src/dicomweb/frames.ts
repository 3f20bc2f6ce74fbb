/**
 * Frames of a stored instance (PS3.18 10.4.1.1.4 Frame Resources): uncompressed frames as
 * application/octet-stream, compressed ones in the stored transfer syntax's media type (PS3.18
 * Table 8.7.3-5) or as octet-stream naming that syntax (frame-accept.ts), never transcoded.
 * Frames are cut from the parsed Pixel Data, so they are served for instances up to
 * maxFrameSourceBytes; a larger instance's frames are a 406 (retrieve the instance instead).
 */
import { HttpProblem } from '../platform/http/http-problem.ts';
import { readWholeInstance } from './dicom-json.ts';
import { frameMediaType, transferSyntaxUids } from './media-types.ts';

export const maxFrameSourceBytes = 64 * 1024 * 1024;

export interface Frames {
  mediaType: string;
  frames: Buffer[];
}

export function parseFrameList(text: string): number[] {
  const numbers = text.split(',').map((value) => (/^[1-9][0-9]{0,8}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN));
  if (numbers.some((value) => Number.isNaN(value))) throw new HttpProblem(400, 'invalid', 'frame numbers are a comma-separated list of integers from 1');
  return numbers;
}

export function frameMediaTypeOrRefuse(transferSyntaxUid: string): string {
  // A deflated dataset is inflated when parsed, and big endian pixels are swapped below: their
  // frames are uncompressed little endian like the others' (PS3.18 8.7.3.5.2).
  const mediaType = transferSyntaxUid === transferSyntaxUids.deflated ? 'application/octet-stream' : frameMediaType(transferSyntaxUid);
  if (!mediaType) {
    throw new HttpProblem(406, 'not-acceptable', `frames of an instance stored in transfer syntax ${transferSyntaxUid} are not available: retrieve the instance`);
  }
  return mediaType;
}

export async function readFrames(path: string, sizeBytes: number, transferSyntaxUid: string, wanted: readonly number[]): Promise<Frames> {
  const mediaType = frameMediaTypeOrRefuse(transferSyntaxUid);
  if (sizeBytes > maxFrameSourceBytes) {
    throw new HttpProblem(406, 'not-acceptable', `frames are served for instances up to ${maxFrameSourceBytes} bytes: retrieve the instance`);
  }
  const dict = await readWholeInstance(path);
  const pixels = dict['7FE00010']?.Value as ArrayBuffer[] | undefined;
  if (!pixels || pixels.length === 0) throw new HttpProblem(404, 'not-found', 'the instance has no pixel data');
  const numberOfFrames = Number((dict['00280008']?.Value?.[0] as string | number | undefined) ?? 1) || 1;
  const all: Buffer[] = [];
  if (mediaType === 'application/octet-stream') {
    const rows = Number(dict['00280010']?.Value?.[0]);
    const columns = Number(dict['00280011']?.Value?.[0]);
    const samples = Number(dict['00280002']?.Value?.[0] ?? 1);
    const bitsAllocated = Number(dict['00280100']?.Value?.[0]);
    if (!rows || !columns || !bitsAllocated || bitsAllocated % 8 !== 0) throw new HttpProblem(406, 'not-acceptable', 'the frames of this instance are not whole bytes: retrieve the instance');
    const frameBytes = (rows * columns * samples * bitsAllocated) / 8;
    const data = Buffer.from(pixels[0]!);
    // dcmjs leaves a big endian file's pixels as they are in it; a frame goes little endian.
    if (transferSyntaxUid === transferSyntaxUids.explicitBig && bitsAllocated === 16 && data.length % 2 === 0) data.swap16();
    if (transferSyntaxUid === transferSyntaxUids.explicitBig && bitsAllocated === 32 && data.length % 4 === 0) data.swap32();
    for (let i = 0; i < numberOfFrames; i++) all.push(data.subarray(i * frameBytes, (i + 1) * frameBytes));
  } else {
    // dcmjs gives one buffer per frame when it can tell frames apart (offset table, or one fragment each).
    if (pixels.length !== numberOfFrames) throw new HttpProblem(406, 'not-acceptable', 'the compressed frames of this instance cannot be told apart: retrieve the instance');
    for (const frame of pixels) all.push(Buffer.from(frame));
  }
  const missing = wanted.filter((number) => number > all.length);
  if (missing.length > 0) throw new HttpProblem(404, 'not-found', `the instance has ${all.length} frame(s); no frame ${missing.join(', ')}`);
  return { mediaType, frames: wanted.map((number) => all[number - 1]!) };
}
