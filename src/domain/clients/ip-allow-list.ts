import { BlockList, isIP } from 'node:net';
import { DomainError } from '../errors.ts';

/**
 * An allowed-IP entry: a single IPv4/IPv6 address, a CIDR range, or "*" (any address, where the
 * site's policy permits). IPv4-mapped IPv6 addresses (::ffff:192.0.2.1, as a dual-stack socket
 * reports IPv4 peers) are treated as the IPv4 address they carry, in entries and in peers alike.
 */
export function normalizeAllowedIp(entry: string): string {
  const value = entry.trim();
  if (value === '*') return value;
  const [address, prefix, extra] = value.split('/');
  const plain = unmapIpv4(address ?? '');
  const family = isIP(plain);
  if (family === 0 || extra !== undefined) throw invalid(entry);
  if (prefix === undefined) return plain;
  if (!/^\d{1,3}$/.test(prefix)) throw invalid(entry);
  let bits = Number(prefix);
  // A mapped IPv6 prefix (::ffff:10.0.0.0/104) becomes the IPv4 prefix it means (/8).
  if (plain !== address) bits -= 96;
  if (bits < 0 || bits > (family === 4 ? 32 : 128)) throw invalid(entry);
  return `${plain}/${bits}`;
}

export function parseAllowedIps(list: string | string[]): string[] {
  const entries = (Array.isArray(list) ? list : list.split(',')).map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) throw new DomainError('invalid', 'at least one allowed IP, CIDR range or * is required', [{ message: 'at least one allowed IP, CIDR range or * is required', location: 'allowed_ips' }]);
  return [...new Set(entries.map(normalizeAllowedIp))];
}

export function unmapIpv4(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

export function ipMatches(allowed: readonly string[], remoteAddress: string): boolean {
  const peer = unmapIpv4(remoteAddress);
  const family = isIP(peer);
  if (family === 0) return false;
  const blockList = new BlockList();
  for (const entry of allowed) {
    if (entry === '*') return true;
    const [address, prefix] = entry.split('/');
    const entryFamily = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) blockList.addAddress(address!, entryFamily);
    else blockList.addSubnet(address!, Number(prefix), entryFamily);
  }
  return blockList.check(peer, family === 6 ? 'ipv6' : 'ipv4');
}

function invalid(entry: string): DomainError {
  const message = `"${entry}" is not an IPv4/IPv6 address, a CIDR range or *`;
  return new DomainError('invalid', message, [{ message, location: 'allowed_ips' }]);
}
