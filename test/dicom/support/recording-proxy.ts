import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between an SCU and the listener that records, independently of the listener's own
 * parser, the dataset bytes each DIMSE message carried on the wire (PS3.8 9.3.5: P-DATA-TF PDUs,
 * PDV items with a message control header whose bit 0 says command and bit 1 last fragment).
 */
export interface RecordingProxy {
  port: number;
  /** Datasets sent by the SCU, in order, each as the concatenation of its fragments. */
  datasets: Buffer[];
  close(): Promise<void>;
}

export async function startRecordingProxy(targetPort: number): Promise<RecordingProxy> {
  const datasets: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    let current: Buffer[] = [];
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 6) {
        const length = pending.readUInt32BE(2);
        if (pending.length < 6 + length) break;
        if (pending[0] === 0x04) {
          for (let offset = 6; offset < 6 + length; ) {
            const itemLength = pending.readUInt32BE(offset);
            const control = pending[offset + 5]!;
            if ((control & 0x01) === 0) {
              current.push(Buffer.from(pending.subarray(offset + 6, offset + 4 + itemLength)));
              if (control & 0x02) {
                datasets.push(Buffer.concat(current));
                current = [];
              }
            }
            offset += 4 + itemLength;
          }
        }
        pending = pending.subarray(6 + length);
      }
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    for (const socket of [client, upstream]) {
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on('close', () => sockets.delete(socket));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    datasets,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
