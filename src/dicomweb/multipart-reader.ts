/**
 * Reads a multipart/related body (RFC 2387, RFC 2046 5.1.1) as it streams in: part headers, then
 * each part's bytes in chunks, never a whole part in memory. The delimiter is CRLF "--" boundary;
 * only the bytes that could still be the start of one are held back between chunks.
 */
import { HttpProblem } from '../platform/http/http-problem.ts';

export type MultipartEvent = { kind: 'part'; headers: Record<string, string> } | { kind: 'data'; chunk: Buffer } | { kind: 'end-part' };

/** Part headers are small; a "part" whose header block exceeds this is not one. */
const maxHeaderBytes = 16 * 1024;

export function boundaryOf(contentType: string | undefined): string {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary || boundary.length > 70) throw new HttpProblem(400, 'invalid', 'the multipart/related Content-Type has no valid boundary parameter');
  return boundary;
}

export async function* readMultipart(body: AsyncIterable<Buffer>, boundary: string): AsyncGenerator<MultipartEvent> {
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  // The body starts with "--boundary" (no CRLF before the first delimiter), or a preamble.
  let pending: Buffer = Buffer.from('\r\n', 'latin1');
  let state: 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'done' = 'preamble';
  for await (const chunk of body) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      if (state === 'preamble' || state === 'body') {
        const at = pending.indexOf(delimiter);
        if (at < 0) {
          // Keep what could be the start of a delimiter split across chunks.
          const keep = Math.min(pending.length, delimiter.length - 1);
          if (state === 'body' && pending.length > keep) yield { kind: 'data', chunk: pending.subarray(0, pending.length - keep) };
          pending = pending.subarray(pending.length - keep);
          break;
        }
        if (state === 'body') {
          if (at > 0) yield { kind: 'data', chunk: pending.subarray(0, at) };
          yield { kind: 'end-part' };
        }
        pending = pending.subarray(at + delimiter.length);
        state = 'after-delimiter';
      }
      if (state === 'after-delimiter') {
        if (pending.length < 2) break;
        if (pending[0] === 0x2d && pending[1] === 0x2d) {
          state = 'done';
          break;
        }
        // Transport padding (RFC 2046: linear white space) before the CRLF.
        const lineEnd = pending.indexOf('\r\n');
        if (lineEnd < 0) {
          if (pending.length > 1024) throw new HttpProblem(400, 'invalid', 'a multipart delimiter line is malformed');
          break;
        }
        pending = pending.subarray(lineEnd + 2);
        state = 'headers';
      }
      if (state === 'headers') {
        const end = pending.indexOf('\r\n\r\n');
        const emptyHeaders = pending.subarray(0, 2).toString('latin1') === '\r\n';
        if (end < 0 && !emptyHeaders) {
          if (pending.length > maxHeaderBytes) throw new HttpProblem(400, 'invalid', 'a part of the multipart body has no end to its headers');
          break;
        }
        const block = emptyHeaders ? '' : pending.subarray(0, end).toString('latin1');
        pending = pending.subarray(emptyHeaders ? 2 : end + 4);
        yield { kind: 'part', headers: parseHeaders(block) };
        // The body runs to the next delimiter, whose leading CRLF belongs to it (RFC 2046 5.1.1).
        state = 'body';
      }
    }
    if (state === 'done') break;
  }
  if (state !== 'done') throw new HttpProblem(400, 'invalid', 'the multipart body ends before its closing delimiter');
}

function parseHeaders(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return headers;
}
