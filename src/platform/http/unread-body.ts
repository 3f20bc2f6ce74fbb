import type { IncomingMessage } from 'node:http';

/**
 * The most of an unread body the service still reads (and discards) before answering. A refusal
 * sent while the client is still writing is followed by the socket's close; the kernel answers
 * the bytes that keep arriving with a reset, and the client, busy writing, never reads the answer
 * (write EPIPE). Reading the rest first, as web servers' "lingering close" does, lets the client
 * see why it was refused. Bounded, so that a declared body of gigabytes costs nothing.
 */
export const maxDiscardedBodyBytes = 16 * 1024 * 1024;
const maxDiscardMs = 10_000;

/** Reads and drops what remains of the request's body, within the bounds; true when all of it was read. */
export async function discardUnreadBody(request: IncomingMessage): Promise<boolean> {
  if (request.complete) return true;
  if (request.destroyed || request.readableEnded) return false;
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxDiscardedBodyBytes) return false;
  return new Promise((resolve) => {
    let read = 0;
    const finish = () => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', finish);
      request.off('error', finish);
      request.off('close', finish);
      resolve(request.complete);
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > maxDiscardedBodyBytes) finish();
    };
    const timer = setTimeout(finish, maxDiscardMs);
    request.on('data', onData);
    request.once('end', finish);
    request.once('error', finish);
    request.once('close', finish);
    request.resume();
  });
}
