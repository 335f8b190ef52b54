/**
 * Packet byte builders for tests: every header field is written here, by name, so a test's
 * bytes are explained by the call that made them. Layers nest: ethernet(ipv4({...}, tcp({...}, payload))).
 */

import type { PacketRef } from '../../src/capture/types.js';
import { LinkType } from '../../src/capture/types.js';

export type Bytes = Uint8Array;

const enc = new TextEncoder();

/** A string as UTF-8 bytes, bytes as they are. */
export function bytes(data: Bytes | string | readonly number[]): Bytes {
  if (typeof data === 'string') return enc.encode(data);
  return data instanceof Uint8Array ? data : Uint8Array.from(data);
}

export function concat(...parts: Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export function u16(n: number): Bytes {
  return Uint8Array.of((n >>> 8) & 0xff, n & 0xff);
}

export function u32(n: number): Bytes {
  return Uint8Array.of((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

function u32le(n: number): Bytes {
  return Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
}

// ---------------------------------------------------------------------------------------------
// Addresses

export function ipv4Address(text: string): Bytes {
  const parts = text.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`bad IPv4 address ${text}`);
  }
  return Uint8Array.from(parts);
}

/** IPv6 text (with '::' and an optional dotted IPv4 tail) as 16 bytes. */
export function ipv6Address(text: string): Bytes {
  let groups: number[];
  const tail4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let head = text;
  const extra: number[] = [];
  if (tail4) {
    const b = ipv4Address(tail4[1]!);
    extra.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
    head = text.slice(0, -tail4[1]!.length);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const parse = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const dbl = head.indexOf('::');
  if (dbl >= 0) {
    const left = parse(head.slice(0, dbl));
    const right = [...parse(head.slice(dbl + 2)), ...extra];
    groups = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  } else {
    groups = [...parse(head), ...extra];
  }
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) {
    throw new Error(`bad IPv6 address ${text}`);
  }
  return concat(...groups.map(u16));
}

/** 'ip:port' or '[ipv6]:port'. */
export function parseEndpoint(text: string): { ip: string; port: number; v6: boolean } {
  const m = /^\[(.+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  if (!m) throw new Error(`bad endpoint ${text}`);
  return { ip: m[1]!, port: Number(m[2]), v6: m[1]!.includes(':') };
}

// ---------------------------------------------------------------------------------------------
// Link layers

export const EtherType = { IPV4: 0x0800, ARP: 0x0806, VLAN: 0x8100, QINQ: 0x88a8, QINQ_OLD: 0x9100, IPV6: 0x86dd } as const;

export interface VlanTag {
  /** Tag protocol identifier: 0x8100 (802.1Q, the default), 0x88a8 (802.1ad), 0x9100. */
  tpid?: number;
  id: number;
  pcp?: number;
}

export interface EthernetOptions {
  /** Tags, outermost first. A number is an 802.1Q tag with that VLAN id. */
  vlan?: (number | VlanTag)[];
  /** Default: from the payload's IP version nibble (0x0800 or 0x86dd). */
  etherType?: number;
  dstMac?: readonly number[];
  srcMac?: readonly number[];
  /** Pad the frame with zeros to Ethernet's 60-byte minimum, as a NIC does on the wire. */
  pad?: boolean;
}

export function ethernet(payload: Bytes, opts: EthernetOptions = {}): Bytes {
  const tags = (opts.vlan ?? []).map((t) => (typeof t === 'number' ? { id: t } : t));
  const frame = concat(
    Uint8Array.from(opts.dstMac ?? [0x02, 0, 0, 0, 0, 0x02]),
    Uint8Array.from(opts.srcMac ?? [0x02, 0, 0, 0, 0, 0x01]),
    ...tags.map((t) => concat(u16(t.tpid ?? EtherType.VLAN), u16(((t.pcp ?? 0) << 13) | t.id))),
    u16(opts.etherType ?? etherTypeOf(payload)),
    payload,
  );
  if (!opts.pad || frame.length >= 60) return frame;
  return concat(frame, new Uint8Array(60 - frame.length));
}

function etherTypeOf(ipPacket: Bytes): number {
  return ipPacket[0]! >> 4 === 6 ? EtherType.IPV6 : EtherType.IPV4;
}

/** Linux cooked capture v1 (LINKTYPE_LINUX_SLL): 16 bytes, protocol at offset 14. */
export function sll(payload: Bytes, proto: number = etherTypeOf(payload)): Bytes {
  return concat(
    u16(0), // packet type: sent to us
    u16(1), // ARPHRD_ETHER
    u16(6), // link-layer address length
    Uint8Array.of(0x02, 0, 0, 0, 0, 0x01, 0, 0), // address, padded to 8
    u16(proto),
    payload,
  );
}

/** Linux cooked capture v2 (LINKTYPE_LINUX_SLL2): 20 bytes, protocol at offset 0. */
export function sll2(payload: Bytes, proto: number = etherTypeOf(payload)): Bytes {
  return concat(
    u16(proto),
    u16(0), // reserved
    u32(2), // interface index
    u16(1), // ARPHRD_ETHER
    Uint8Array.of(4), // packet type: outgoing
    Uint8Array.of(6), // link-layer address length
    Uint8Array.of(0x02, 0, 0, 0, 0, 0x01, 0, 0),
    payload,
  );
}

/** BSD AF_ values as DLT_NULL / DLT_LOOP carry them. */
export const AddressFamily = { INET: 2, INET6_BSD: 24, INET6_FREEBSD: 28, INET6_DARWIN: 30 } as const;

/**
 * BSD loopback header: the address family as 4 bytes. DLT_NULL uses the capturing host's byte
 * order (little-endian by default here, as on x86), DLT_LOOP network order (bigEndian).
 */
export function nullLoop(payload: Bytes, family: number, bigEndian = false): Bytes {
  return concat(bigEndian ? u32(family) : u32le(family), payload);
}

// ---------------------------------------------------------------------------------------------
// IP

export const IpProto = { TCP: 6, UDP: 17, ICMPV6: 58 } as const;

export interface Ipv4Options {
  src: string;
  dst: string;
  /** Option bytes; zero-padded (End of Option List) to a multiple of 4. */
  options?: Bytes | readonly number[];
  /** Default TCP (6). */
  proto?: number;
  /** Default: header + payload. 0 imitates a packet captured before TCP segmentation offload. */
  totalLength?: number;
  /** Header length in bytes written into IHL (default: the real one). */
  headerLength?: number;
  version?: number;
  id?: number;
  ttl?: number;
  dontFragment?: boolean;
  moreFragments?: boolean;
  /** Fragment offset in 8-byte units. */
  fragmentOffset?: number;
}

export function ipv4(o: Ipv4Options, payload: Bytes): Bytes {
  let options = bytes(o.options ?? []);
  if (options.length % 4 !== 0) options = concat(options, new Uint8Array(4 - (options.length % 4)));
  const headerLen = 20 + options.length;
  const flags = (o.dontFragment ? 0x4000 : 0) | (o.moreFragments ? 0x2000 : 0) | (o.fragmentOffset ?? 0);
  const header = concat(
    Uint8Array.of(((o.version ?? 4) << 4) | ((o.headerLength ?? headerLen) / 4)),
    Uint8Array.of(0), // DSCP/ECN
    u16(o.totalLength ?? headerLen + payload.length),
    u16(o.id ?? 0x1234),
    u16(flags),
    Uint8Array.of(o.ttl ?? 64, o.proto ?? IpProto.TCP),
    u16(0), // header checksum, filled below
    ipv4Address(o.src),
    ipv4Address(o.dst),
    options,
  );
  header.set(u16(internetChecksum(header)), 10);
  return concat(header, payload);
}

/** An IPv6 extension header. Lengths are total bytes. */
export type Ipv6ExtHeader =
  | { type: 0 | 43 | 60; length?: number } // hop-by-hop, routing, destination options (multiple of 8, default 8)
  | { type: 44; offset?: number; more?: boolean; id?: number } // fragment: offset in 8-byte units
  | { type: 51; length?: number }; // authentication header (multiple of 4, at least 12, default 12)

export interface Ipv6Options {
  src: string;
  dst: string;
  extHeaders?: Ipv6ExtHeader[];
  /** Upper-layer protocol after the extension headers; default TCP. */
  proto?: number;
  /** Default: extension headers + payload. 0 imitates a jumbogram / large-send-offload packet. */
  payloadLength?: number;
  hopLimit?: number;
}

export function ipv6(o: Ipv6Options, payload: Bytes): Bytes {
  const exts = o.extHeaders ?? [];
  const nextOf = (i: number): number => (i < exts.length ? exts[i]!.type : (o.proto ?? IpProto.TCP));
  const extBytes = exts.map((h, i) => extHeader(h, nextOf(i + 1)));
  const body = concat(...extBytes, payload);
  return concat(
    u32(6 << 28), // version 6, traffic class 0, flow label 0
    u16(o.payloadLength ?? body.length),
    Uint8Array.of(nextOf(0), o.hopLimit ?? 64),
    ipv6Address(o.src),
    ipv6Address(o.dst),
    body,
  );
}

function extHeader(h: Ipv6ExtHeader, next: number): Bytes {
  switch (h.type) {
    case 44:
      return concat(Uint8Array.of(next, 0), u16(((h.offset ?? 0) << 3) | (h.more ? 1 : 0)), u32(h.id ?? 0xabcd));
    case 51: {
      const len = h.length ?? 12;
      // Length field: 4-byte units minus 2 (RFC 4302). SPI and sequence number, then ICV.
      return concat(Uint8Array.of(next, len / 4 - 2), u16(0), u32(0x100), u32(1), new Uint8Array(len - 12));
    }
    default: {
      const len = h.length ?? 8;
      // Length field: 8-byte units minus 1 (RFC 8200). The rest is a PadN option (type 1).
      return concat(Uint8Array.of(next, len / 8 - 1), Uint8Array.of(1, len - 4), new Uint8Array(len - 4));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// TCP

export const Flags = { FIN: 0x01, SYN: 0x02, RST: 0x04, PSH: 0x08, ACK: 0x10, URG: 0x20, ECE: 0x40, CWR: 0x80 } as const;

/** 'SA', 'PA', 'FA', 'R', ... (F S R P A U E C), or the flags byte. */
export function tcpFlags(flags: number | string): number {
  if (typeof flags === 'number') return flags;
  const letters: Record<string, number> = { F: 0x01, S: 0x02, R: 0x04, P: 0x08, A: 0x10, U: 0x20, E: 0x40, C: 0x80 };
  let n = 0;
  for (const ch of flags) {
    const bit = letters[ch];
    if (bit === undefined) throw new Error(`bad TCP flag ${ch} in ${flags}`);
    n |= bit;
  }
  return n;
}

export interface TcpOptions {
  sport: number;
  dport: number;
  seq: number;
  ack?: number;
  flags: number | string;
  /** Option bytes (e.g. MSS: [2, 4, 0x05, 0xb4]); zero-padded (EOL) to a multiple of 4. */
  options?: Bytes | readonly number[];
  /** Header length in bytes written into the data offset field (default: the real one). */
  headerLength?: number;
  window?: number;
}

/** A TCP segment. The checksum is 0 here (kcid never checks it; offload often leaves it wrong). */
export function tcp(o: TcpOptions, payload: Bytes | string = new Uint8Array(0)): Bytes {
  let options = bytes(o.options ?? []);
  if (options.length % 4 !== 0) options = concat(options, new Uint8Array(4 - (options.length % 4)));
  const headerLen = 20 + options.length;
  return concat(
    u16(o.sport),
    u16(o.dport),
    u32(o.seq >>> 0),
    u32((o.ack ?? 0) >>> 0),
    Uint8Array.of(((o.headerLength ?? headerLen) / 4) << 4, tcpFlags(o.flags)),
    u16(o.window ?? 65535),
    u16(0), // checksum
    u16(0), // urgent pointer
    options,
    bytes(payload),
  );
}

export interface TcpPacketOptions extends Omit<TcpOptions, 'flags'> {
  src: string;
  dst: string;
  flags?: number | string;
  payload?: Bytes | string;
  vlan?: (number | VlanTag)[];
}

/**
 * An Ethernet frame holding an IPv4 (or, for an address with ':', IPv6) TCP segment with a
 * correct TCP checksum. Flags default to 'A', or 'PA' with a payload.
 */
export function tcpPacket(o: TcpPacketOptions): Bytes {
  const payload = bytes(o.payload ?? new Uint8Array(0));
  const segment = tcp({ ...o, flags: o.flags ?? (payload.length > 0 ? 'PA' : 'A') }, payload);
  const v6 = o.src.includes(':');
  const src = v6 ? ipv6Address(o.src) : ipv4Address(o.src);
  const dst = v6 ? ipv6Address(o.dst) : ipv4Address(o.dst);
  // RFC 9293 §3.1: the checksum covers a pseudo-header of addresses, protocol and length.
  const pseudo = concat(src, dst, u32(IpProto.TCP), u32(segment.length));
  segment.set(u16(internetChecksum(concat(pseudo, segment))), 16);
  const ip = v6 ? ipv6({ src: o.src, dst: o.dst }, segment) : ipv4({ src: o.src, dst: o.dst }, segment);
  return ethernet(ip, o.vlan ? { vlan: o.vlan } : {});
}

/** RFC 1071 one's-complement sum. */
function internetChecksum(data: Bytes): number {
  let sum = 0;
  for (let i = 0; i < data.length; i += 2) sum += (data[i]! << 8) | (data[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

// ---------------------------------------------------------------------------------------------
// PacketRef

export interface PacketRefOptions {
  frame?: number;
  tsSec?: number;
  tsNsec?: number;
  /** Default Ethernet. */
  linkType?: number;
  /** Bytes on the wire; default the captured length. */
  origLen?: number;
  /** Place the packet at this offset of a larger buffer (filled with 0xee) to catch offset mistakes. */
  offset?: number;
  interfaceId?: number;
}

export function packetRef(data: Bytes, o: PacketRefOptions = {}): PacketRef {
  const offset = o.offset ?? 0;
  const buf = Buffer.alloc(offset + data.length + (offset > 0 ? 16 : 0), 0xee);
  buf.set(data, offset);
  return {
    frame: o.frame ?? 1,
    tsSec: o.tsSec ?? 1_700_000_000,
    tsNsec: o.tsNsec ?? 0,
    linkType: o.linkType ?? LinkType.ETHERNET,
    interfaceId: o.interfaceId ?? 0,
    data: buf,
    offset,
    capLen: data.length,
    origLen: o.origLen ?? data.length,
  };
}

// ---------------------------------------------------------------------------------------------
// Conversations

/** One captured packet: Ethernet frame bytes and capture time. */
export interface Frame {
  data: Bytes;
  tsSec: number;
  tsNsec: number;
}

export type Side = 'client' | 'server';

export interface ConversationOptions {
  /** 'ip:port' or '[ipv6]:port'. */
  client: string;
  server: string;
  clientIsn?: number;
  serverIsn?: number;
  /** Largest payload per segment (default 1460); a send longer than that is cut into several segments. */
  mss?: number;
  /** Capture time of the first packet (default 1_700_000_000 s, 0 ns). */
  startSec?: number;
  startNsec?: number;
  /** Time between two packets (default 100 µs). */
  stepNsec?: number;
  vlan?: (number | VlanTag)[];
}

export interface SendOptions {
  /** Cut into segments of at most this many bytes (default: the conversation's mss). */
  mss?: number;
  /** The receiver then sends a pure ACK for the data. */
  acked?: boolean;
}

/**
 * A TCP connection between a client and a server that keeps track of sequence and
 * acknowledgement numbers. Every call appends frames to `frames` and returns the ones it made,
 * so a test can drop or reorder some.
 *
 *   const c = new TcpConversation({ client: '10.0.0.1:50000', server: '10.0.0.2:9092' });
 *   c.handshake(); c.clientSends(request); c.serverSends(response); c.close();
 *   c.frames (Ethernet frames with times: they fit capture.ts's PcapPacket), or c.packetRefs()
 */
export class TcpConversation {
  readonly frames: Frame[] = [];
  /** Next sequence number each side sends. */
  clientSeq: number;
  serverSeq: number;
  private readonly client: { ip: string; port: number };
  private readonly server: { ip: string; port: number };
  private readonly mss: number;
  private readonly stepNsec: number;
  private readonly vlan: (number | VlanTag)[] | undefined;
  private sec: number;
  private nsec: number;

  constructor(o: ConversationOptions) {
    this.client = parseEndpoint(o.client);
    this.server = parseEndpoint(o.server);
    this.clientSeq = o.clientIsn ?? 1000;
    this.serverSeq = o.serverIsn ?? 5000;
    this.mss = o.mss ?? 1460;
    this.stepNsec = o.stepNsec ?? 100_000;
    this.vlan = o.vlan;
    this.sec = o.startSec ?? 1_700_000_000;
    this.nsec = o.startNsec ?? 0;
  }

  /** SYN, SYN+ACK, ACK. */
  handshake(): Frame[] {
    const syn = this.send('client', 'S', new Uint8Array(0), 0);
    this.clientSeq = (this.clientSeq + 1) >>> 0;
    const synAck = this.send('server', 'SA', new Uint8Array(0));
    this.serverSeq = (this.serverSeq + 1) >>> 0;
    return [syn, synAck, this.send('client', 'A')];
  }

  clientSends(data: Bytes | string, o: SendOptions = {}): Frame[] {
    return this.sendData('client', bytes(data), o);
  }

  serverSends(data: Bytes | string, o: SendOptions = {}): Frame[] {
    return this.sendData('server', bytes(data), o);
  }

  /** A pure ACK from `from`, acknowledging everything the peer sent. */
  ack(from: Side): Frame {
    return this.send(from, 'A');
  }

  /** FIN+ACK from `initiator`, FIN+ACK back, last ACK. */
  close(initiator: Side = 'client'): Frame[] {
    const other: Side = initiator === 'client' ? 'server' : 'client';
    return [this.fin(initiator), this.fin(other), this.send(initiator, 'A')];
  }

  /** One FIN+ACK from `from`. */
  fin(from: Side): Frame {
    const frame = this.send(from, 'FA');
    this.advance(from, 1);
    return frame;
  }

  /** RST+ACK from `from`. */
  reset(from: Side): Frame {
    return this.send(from, 'RA');
  }

  /** Let capture time pass. */
  wait(seconds: number): this {
    this.sec += Math.floor(seconds);
    this.nsec += Math.round((seconds % 1) * 1e9);
    this.normalizeTime();
    return this;
  }

  /**
   * One segment with explicit fields (for retransmissions, odd flags, lost data): seq and ack
   * default to the current ones. Sequence numbers do not advance.
   */
  raw(from: Side, o: { flags: number | string; seq?: number; ack?: number; payload?: Bytes | string; window?: number; options?: readonly number[] }): Frame {
    return this.send(from, o.flags, bytes(o.payload ?? new Uint8Array(0)), o.ack, o.seq, { window: o.window, options: o.options });
  }

  /** Frames as PacketRefs (Ethernet), numbered from `firstFrame`. */
  packetRefs(firstFrame = 1): PacketRef[] {
    return this.frames.map((f, i) => packetRef(f.data, { frame: firstFrame + i, tsSec: f.tsSec, tsNsec: f.tsNsec }));
  }

  private sendData(from: Side, data: Bytes, o: SendOptions): Frame[] {
    const mss = o.mss ?? this.mss;
    const out: Frame[] = [];
    for (let off = 0; off < data.length; off += mss) {
      const piece = data.subarray(off, Math.min(off + mss, data.length));
      const last = off + mss >= data.length;
      out.push(this.send(from, last ? 'PA' : 'A', piece));
      this.advance(from, piece.length);
    }
    if (o.acked) out.push(this.ack(from === 'client' ? 'server' : 'client'));
    return out;
  }

  private send(from: Side, flags: number | string, payload: Bytes = new Uint8Array(0), ack?: number, seq?: number,
    extra: { window?: number | undefined; options?: readonly number[] | undefined } = {}): Frame {
    const [src, dst] = from === 'client' ? [this.client, this.server] : [this.server, this.client];
    const data = tcpPacket({
      src: src.ip,
      dst: dst.ip,
      sport: src.port,
      dport: dst.port,
      seq: seq ?? (from === 'client' ? this.clientSeq : this.serverSeq),
      ack: ack ?? (from === 'client' ? this.serverSeq : this.clientSeq),
      flags,
      payload,
      ...(extra.window === undefined ? {} : { window: extra.window }),
      ...(extra.options === undefined ? {} : { options: extra.options }),
      ...(this.vlan ? { vlan: this.vlan } : {}),
    });
    const frame: Frame = { data, tsSec: this.sec, tsNsec: this.nsec };
    this.frames.push(frame);
    this.nsec += this.stepNsec;
    this.normalizeTime();
    return frame;
  }

  private advance(side: Side, n: number): void {
    if (side === 'client') this.clientSeq = (this.clientSeq + n) >>> 0;
    else this.serverSeq = (this.serverSeq + n) >>> 0;
  }

  private normalizeTime(): void {
    this.sec += Math.floor(this.nsec / 1e9);
    this.nsec %= 1e9;
  }
}
