import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendStoredParts, type StoredPart } from '../../src/dicomweb/stored-parts-sender.ts';
import { StoredFileCache } from '../../src/storage/dicom/stored-file-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'cg-stored-parts-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const boundary = 'test-boundary';

function file(name: string, bytes: Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

function part(path: string, sizeBytes: number): StoredPart {
  return { headers: `Content-Type: application/dicom\r\nContent-Location: /${path.slice(dir.length + 1)}\r\n`, path, sizeBytes };
}

async function* listed(parts: StoredPart[]): AsyncGenerator<StoredPart> {
  yield* parts;
}

/** A server answering every request with `parts`; `sent` settles with sendStoredParts's result (the first answer's). */
async function serving(parts: StoredPart[], cache?: StoredFileCache): Promise<{ server: Server; port: number; sent: Promise<Error | undefined> }> {
  let settle!: (result: Error | undefined) => void;
  const sent = new Promise<Error | undefined>((resolve) => (settle = resolve));
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': `multipart/related; type="application/dicom"; boundary=${boundary}` });
    void sendStoredParts(response, boundary, listed(parts), cache).then(settle);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, sent };
}

function rawGet(port: number): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.write('GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n');
  return socket;
}

/** Bytes this process has read (proc(5) /proc/self/io rchar): files and sockets alike. */
function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
}

function openFiles(): number {
  return readdirSync('/proc/self/fd').length;
}

test('each part is its file byte for byte, whatever the file size or a recorded size that is wrong', async () => {
  const sizes = [0, 1, 130_000, 512 * 1024 - 7, 512 * 1024, 1_300_000, 3_000_001];
  const contents = sizes.map((size) => randomBytes(size));
  const parts = contents.map((bytes, i) => part(file(`p${i}.dcm`, bytes), bytes.length));
  // Recorded sizes off by one in both directions: the file as it is on disk is what is sent.
  parts.push(part(file('shorter.dcm', contents[2]!), contents[2]!.length + 1), part(file('longer.dcm', contents[3]!), contents[3]!.length - 1));
  contents.push(contents[2]!, contents[3]!);
  const { server, port, sent } = await serving(parts);
  try {
    const response = await fetch(`http://127.0.0.1:${port}/`);
    const body = Buffer.from(await response.arrayBuffer());
    const expected = Buffer.concat([
      ...parts.flatMap((p, i) => [Buffer.from(`--${boundary}\r\n${p.headers}\r\n`, 'latin1'), contents[i]!, Buffer.from('\r\n')]),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    assert.equal(body.length, expected.length);
    assert.ok(body.equals(expected));
    assert.equal(await sent, undefined);
  } finally {
    server.close();
  }
});

test('with the stored-file cache each part is still its file byte for byte, and a second answer reads no file', async () => {
  const sizes = [0, 1, 130_000, 512 * 1024 - 7, 512 * 1024, 1_300_000, 3_000_001];
  const contents = sizes.map((size) => randomBytes(size));
  const parts = contents.map((bytes, i) => ({ ...part(file(`c${i}.dcm`, bytes), bytes.length), instanceId: `row-${i}` }));
  // Wrong recorded sizes are never held: the file as it is on disk is sent, as without the cache.
  parts.push({ ...part(file('c-shorter.dcm', contents[2]!), contents[2]!.length + 1), instanceId: 'row-shorter' });
  parts.push({ ...part(file('c-longer.dcm', contents[3]!), contents[3]!.length - 1), instanceId: 'row-longer' });
  contents.push(contents[2]!, contents[3]!);
  const expected = Buffer.concat([
    ...parts.flatMap((p, i) => [Buffer.from(`--${boundary}\r\n${p.headers}\r\n`, 'latin1'), contents[i]!, Buffer.from('\r\n')]),
    Buffer.from(`--${boundary}--\r\n`),
  ]);
  const cache = new StoredFileCache({ maxBytes: 16 * 2 ** 20, blockBytes: 2 * 2 ** 20 + 1, idleMs: 60_000 });
  const { server, port } = await serving(parts, cache);
  try {
    const first = Buffer.from(await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer());
    assert.ok(first.equals(expected));
    // Every file up to the per-file limit whose size is as recorded.
    assert.equal(cache.entries, 6);
    const readBefore = bytesRead();
    const second = Buffer.from(await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer());
    assert.ok(second.equals(expected));
    // The client's socket reads count too: about one answer's bytes, plus the files not held (the
    // two of a wrong recorded size twice: read whole for the cache, found not as recorded, then sent).
    const notHeld = contents[6]!.length + 2 * (contents[7]!.length + contents[8]!.length);
    const read = bytesRead() - readBefore;
    assert.ok(read < expected.length + notHeld + 256 * 1024, `read ${read} bytes for an answer of ${expected.length}`);
  } finally {
    cache.clear();
    server.close();
  }
});

test('a client that stops reading holds back the file reads, and gets the whole file once it reads again', async () => {
  const size = 128 * 1024 * 1024;
  const bytes = Buffer.alloc(size, 'DICM');
  const { server, port, sent } = await serving([part(file('big.dcm', bytes), size)]);
  const readBefore = bytesRead();
  const socket = rawGet(port);
  let received = 0;
  socket.on('data', (chunk: Buffer) => (received += chunk.length));
  try {
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    // Long enough for an unbounded sender to read the whole file many times over.
    await sleep(500);
    const readWhilePaused = bytesRead() - readBefore;
    console.log(`# read ${(readWhilePaused / 1048576).toFixed(1)} MiB of ${size / 1048576} MiB while the client was not reading`);
    // Kernel socket buffers (up to tens of MB on loopback) plus the sender's two 512 KiB chunks.
    assert.ok(readWhilePaused < 64 * 1024 * 1024, `read ${readWhilePaused} bytes while the client was not reading`);
    socket.resume();
    await new Promise((resolve) => socket.once('end', resolve));
    assert.ok(received > size, `received ${received} bytes`);
    assert.equal(await sent, undefined);
  } finally {
    socket.destroy();
    server.close();
  }
});

test('a client that leaves mid-answer ends the sending quietly and leaves no file open', async () => {
  const size = 64 * 1024 * 1024;
  const path = file('left.dcm', Buffer.alloc(size, 1));
  const { server, port, sent } = await serving([part(path, size), part(path, size)]);
  const filesBefore = openFiles();
  const socket = rawGet(port);
  try {
    await new Promise((resolve) => socket.once('data', resolve));
    socket.destroy();
    assert.equal(await sent, undefined);
    await sleep(50);
    assert.ok(openFiles() <= filesBefore, 'a stored file is still open');
  } finally {
    server.close();
  }
});

test('a stored file missing mid-answer ends the connection and is reported', async () => {
  const present = randomBytes(1000);
  const { server, port, sent } = await serving([part(file('present.dcm', present), present.length), part(join(dir, 'gone.dcm'), 1000)]);
  try {
    // Both parts would fit one chunk: nothing was sent yet when the second file failed.
    await assert.rejects(async () => (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer());
    const error = await sent;
    assert.equal((error as NodeJS.ErrnoException | undefined)?.code, 'ENOENT');
  } finally {
    server.close();
  }
});
