/**
 * IP addresses as text. Called once per connection, never per packet.
 */

/** Dotted-quad IPv4, or RFC 5952 IPv6 (without brackets), read from `buf` at `off`. */
export function formatAddress(buf: Uint8Array, off: number, ipVersion: 4 | 6): string {
  return ipVersion === 4 ? formatIPv4(buf, off) : formatIPv6(buf, off);
}

/** 'ip:port', or '[ipv6]:port' (RFC 5952 §6: brackets keep the port apart from the address's colons). */
export function formatEndpoint(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

function formatIPv4(buf: Uint8Array, off: number): string {
  return `${buf[off]}.${buf[off + 1]}.${buf[off + 2]}.${buf[off + 3]}`;
}

function formatIPv6(buf: Uint8Array, off: number): string {
  if (isIPv4Mapped(buf, off)) {
    // RFC 5952 §5: IPv4-mapped addresses (RFC 4291 §2.5.5.2) keep their dotted-quad tail.
    return `::ffff:${formatIPv4(buf, off + 12)}`;
  }
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((buf[off + i]! << 8) | buf[off + i + 1]!);
  const [zeroStart, zeroLen] = longestZeroRun(groups);
  // RFC 5952 §4.1, §4.3: lowercase hex without leading zeros.
  const hex = (from: number, to: number): string =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':');
  // RFC 5952 §4.2.2: a single zero group is never shortened to '::'.
  if (zeroLen < 2) return hex(0, 8);
  return `${hex(0, zeroStart)}::${hex(zeroStart + zeroLen, 8)}`;
}

/** RFC 5952 §4.2.1, §4.2.3: the longest run of zero groups, the first one when runs tie. */
function longestZeroRun(groups: readonly number[]): [start: number, length: number] {
  let bestStart = -1;
  let bestLen = 0;
  let runStart = -1;
  for (let i = 0; i <= groups.length; i++) {
    if (i < groups.length && groups[i] === 0) {
      if (runStart < 0) runStart = i;
      continue;
    }
    if (runStart >= 0 && i - runStart > bestLen) {
      bestStart = runStart;
      bestLen = i - runStart;
    }
    runStart = -1;
  }
  return [bestStart, bestLen];
}

function isIPv4Mapped(buf: Uint8Array, off: number): boolean {
  for (let i = 0; i < 10; i++) if (buf[off + i] !== 0) return false;
  return buf[off + 10] === 0xff && buf[off + 11] === 0xff;
}
