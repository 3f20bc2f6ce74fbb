import type { Socket } from 'node:net';

/**
 * Writes to a socket and waits while its buffer is full (TCP flow control holds a slow peer back
 * without buffering a whole instance), or until it is closed: a writer never waits for ever.
 */
export async function writeWhenWritable(socket: Socket, bytes: Buffer, closedError: () => Error): Promise<void> {
  if (socket.destroyed || !socket.writable) throw closedError();
  if (socket.write(bytes)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}
