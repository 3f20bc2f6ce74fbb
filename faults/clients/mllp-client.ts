import { connect, type Socket } from 'node:net';

// MLLP release 1 (HL7 v2.5.1 Appendix C.4): <VT> message <FS><CR>.
const startBlock = 0x0b;
const endBlock = 0x1c;
const carriageReturn = 0x0d;

/**
 * A small, independent MLLP sender: one connection, one message in flight at a time, each answer
 * read up to its <FS><CR> whatever the TCP segmentation. Any socket failure rejects the pending
 * send, so a caller knows the message was not acknowledged.
 */
export class MllpClient {
  #socket: Socket;
  #buffer = Buffer.alloc(0);
  #pending: { resolve(ack: string): void; reject(error: Error): void } | undefined;
  #failure: Error | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(new Error('connection closed')));
  }

  static connect(port: number, host = '127.0.0.1', timeoutMs = 5_000): Promise<MllpClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('MLLP connect timed out'));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new MllpClient(socket));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  get closed(): boolean {
    return this.#failure !== undefined;
  }

  /** Sends one message (segments joined by CR) and resolves with the acknowledgement text. */
  send(message: string | Buffer, timeoutMs = 10_000): Promise<string> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#pending) return Promise.reject(new Error('one message at a time'));
    const payload = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending = undefined;
        reject(new Error('no acknowledgement within the timeout'));
        this.#socket.destroy();
      }, timeoutMs);
      this.#pending = {
        resolve: (ack) => {
          clearTimeout(timer);
          resolve(ack);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.#socket.write(Buffer.concat([Buffer.from([startBlock]), payload, Buffer.from([endBlock, carriageReturn])]));
    });
  }

  /** Writes raw bytes (for framing attacks); answers, if any, are delivered to `onFrame`. */
  writeRaw(bytes: Buffer): void {
    this.#socket.write(bytes);
  }

  close(): void {
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const start = this.#buffer.indexOf(startBlock);
      if (start < 0) {
        this.#buffer = Buffer.alloc(0);
        return;
      }
      const end = this.#buffer.indexOf(Buffer.from([endBlock, carriageReturn]), start);
      if (end < 0) return;
      const ack = this.#buffer.subarray(start + 1, end).toString('latin1');
      this.#buffer = this.#buffer.subarray(end + 2);
      const pending = this.#pending;
      this.#pending = undefined;
      pending?.resolve(ack);
    }
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.reject(error);
  }
}

/** MSA-1 of an acknowledgement (AA, AE, AR, CA, CE, CR), or undefined when there is none. */
export function ackCode(ack: string): string | undefined {
  const msa = ack.split(/\r\n|\r|\n/).find((segment) => segment.startsWith('MSA'));
  return msa?.split(msa[3] ?? '|')[1];
}
