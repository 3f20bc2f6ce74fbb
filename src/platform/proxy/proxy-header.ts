/**
 * The PROXY protocol header a load balancer puts before a connection's own bytes to say whose
 * connection it is (HAProxy's "The PROXY protocol", versions 1 and 2). This module finds where
 * the header ends in the first bytes of a connection; proxy-protocol-js decodes it.
 */
import { isIP } from 'node:net';
import proxyProtocol from 'proxy-protocol-js';

/** Version 2's 12-byte signature (section 2.2); version 1 starts with "PROXY " (section 2.1). */
const v2Signature = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const v1Signature = Buffer.from('PROXY ', 'latin1');
/** Section 2.1: a version 1 header is at most 107 bytes, CRLF included. */
const v1MaxBytes = 107;
const v2FixedBytes = 16;
/** Section 2.2: the length field is 16 bits; HAProxy sends well under 1 KiB of TLVs. */
const v2MaxBytes = v2FixedBytes + 0xffff;

export interface ClientAddress {
  address: string;
  port: number;
}

export type HeaderScan =
  /** Too few bytes yet to tell. */
  | { kind: 'incomplete' }
  /** The connection does not start with a PROXY header. */
  | { kind: 'absent' }
  /**
   * A whole header of `length` bytes. `client` is the original client; undefined when the header
   * says the connection is the proxy's own (v2 LOCAL, a health check; v1 UNKNOWN; v2 UNSPEC/UNIX).
   */
  | { kind: 'header'; length: number; client?: ClientAddress }
  | { kind: 'invalid'; reason: string };

/** Looks at the first bytes received on a connection. */
export function scanProxyHeader(bytes: Buffer): HeaderScan {
  if (startsLike(bytes, v2Signature)) return bytes.length < v2Signature.length ? { kind: 'incomplete' } : scanV2(bytes);
  if (startsLike(bytes, v1Signature)) return bytes.length < v1Signature.length ? { kind: 'incomplete' } : scanV1(bytes);
  return { kind: 'absent' };
}

/** True when `bytes` is a prefix of `signature` or starts with it. */
function startsLike(bytes: Buffer, signature: Buffer): boolean {
  const length = Math.min(bytes.length, signature.length);
  return length > 0 && bytes.subarray(0, length).equals(signature.subarray(0, length));
}

function scanV1(bytes: Buffer): HeaderScan {
  const end = bytes.subarray(0, v1MaxBytes).indexOf('\r\n');
  if (end < 0) return bytes.length >= v1MaxBytes ? { kind: 'invalid', reason: 'a version 1 header longer than 107 bytes' } : { kind: 'incomplete' };
  const length = end + 2;
  const line = bytes.subarray(0, length).toString('latin1');
  // Section 2.1: "UNKNOWN" may be followed by anything up to the CRLF; the receiver uses the real connection's addresses.
  if (/^PROXY UNKNOWN[ \r]/.test(line)) return { kind: 'header', length };
  let parsed;
  try {
    parsed = proxyProtocol.V1ProxyProtocol.parse(line);
  } catch {
    return { kind: 'invalid', reason: 'a malformed version 1 header' };
  }
  const family = parsed.inetProtocol === proxyProtocol.INETProtocol.TCP4 ? 4 : 6;
  const { ipAddress, port } = parsed.source;
  if (isIP(ipAddress) !== family || !Number.isInteger(port) || port > 65535) return { kind: 'invalid', reason: 'a version 1 header with an invalid source address or port' };
  return { kind: 'header', length, client: { address: ipAddress, port } };
}

function scanV2(bytes: Buffer): HeaderScan {
  if (bytes.length < v2FixedBytes) return { kind: 'incomplete' };
  const length = v2FixedBytes + bytes.readUInt16BE(14);
  if (length > v2MaxBytes) return { kind: 'invalid', reason: 'a version 2 header longer than allowed' };
  if (bytes.length < length) return { kind: 'incomplete' };
  let parsed;
  try {
    parsed = proxyProtocol.V2ProxyProtocol.parse(new Uint8Array(bytes.subarray(0, length)));
  } catch {
    return { kind: 'invalid', reason: 'a malformed version 2 header' };
  }
  // Section 2.2: LOCAL is the proxy speaking for itself (health checks); keep the real addresses.
  if (parsed.command === proxyProtocol.Command.LOCAL) return { kind: 'header', length };
  const address = parsed.proxyAddress;
  if (address instanceof proxyProtocol.IPv4ProxyAddress) return { kind: 'header', length, client: { address: address.sourceAddress.address.join('.'), port: address.sourcePort } };
  if (address instanceof proxyProtocol.IPv6ProxyAddress) return { kind: 'header', length, client: { address: ipv6Text(address.sourceAddress.address), port: address.sourcePort } };
  // UNSPEC and UNIX sources carry no IP address to authorise: the proxy's own address stands.
  return { kind: 'header', length };
}

function ipv6Text(bytes: readonly number[]): string {
  // An IPv4 client of a dual-stack proxy: its IPv4 address, as the allow-lists compare them.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.slice(12).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  // Through URL to get the canonical compressed form (RFC 5952), as sockets report addresses.
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
