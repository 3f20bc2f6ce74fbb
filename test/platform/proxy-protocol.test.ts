import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/env.ts';
import { acceptProxyProtocol, TrustedProxies } from '../../src/platform/proxy/proxied-connections.ts';
import { scanProxyHeader } from '../../src/platform/proxy/proxy-header.ts';

// HAProxy's "The PROXY protocol" (versions 1 and 2), as HAProxy sends it; test/deploy/haproxy.test.ts
// runs HAProxy itself in front of the service.
const v2Signature = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
/** Section 2.2: version 2, command PROXY (0x21) or LOCAL (0x20), then family/transport, length, addresses. */
function v2(command: number, family: number, addresses: number[], tlvs: number[] = []): Buffer {
  const length = addresses.length + tlvs.length;
  return Buffer.from([...v2Signature, command, family, length >> 8, length & 0xff, ...addresses, ...tlvs]);
}
const ipv4Addresses = [192, 0, 2, 7, 10, 0, 0, 1, 0x9c, 0x40, 0x0a, 0x0b]; // 192.0.2.7:40000 -> 10.0.0.1:2571

test('version 1 headers: whole, in pieces, UNKNOWN, malformed', () => {
  const line = 'PROXY TCP4 192.0.2.7 10.0.0.1 40000 2575\r\n';
  assert.deepEqual(scanProxyHeader(Buffer.from(`${line}\x0bMSH|`)), { kind: 'header', length: line.length, client: { address: '192.0.2.7', port: 40000 } });
  assert.deepEqual(scanProxyHeader(Buffer.from('PROXY TCP6 2001:db8::7 2001:db8::1 40000 2575\r\n')), { kind: 'header', length: 47, client: { address: '2001:db8::7', port: 40000 } });
  for (const piece of ['P', 'PROX', 'PROXY ', 'PROXY TCP4 192.0.2.7']) assert.deepEqual(scanProxyHeader(Buffer.from(piece)), { kind: 'incomplete' }, piece);
  assert.deepEqual(scanProxyHeader(Buffer.from('PROXY UNKNOWN\r\nGET /')), { kind: 'header', length: 15 });
  assert.equal(scanProxyHeader(Buffer.from('PROXY TCP4 999.0.2.7 10.0.0.1 40000 2575\r\n')).kind, 'invalid');
  assert.equal(scanProxyHeader(Buffer.from('PROXY TCP4 2001:db8::7 10.0.0.1 40000 2575\r\n')).kind, 'invalid');
  assert.equal(scanProxyHeader(Buffer.from('PROXY TCP4 192.0.2.7 10.0.0.1 70000 2575\r\n')).kind, 'invalid');
  assert.equal(scanProxyHeader(Buffer.from(`PROXY TCP4 ${'1'.repeat(120)}`)).kind, 'invalid', 'no CRLF within 107 bytes');
});

test('version 2 headers: PROXY over IPv4 and IPv6, LOCAL, TLVs, in pieces', () => {
  const header = v2(0x21, 0x11, ipv4Addresses, [0x04, 0x00, 0x01, 0x00]);
  assert.deepEqual(scanProxyHeader(Buffer.concat([header, Buffer.from([0x01, 0x00])])), { kind: 'header', length: header.length, client: { address: '192.0.2.7', port: 40000 } });
  for (let cut = 1; cut < header.length; cut++) assert.deepEqual(scanProxyHeader(header.subarray(0, cut)), { kind: 'incomplete' }, `${cut} bytes`);
  const ipv6 = [0x20, 0x01, 0x0d, 0xb8, ...Array(11).fill(0), 7, ...Array(16).fill(0), 0x9c, 0x40, 0x0a, 0x0b];
  assert.deepEqual(scanProxyHeader(v2(0x21, 0x21, ipv6)), { kind: 'header', length: 52, client: { address: '2001:db8::7', port: 40000 } });
  const mapped = [...Array(10).fill(0), 0xff, 0xff, 192, 0, 2, 9, ...Array(16).fill(0), 0x9c, 0x40, 0x0a, 0x0b];
  assert.deepEqual(scanProxyHeader(v2(0x21, 0x21, mapped)), { kind: 'header', length: 52, client: { address: '192.0.2.9', port: 40000 } });
  assert.deepEqual(scanProxyHeader(v2(0x20, 0x00, [])), { kind: 'header', length: 16 }, 'LOCAL: the proxy speaking for itself');
  assert.equal(scanProxyHeader(v2(0x31, 0x11, ipv4Addresses)).kind, 'invalid', 'version 3');
  assert.equal(scanProxyHeader(v2(0x21, 0x11, [192, 0, 2])).kind, 'invalid', 'shorter than its addresses');
});

test('bytes of the protocols themselves are not a header', () => {
  for (const first of ['GET / HTTP/1.1\r\n', '\x0bMSH|^~\\&|', '\x01\x00\x00\x00\x00\xcd', '\r\n\r\nGET']) assert.deepEqual(scanProxyHeader(Buffer.from(first, 'latin1')), { kind: 'absent' }, JSON.stringify(first));
});

test('CG_TRUSTED_PROXIES takes addresses and CIDR ranges, nothing else', () => {
  assert.deepEqual(loadConfig({}).trustedProxies, []);
  assert.deepEqual(loadConfig({ CG_TRUSTED_PROXIES: ' 10.0.0.5, 10.1.0.0/16 ,fd00::/64,10.0.0.5' }).trustedProxies, ['10.0.0.5', '10.1.0.0/16', 'fd00::/64']);
  for (const wrong of ['*', '10.0.0.0/33', 'lb.example.org', '10.0.0.0/8/1', 'fd00::/129']) assert.throws(() => loadConfig({ CG_TRUSTED_PROXIES: wrong }), /CG_TRUSTED_PROXIES: .* is not an IPv4\/IPv6 address or CIDR range/, wrong);
  const trusted = new TrustedProxies(['10.1.0.0/16', '127.0.0.1']);
  assert.ok(trusted.has('10.1.200.3') && trusted.has('::ffff:127.0.0.1'));
  assert.ok(!trusted.has('10.2.0.1') && !trusted.has('127.0.0.2') && !trusted.has('garbage'));
});

/** A server that reports, per connection, the address it sees and the first bytes its handler reads. */
async function reportingServer(trusted: string[]) {
  const seen: { address: string | undefined; port: number | undefined; bytes: string }[] = [];
  const server = createServer((socket: Socket) => {
    const entry = { address: socket.remoteAddress, port: socket.remotePort, bytes: '' };
    seen.push(entry);
    socket.on('data', (chunk: Buffer) => {
      entry.bytes += chunk.toString('latin1');
      if (entry.bytes.endsWith('END')) socket.end('OK');
    });
  });
  acceptProxyProtocol(server, new TrustedProxies(trusted), pino({ level: 'silent' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const exchange = (pieces: (string | Buffer)[], from = '127.0.0.1') =>
    new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, localAddress: from, noDelay: true });
      let answer = '';
      socket.on('connect', async () => {
        for (const piece of pieces) {
          socket.write(piece);
          await new Promise((wait) => setTimeout(wait, 20));
        }
      });
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      socket.on('close', () => resolve(answer));
      socket.on('error', () => {});
    });
  return { seen, exchange, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

test('from a trusted proxy the header names the client and the handler reads only what follows it', async () => {
  const server = await reportingServer(['127.0.0.1']);
  try {
    assert.equal(await server.exchange(['PROXY TCP4 192.0.2.7 127.0.0.1 40000 2575\r\nhello END']), 'OK');
    assert.equal(await server.exchange(['PROX', 'Y TCP4 192.0.2.8 127.0.0.1 40001 2575\r', '\nhel', 'lo END']), 'OK');
    assert.equal(await server.exchange([Buffer.concat([v2(0x21, 0x11, ipv4Addresses), Buffer.from('v2 END')])]), 'OK');
    assert.equal(await server.exchange([v2(0x20, 0x00, []), 'local END']), 'OK');
    assert.equal(await server.exchange(['no header END']), 'OK');
    assert.equal(await server.exchange(['PROXY TCP4 not-an-address 127.0.0.1 1 2\r\nEND']), '', 'a malformed header closes the connection');
    assert.deepEqual(
      server.seen.map(({ address, port, bytes }) => ({ address, port: address === '127.0.0.1' ? 'own' : port, bytes })),
      [
        { address: '192.0.2.7', port: 40000, bytes: 'hello END' },
        { address: '192.0.2.8', port: 40001, bytes: 'hello END' },
        { address: '192.0.2.7', port: 40000, bytes: 'v2 END' },
        { address: '127.0.0.1', port: 'own', bytes: 'local END' },
        { address: '127.0.0.1', port: 'own', bytes: 'no header END' },
      ],
    );
  } finally {
    await server.close();
  }
});

test('from any other address a header is not read: the handler gets its bytes and the real address', async () => {
  const server = await reportingServer(['127.0.0.1']);
  try {
    assert.equal(await server.exchange(['PROXY TCP4 192.0.2.7 127.0.0.1 40000 2575\r\nEND'], '127.0.0.9'), 'OK');
    assert.deepEqual(server.seen.map(({ address, bytes }) => ({ address, bytes })), [{ address: '127.0.0.9', bytes: 'PROXY TCP4 192.0.2.7 127.0.0.1 40000 2575\r\nEND' }]);
  } finally {
    await server.close();
  }
  const untrusting = await reportingServer([]);
  try {
    await untrusting.exchange(['PROXY TCP4 192.0.2.7 127.0.0.1 40000 2575\r\nEND']);
    assert.equal(untrusting.seen[0]?.address, '127.0.0.1', 'no trusted proxy: nobody is believed');
  } finally {
    await untrusting.close();
  }
});
