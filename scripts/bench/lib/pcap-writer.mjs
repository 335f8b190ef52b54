/**
 * A streaming pcap writer for benchmark inputs: Ethernet / IPv4 / TCP packets written straight
 * into one large buffer that is flushed to the file whenever it fills, so a capture of any size
 * is written in constant memory.
 *
 * Layouts: classic pcap (draft-ietf-opsawg-pcap, little-endian, microsecond timestamps), Ethernet II,
 * IPv4 (RFC 791, header checksum computed), TCP (RFC 9293, checksum over the pseudo-header and the
 * payload computed; every segment carries the timestamps option of RFC 7323, as Linux sends it, which
 * is why a 1500-byte MTU carries 1,448 payload bytes).
 */
import { closeSync, openSync, writeSync } from 'node:fs';

const PCAP_MAGIC_US = 0xa1b2c3d4;
const LINKTYPE_ETHERNET = 1;
const SNAPLEN = 262144;
const RECORD_HEADER = 16;
const ETH_HEADER = 14;
const IP_HEADER = 20;
/** 20 bytes + NOP, NOP, Timestamps (kind 8, length 10). */
const TCP_HEADER = 32;
/** 20 bytes + MSS (4), SACK permitted (2), Timestamps (10), NOP (1), window scale (3): Linux's SYN. */
const TCP_SYN_HEADER = 40;

export const FIN = 0x01;
export const SYN = 0x02;
export const RST = 0x04;
export const PSH = 0x08;
export const ACK = 0x10;

/** 1500-byte MTU minus IPv4 (20) and TCP with timestamps (32). */
export const MSS = 1448;

export class PcapWriter {
  /**
   * @param {string} path
   * @param {{ startUs?: number, bufferBytes?: number }} [opts]
   */
  constructor(path, opts = {}) {
    this.fd = openSync(path, 'w');
    this.buf = Buffer.allocUnsafe(opts.bufferBytes ?? 8 * 1024 * 1024);
    this.pos = 0;
    /** Bytes written to the file so far (flushed or not). */
    this.bytes = 0;
    this.packets = 0;
    /** Capture clock, microseconds since the epoch (2025-12-01T00:00:00Z by default). */
    this.clockUs = opts.startUs ?? 1_764_547_200_000_000;
    const h = this.buf;
    h.writeUInt32LE(PCAP_MAGIC_US, 0);
    h.writeUInt16LE(2, 4);
    h.writeUInt16LE(4, 6);
    h.writeInt32LE(0, 8); // thiszone
    h.writeUInt32LE(0, 12); // sigfigs
    h.writeUInt32LE(SNAPLEN, 16);
    h.writeUInt32LE(LINKTYPE_ETHERNET, 20);
    this.pos = 24;
    this.bytes = 24;
  }

  /** Advance the clock: a few microseconds per packet, plus the time 10 Gbit/s takes to carry it. */
  tick(wireBytes) {
    this.clockUs += 1 + Math.floor(wireBytes / 1250);
  }

  /**
   * One TCP segment. `payload[off, off + len)` is copied in; `src` / `dst` are the sending and
   * receiving endpoints of a {@link TcpFlow}.
   */
  segment(src, dst, seq, ack, flags, payload, off, len) {
    const tcpLen = flags & SYN ? TCP_SYN_HEADER : TCP_HEADER;
    const frameLen = ETH_HEADER + IP_HEADER + tcpLen + len;
    if (this.pos + RECORD_HEADER + frameLen > this.buf.length) this.flush();
    const b = this.buf;
    let p = this.pos;
    this.tick(frameLen);
    const sec = Math.floor(this.clockUs / 1e6);
    b.writeUInt32LE(sec, p);
    b.writeUInt32LE(this.clockUs - sec * 1e6, p + 4);
    b.writeUInt32LE(frameLen, p + 8);
    b.writeUInt32LE(frameLen, p + 12);
    p += RECORD_HEADER;
    // Ethernet II: destination MAC, source MAC, EtherType IPv4.
    b.writeUInt16BE(0x0200, p);
    b.writeUInt32BE(dst.mac, p + 2);
    b.writeUInt16BE(0x0200, p + 6);
    b.writeUInt32BE(src.mac, p + 8);
    b.writeUInt16BE(0x0800, p + 12);
    p += ETH_HEADER;
    // IPv4: version 4, IHL 5; total length; identification; DF; TTL 64; protocol TCP.
    const ip = p;
    b[ip] = 0x45;
    b[ip + 1] = 0;
    b.writeUInt16BE(IP_HEADER + tcpLen + len, ip + 2);
    b.writeUInt16BE(src.ipId, ip + 4);
    src.ipId = (src.ipId + 1) & 0xffff;
    b.writeUInt16BE(0x4000, ip + 6);
    b[ip + 8] = 64;
    b[ip + 9] = 6;
    b.writeUInt16BE(0, ip + 10);
    b.writeUInt32BE(src.ip, ip + 12);
    b.writeUInt32BE(dst.ip, ip + 16);
    b.writeUInt16BE(ipChecksum(b, ip), ip + 10);
    p += IP_HEADER;
    // TCP.
    const t = p;
    b.writeUInt16BE(src.port, t);
    b.writeUInt16BE(dst.port, t + 2);
    b.writeUInt32BE(seq >>> 0, t + 4);
    b.writeUInt32BE(flags & ACK ? ack >>> 0 : 0, t + 8);
    b[t + 12] = (tcpLen / 4) << 4;
    b[t + 13] = flags;
    b.writeUInt16BE(flags & SYN ? 64240 : 502, t + 14); // window (scaled by 2^7 after the handshake)
    b.writeUInt32BE(0, t + 16); // checksum (filled below), urgent pointer
    const tsval = Math.floor(this.clockUs / 1000) >>> 0;
    if (flags & SYN) {
      b.writeUInt32BE(0x020405b4, t + 20); // MSS 1460
      b.writeUInt16BE(0x0402, t + 24); // SACK permitted
      b[t + 26] = 8;
      b[t + 27] = 10;
      b.writeUInt32BE(tsval, t + 28);
      b.writeUInt32BE(flags & ACK ? dst.tsval : 0, t + 32);
      b[t + 36] = 1; // NOP
      b[t + 37] = 3; // window scale
      b[t + 38] = 3;
      b[t + 39] = 7;
    } else {
      b.writeUInt16BE(0x0101, t + 20); // NOP, NOP
      b[t + 22] = 8;
      b[t + 23] = 10;
      b.writeUInt32BE(tsval, t + 24);
      b.writeUInt32BE(dst.tsval, t + 28);
    }
    src.tsval = tsval;
    p += tcpLen;
    if (len > 0) payload.copy(b, p, off, off + len);
    b.writeUInt16BE(tcpChecksum(b, ip, t, tcpLen + len), t + 16);
    this.pos = p + len;
    this.bytes += RECORD_HEADER + frameLen;
    this.packets++;
  }

  flush() {
    let done = 0;
    while (done < this.pos) done += writeSync(this.fd, this.buf, done, this.pos - done);
    this.pos = 0;
  }

  close() {
    this.flush();
    closeSync(this.fd);
  }
}

/** RFC 791 header checksum: one's complement of the one's complement sum of the 10 header words. */
function ipChecksum(b, ip) {
  let sum = 0;
  for (let i = 0; i < IP_HEADER; i += 2) sum += (b[ip + i] << 8) | b[ip + i + 1];
  return ~fold(sum) & 0xffff;
}

/** RFC 9293 §3.1: over the pseudo-header (addresses, protocol, TCP length) and the whole segment. */
function tcpChecksum(b, ip, t, tcpLen) {
  let sum = 6 + tcpLen;
  for (let i = 12; i < 20; i += 2) sum += (b[ip + i] << 8) | b[ip + i + 1];
  const end = t + tcpLen;
  let i = t;
  // 4 bytes at a time keeps the sum a small integer: at most 2^32 per step, folded every 32K steps.
  let steps = 0;
  for (; i + 4 <= end; i += 4) {
    sum += ((b[i] << 8) | b[i + 1]) + ((b[i + 2] << 8) | b[i + 3]);
    if (++steps === 32768) {
      sum = fold(sum);
      steps = 0;
    }
  }
  for (; i + 2 <= end; i += 2) sum += (b[i] << 8) | b[i + 1];
  if (i < end) sum += b[i] << 8;
  const c = ~fold(sum) & 0xffff;
  return c;
}

function fold(sum) {
  while (sum > 0xffff) sum = (sum & 0xffff) + Math.floor(sum / 65536);
  return sum;
}

/**
 * One TCP connection between a client and a broker: sequence and acknowledgement numbers,
 * IP identification and TCP timestamps per side. Data is cut into MSS-sized segments; the
 * receiver acknowledges every second full segment, as delayed ACK does.
 */
export class TcpFlow {
  /**
   * @param {PcapWriter} w
   * @param {{ clientIp: number, clientPort: number, brokerIp: number, brokerPort: number, rng: import('./rng.mjs').Rng }} o
   */
  constructor(w, o) {
    this.w = w;
    const rng = o.rng;
    this.c = { ip: o.clientIp >>> 0, port: o.clientPort, mac: o.clientIp >>> 0, seq: rng.int(0, 0xffffffff), ipId: rng.int(0, 0xffff), tsval: 0 };
    this.b = { ip: o.brokerIp >>> 0, port: o.brokerPort, mac: o.brokerIp >>> 0, seq: rng.int(0, 0xffffffff), ipId: rng.int(0, 0xffff), tsval: 0 };
    /** Full segments received without an acknowledgement, per receiver. */
    this.unackedByClient = 0;
    this.unackedByBroker = 0;
  }

  handshake() {
    const { c, b } = this;
    this.w.segment(c, b, c.seq, 0, SYN, null, 0, 0);
    c.seq = (c.seq + 1) >>> 0;
    this.w.segment(b, c, b.seq, c.seq, SYN | ACK, null, 0, 0);
    b.seq = (b.seq + 1) >>> 0;
    this.w.segment(c, b, c.seq, b.seq, ACK, null, 0, 0);
  }

  /**
   * Sends `buf[off, off + len)` from one side, at most `maxSegments` segments; returns the number
   * of bytes sent (so a caller can interleave a large frame with other connections' traffic).
   */
  send(fromClient, buf, off, len, maxSegments = Infinity) {
    const src = fromClient ? this.c : this.b;
    const dst = fromClient ? this.b : this.c;
    let sent = 0;
    for (let n = 0; n < maxSegments && sent < len; n++) {
      const seg = Math.min(MSS, len - sent);
      const last = sent + seg === len;
      this.w.segment(src, dst, src.seq, dst.seq, last ? ACK | PSH : ACK, buf, off + sent, seg);
      src.seq = (src.seq + seg) >>> 0;
      sent += seg;
      if (seg === MSS && !last) this.countFull(fromClient);
    }
    return sent;
  }

  /** Delayed ACK: the receiver acknowledges every second full-sized segment. */
  countFull(fromClient) {
    if (fromClient) {
      if (++this.unackedByBroker < 2) return;
      this.unackedByBroker = 0;
      this.w.segment(this.b, this.c, this.b.seq, this.c.seq, ACK, null, 0, 0);
    } else {
      if (++this.unackedByClient < 2) return;
      this.unackedByClient = 0;
      this.w.segment(this.c, this.b, this.c.seq, this.b.seq, ACK, null, 0, 0);
    }
  }

  /** Client closes: FIN, the broker's FIN+ACK, the client's last ACK. */
  close() {
    const { c, b } = this;
    this.w.segment(c, b, c.seq, b.seq, FIN | ACK, null, 0, 0);
    c.seq = (c.seq + 1) >>> 0;
    this.w.segment(b, c, b.seq, c.seq, FIN | ACK, null, 0, 0);
    b.seq = (b.seq + 1) >>> 0;
    this.w.segment(c, b, c.seq, b.seq, ACK, null, 0, 0);
  }
}

/** '10.0.1.2' → 0x0a000102. */
export function ipv4(text) {
  const p = text.split('.').map(Number);
  return ((p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]) >>> 0;
}
