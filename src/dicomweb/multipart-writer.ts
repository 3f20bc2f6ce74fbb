/**
 * A multipart/related answer (RFC 2387, PS3.18 8.3.3.1) streamed part by part from buffers already
 * in memory (frames). Stored files are sent by stored-parts-sender.ts, which reuses its buffers.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';

export interface OutgoingPart {
  contentType: string;
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
        const headers = `Content-Type: ${part.contentType}\r\n`;
        yield Buffer.from(`--${boundary}\r\n${headers}\r\n`, 'latin1');
        for await (const chunk of part.body()) yield chunk;
        yield Buffer.from('\r\n', 'latin1');
      }
      yield Buffer.from(`--${boundary}--\r\n`, 'latin1');
    })(),
    { objectMode: false },
  );
}
