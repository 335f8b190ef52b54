/**
 * Which of `count` lanes a TCP segment's connection belongs to: a hash of its two endpoints that
 * does not depend on the direction, so both halves of a connection go to the same lane.
 */
import type { TcpSegment } from './types.js';

export function connectionLane(s: TcpSegment, count: number): number {
  const d = s.data;
  let h: number;
  if (s.ipVersion === 4) h = word(d, s.srcAddrOff) ^ word(d, s.dstAddrOff);
  else {
    h = 0;
    for (let i = 0; i < 16; i += 4) h ^= word(d, s.srcAddrOff + i) ^ word(d, s.dstAddrOff + i);
  }
  h ^= s.srcPort ^ s.dstPort;
  // A multiply and shifts spread the bits (addresses of one subnet differ only in their low bits).
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return ((h ^ (h >>> 16)) >>> 0) % count;
}

function word(d: Uint8Array, at: number): number {
  return ((d[at]! << 24) | (d[at + 1]! << 16) | (d[at + 2]! << 8) | d[at + 3]!) >>> 0;
}
