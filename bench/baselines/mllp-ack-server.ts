import { createServer } from 'node:net';
import { FrameReader, frame } from '../load/mllp-framing.ts';

/**
 * The MLLP baseline of issue 8: a server that only frames and acknowledges. It reads the
 * message control id (MSH-10) so that its ACK is a valid one (HL7 v2.5.1 section 2.9.2, original
 * mode), but parses nothing else and stores nothing: the floor of Node's sockets on this machine.
 */
const port = Number(process.env.BENCH_BASELINE_PORT);

function controlId(message: Buffer): string {
  const segmentEnd = message.indexOf(0x0d);
  const header = message.subarray(0, segmentEnd < 0 ? message.length : segmentEnd).toString('latin1');
  return header.split('|')[9] ?? '';
}

const server = createServer((socket) => {
  socket.setNoDelay(true);
  const reader = new FrameReader();
  socket.on('data', (chunk) =>
    reader.push(chunk, (message) => {
      const now = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
      const id = controlId(message);
      socket.write(frame(`MSH|^~\\&|BASELINE|BENCH|||${now}||ACK|A${id}|P|2.5.1\rMSA|AA|${id}\r`));
    }),
  );
  socket.on('error', () => socket.destroy());
});
server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
