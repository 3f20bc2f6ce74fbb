/**
 * A multipart/related answer (RFC 2387, PS3.18 8.3.3.1) streamed part by part: each part's bytes
 * come from an async source (a file read in chunks), so memory holds a chunk at a time whatever
 * the instance size; the socket's backpressure pauses the reads.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';

export interface OutgoingPart {
  contentType: string;
  /** Extra part headers (Content-Location). */
  headers?: Record<string, string>;
  body: () => AsyncIterable<Buffer> | Iterable<Buffer>;
}

export function newBoundary(): string {
  return `cg-${randomUUID()}`;
}

export function multipartContentType(partType: string, boundary: string, transferSyntax?: string): string {
  return `multipart/related; type="${partType}"; boundary=${boundary}${transferSyntax ? `; transfer-syntax=${transferSyntax}` : ''}`;
}

export function multipartStream(boundary: string, parts: AsyncIterable<OutgoingPart>): Readable {
  return Readable.from(
    (async function* () {
      for await (const part of parts) {
        const headers = Object.entries({ 'Content-Type': part.contentType, ...part.headers })
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('');
        yield Buffer.from(`--${boundary}\r\n${headers}\r\n`, 'latin1');
        for await (const chunk of part.body()) yield chunk;
        yield Buffer.from('\r\n', 'latin1');
      }
      yield Buffer.from(`--${boundary}--\r\n`, 'latin1');
    })(),
    { objectMode: false },
  );
}
