/**
 * Link, IP and TCP headers of one captured packet, read in place. Nothing is allocated per
 * packet: the caller's TcpSegment is filled, and the payload stays in the packet buffer.
 */

import { LinkType, type PacketRef } from '../capture/types.js';
import type { NetStats, TcpSegment } from './types.js';

/** Outcome of decoding one packet; counted once in {@link decodeTcp}. */
const TCP = 0;
const NOT_TCP = 1;
const MALFORMED = 2;
const FRAGMENT = 3;
const UNKNOWN_LINK = 4;
type Outcome = typeof TCP | typeof NOT_TCP | typeof MALFORMED | typeof FRAGMENT | typeof UNKNOWN_LINK;

/** What the link layer carries; set by the link decoders next to the offset they return. */
const L3_IPV4 = 4;
const L3_IPV6 = 6;
/** Raw IP link types: the version nibble decides. */
const L3_BY_VERSION = 0;
const L3_OTHER = -1;
let l3Kind = L3_OTHER;
/** Link decoder results that are not offsets. */
const CUT = -1;
const UNKNOWN_LINK_OFFSET = -2;

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
/** IEEE 802.1Q C-tag, 802.1ad S-tag, and the pre-standard QinQ tag some switches still send. */
const ETHERTYPE_VLAN = 0x8100;
const ETHERTYPE_QINQ = 0x88a8;
const ETHERTYPE_QINQ_OLD = 0x9100;

/** BSD AF_INET6 differs by OS: 24 NetBSD/OpenBSD, 28 FreeBSD, 30 macOS (AF_INET is 2 everywhere). */
const AF_INET = 2;
const AF_INET6_BSD = 24;
const AF_INET6_FREEBSD = 28;
const AF_INET6_DARWIN = 30;

const IPPROTO_TCP = 6;
const IPV6_HOP_BY_HOP = 0;
const IPV6_ROUTING = 43;
const IPV6_FRAGMENT = 44;
const IPV6_AH = 51;
const IPV6_DEST_OPTIONS = 60;

/**
 * Fill `out` with the TCP segment in `p`. Returns false, counting why in `stats`, when the
 * packet is not a decodable TCP segment. Never throws on bad input.
 */
export function decodeTcp(p: PacketRef, out: TcpSegment, stats: NetStats): boolean {
  switch (decode(p, out)) {
    case TCP:
      stats.tcpPackets++;
      return true;
    case NOT_TCP:
      stats.nonTcpPackets++;
      return false;
    case MALFORMED:
      stats.malformedPackets++;
      return false;
    case FRAGMENT:
      stats.ipFragments++;
      return false;
    case UNKNOWN_LINK:
      stats.unknownLinkTypes.set(p.linkType, (stats.unknownLinkTypes.get(p.linkType) ?? 0) + 1);
      return false;
  }
}

function decode(p: PacketRef, out: TcpSegment): Outcome {
  const buf = p.data;
  const start = p.offset;
  const end = Math.min(start + p.capLen, buf.length);
  const l3 = start >= 0 ? linkPayload(buf, start, end, p.linkType) : CUT;
  if (l3 === UNKNOWN_LINK_OFFSET) return UNKNOWN_LINK;
  if (l3 < 0) return MALFORMED;
  if (l3Kind === L3_OTHER) return NOT_TCP;
  if (l3 >= end) return MALFORMED;
  const version = buf[l3]! >> 4;
  if (l3Kind !== L3_BY_VERSION && l3Kind !== version) return MALFORMED;
  // Bytes the capture did not keep (snaplen), for when IP's own length cannot tell (TSO, jumbograms).
  const uncaptured = Math.max(0, p.origLen - p.capLen);
  let outcome: Outcome;
  if (version === 4) outcome = ipv4(buf, l3, end, uncaptured, out);
  else if (version === 6) outcome = ipv6(buf, l3, end, uncaptured, out);
  else return MALFORMED;
  if (outcome === TCP) {
    out.frame = p.frame;
    out.tsSec = p.tsSec;
    out.tsNsec = p.tsNsec;
    out.data = buf;
  }
  return outcome;
}

/** Offset of the link layer's payload and, in {@link l3Kind}, what it is; negative when cut or unknown. */
function linkPayload(buf: Buffer, off: number, end: number, linkType: number): number {
  switch (linkType) {
    case LinkType.ETHERNET:
      return etherTyped(buf, off + 12, off + 14, end);
    case LinkType.LINUX_SLL:
      // Linux cooked capture v1: packet type, ARPHRD type, address length, 8-byte address, protocol.
      return etherTyped(buf, off + 14, off + 16, end);
    case LinkType.LINUX_SLL2:
      // Linux cooked capture v2: protocol first, then reserved, ifindex, ARPHRD, type, address.
      return etherTyped(buf, off, off + 20, end);
    case LinkType.RAW:
      l3Kind = L3_BY_VERSION;
      return off;
    case LinkType.IPV4:
      l3Kind = L3_IPV4;
      return off;
    case LinkType.IPV6:
      l3Kind = L3_IPV6;
      return off;
    case LinkType.NULL:
      return loopback(buf, off, end, false);
    case LinkType.LOOP:
      return loopback(buf, off, end, true);
    default:
      return UNKNOWN_LINK_OFFSET;
  }
}

/**
 * An EtherType at `typeOff` announcing the payload at `payloadOff`, behind any number of
 * VLAN tags (IEEE 802.1Q / 802.1ad: each tag is 2 bytes of TCI then the next EtherType).
 */
function etherTyped(buf: Buffer, typeOff: number, payloadOff: number, end: number): number {
  if (payloadOff > end) return CUT;
  let type = u16(buf, typeOff);
  while (type === ETHERTYPE_VLAN || type === ETHERTYPE_QINQ || type === ETHERTYPE_QINQ_OLD) {
    if (payloadOff + 4 > end) return CUT;
    type = u16(buf, payloadOff + 2);
    payloadOff += 4;
  }
  l3Kind = type === ETHERTYPE_IPV4 ? L3_IPV4 : type === ETHERTYPE_IPV6 ? L3_IPV6 : L3_OTHER;
  return payloadOff;
}

/**
 * DLT_NULL holds the BSD address family in the capturing host's byte order, which the file
 * does not record: try both. DLT_LOOP is the same header in network order.
 */
function loopback(buf: Buffer, off: number, end: number, networkOrderOnly: boolean): number {
  if (off + 4 > end) return CUT;
  l3Kind = familyKind(buf.readUInt32BE(off));
  if (l3Kind === L3_OTHER && !networkOrderOnly) l3Kind = familyKind(buf.readUInt32LE(off));
  return off + 4;
}

function familyKind(family: number): number {
  if (family === AF_INET) return L3_IPV4;
  if (family === AF_INET6_BSD || family === AF_INET6_FREEBSD || family === AF_INET6_DARWIN) return L3_IPV6;
  return L3_OTHER;
}

/** RFC 791. `end` is the end of the captured bytes. */
function ipv4(buf: Buffer, off: number, end: number, uncaptured: number, out: TcpSegment): Outcome {
  if (off + 20 > end) return MALFORMED;
  const headerLen = (buf[off]! & 0x0f) * 4;
  if (headerLen < 20 || off + headerLen > end) return MALFORMED;
  const totalLength = u16(buf, off + 2);
  if (buf[off + 9] !== IPPROTO_TCP) return NOT_TCP;
  // Flags and fragment offset: MF (0x2000) or a non-zero offset (low 13 bits) mean a fragment.
  // Even the first fragment is skipped: its TCP payload is incomplete.
  if ((u16(buf, off + 6) & 0x3fff) !== 0) return FRAGMENT;
  let ipEnd: number;
  let missing: number;
  if (totalLength === 0) {
    // A packet captured on the sending host before TCP segmentation offload split it has no
    // real total length yet; Wireshark: "reported as 0, presumed to be because of TCP
    // segmentation offload". Use what was captured.
    ipEnd = end;
    missing = uncaptured;
  } else {
    if (totalLength < headerLen) return MALFORMED;
    // The total length, not the frame, bounds the payload: Ethernet pads frames to 60 bytes.
    // A capture cut short (snaplen) keeps less: the rest is missing, a gap for the stream.
    ipEnd = Math.min(off + totalLength, end);
    missing = off + totalLength - ipEnd;
  }
  out.ipVersion = 4;
  out.srcAddrOff = off + 12;
  out.dstAddrOff = off + 16;
  return tcp(buf, off + headerLen, ipEnd, missing, out);
}

/** RFC 8200. */
function ipv6(buf: Buffer, off: number, end: number, uncaptured: number, out: TcpSegment): Outcome {
  if (off + 40 > end) return MALFORMED;
  const payloadLength = u16(buf, off + 4);
  let ipEnd: number;
  let missing: number;
  if (payloadLength === 0) {
    // A jumbogram (RFC 2675) or a large-send-offload packet captured before segmentation:
    // the real length is not in the fixed header. Use what was captured.
    ipEnd = end;
    missing = uncaptured;
  } else {
    ipEnd = Math.min(off + 40 + payloadLength, end);
    missing = off + 40 + payloadLength - ipEnd;
  }
  let next = buf[off + 6]!;
  let pos = off + 40;
  for (;;) {
    if (next === IPPROTO_TCP) break;
    if (next !== IPV6_HOP_BY_HOP && next !== IPV6_ROUTING && next !== IPV6_DEST_OPTIONS &&
        next !== IPV6_FRAGMENT && next !== IPV6_AH) {
      return NOT_TCP; // UDP, ICMPv6, ESP (encrypted: nothing to read), No Next Header, ...
    }
    if (pos + 8 > ipEnd) return MALFORMED;
    const headerType = next;
    next = buf[pos]!;
    if (headerType === IPV6_FRAGMENT) {
      // Offset (13 bits) then 2 reserved bits and M. Offset 0 with M clear is an "atomic
      // fragment" (RFC 6946): a whole packet, decoded as usual.
      if ((u16(buf, pos + 2) & 0xfff9) !== 0) return carriesTcp(next) ? FRAGMENT : NOT_TCP;
      pos += 8;
    } else if (headerType === IPV6_AH) {
      pos += (buf[pos + 1]! + 2) * 4; // RFC 4302 §2.2: length in 4-byte units, minus 2
    } else {
      pos += (buf[pos + 1]! + 1) * 8; // RFC 8200 §4.3-4.6: length in 8-byte units, minus 1
    }
    if (pos > ipEnd) return MALFORMED;
  }
  out.ipVersion = 6;
  out.srcAddrOff = off + 8;
  out.dstAddrOff = off + 24;
  return tcp(buf, pos, ipEnd, missing, out);
}

/** Whether a fragment's next header may lead to TCP (directly or through more extension headers). */
function carriesTcp(next: number): boolean {
  return next === IPPROTO_TCP || next === IPV6_ROUTING || next === IPV6_DEST_OPTIONS || next === IPV6_AH;
}

/**
 * RFC 9293 §3.1. `ipEnd` is where the captured IP payload ends; `missing` the bytes IP
 * announced beyond it.
 */
function tcp(buf: Buffer, off: number, ipEnd: number, missing: number, out: TcpSegment): Outcome {
  if (off + 20 > ipEnd) return MALFORMED;
  const headerLen = (buf[off + 12]! >> 4) * 4;
  if (headerLen < 20 || off + headerLen > ipEnd) return MALFORMED;
  out.srcPort = u16(buf, off);
  out.dstPort = u16(buf, off + 2);
  out.seq = int32(buf, off + 4);
  out.ack = int32(buf, off + 8);
  out.flags = buf[off + 13]!;
  out.window = u16(buf, off + 14);
  out.windowScale = out.flags & SYN_FLAG ? windowScale(buf, off + 20, off + headerLen) : -1;
  out.payloadOff = off + headerLen;
  out.payloadLen = ipEnd - out.payloadOff;
  out.missingLen = missing;
  return TCP;
}

const SYN_FLAG = 0x02;

/** The window scale option's shift among a SYN's options buf[off, end) (RFC 7323 §2.2: kind 3, length 3), else -1. */
function windowScale(buf: Buffer, off: number, end: number): number {
  while (off < end) {
    const kind = buf[off]!;
    if (kind === 0) return -1; // end of option list
    if (kind === 1) {
      off++; // no-operation
      continue;
    }
    if (off + 1 >= end) return -1;
    const len = buf[off + 1]!;
    if (len < 2 || off + len > end) return -1;
    if (kind === 3 && len === 3) return Math.min(buf[off + 2]!, 14); // RFC 7323 §2.3: larger shifts are taken as 14
    off += len;
  }
  return -1;
}

function u16(buf: Buffer, off: number): number {
  return (buf[off]! << 8) | buf[off + 1]!;
}

/** Big-endian, signed (see tcp/seq.ts). (Buffer#readInt32BE validates its argument on every call: this is per packet.) */
function int32(buf: Buffer, off: number): number {
  return (buf[off]! << 24) | (buf[off + 1]! << 16) | (buf[off + 2]! << 8) | buf[off + 3]!;
}
