import { connect, type Socket } from 'node:net';

/** A raw MLLP peer that collects framed answers. */
export class RawPeer {
  readonly socket: Socket;
  #buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
    socket.on('error', () => {});
  }

  static open(port: number, localAddress = '127.0.0.1'): Promise<RawPeer> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, localAddress }, () => resolve(new RawPeer(socket)));
      socket.once('error', reject);
    });
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** Bytes received and not yet read by next(). */
  get unread(): number {
    return this.#buffer.length;
  }

  /** The next framed answer (payload without VT/FS/CR), or undefined when the server closed. */
  async next(): Promise<string | undefined> {
    for (;;) {
      const end = this.#buffer.indexOf(0x1c);
      if (end >= 0 && this.#buffer.length > end + 1) {
        const start = this.#buffer.indexOf(0x0b);
        const payload = this.#buffer.subarray(start + 1, end).toString('utf8');
        this.#buffer = this.#buffer.subarray(end + 2);
        return payload;
      }
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Resolves when the server has closed the connection. */
  async closedByServer(): Promise<void> {
    while (!this.closed) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  end(): void {
    this.socket.destroy();
  }
}

export function msa(ack: string | undefined): { code: string; controlId: string } {
  const segment = (ack ?? '').split('\r').find((s) => s.startsWith('MSA|')) ?? '';
  const [, code = '', controlId = ''] = segment.split('|');
  return { code, controlId };
}
