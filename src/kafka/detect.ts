/**
 * Is this Kafka? The one place that decides it. Two questions asked of raw bytes: does a request
 * plausibly start here (to resync a client stream, and to tell a SASL token from the next request),
 * and, on a port not known to be Kafka, is a connection Kafka and which side is its client (the
 * {@link KafkaDetector}, for plaintext connections and for TLS sessions' plaintext alike; its ports
 * first: {@link clientByPort}).
 */
import type { Direction } from '../tcp/types.js';
import { protocol } from './protocol.js';
import { IMPLAUSIBLE, NEED_MORE, PLAUSIBLE, SCAN_WINDOW, type Plausibility } from './framer.js';
import { decodeRequestHeader } from './headers.js';
import { DecodeError } from './reader.js';
import { looksLikeTls } from '../tls/sniff.js';

/** Bytes kept per direction while deciding whether an unknown port carries Kafka. */
export const PROBE_BYTES = 4096;
/**
 * Pieces kept while deciding. Data pieces are bounded by PROBE_BYTES, but a gap costs no bytes:
 * a run of bare ACKs acknowledging bytes never captured would otherwise grow the detector forever.
 */
const MAX_PROBE_CHUNKS = 1024;
/**
 * Bytes of one direction scanned past its first byte for a request start (a connection captured
 * mid-stream, its start missed) before that direction is given up as not a Kafka client. The scan
 * holds at most PROBE_BYTES of the direction at once: bytes before the scan position are let go.
 */
export const SCAN_BYTES = 1 << 20;

/**
 * A request plausibly starts at buf[off]: int32 size, int16 API key known to kcid, a valid
 * version, a non-negative correlation id and a ClientId (int16 length, -1 for null) that fits the
 * frame and is text: valid UTF-8 (a Kafka STRING is UTF-8: `café-orders`, `注文-service`) without
 * control characters (C0, DEL, C1). `strict` (port detection) also insists the whole
 * header decodes from the bytes available.
 */
export function plausibleRequest(buf: Buffer, off: number, len: number, strict: boolean, maxFrameBytes: number): Plausibility {
  if (len < 4) return NEED_MORE;
  const size = buf.readInt32BE(off);
  if (size < 10 || size > maxFrameBytes) return IMPLAUSIBLE;
  if (len < 8) return NEED_MORE;
  const key = buf.readInt16BE(off + 4);
  const version = buf.readInt16BE(off + 6);
  if (!protocol().isDefined(key, version)) return IMPLAUSIBLE;
  if (len < 14) return NEED_MORE;
  if (buf.readInt32BE(off + 8) < 0) return IMPLAUSIBLE;
  const idLen = buf.readInt16BE(off + 12);
  if (idLen < -1 || idLen > size - 10) return IMPLAUSIBLE;
  const idEnd = off + 14 + Math.max(idLen, 0);
  const checkEnd = Math.min(idEnd, off + len);
  if (!isClientIdText(buf, off + 14, checkEnd, checkEnd < idEnd)) return IMPLAUSIBLE;
  if (idEnd > off + len) return len < SCAN_WINDOW || strict ? NEED_MORE : PLAUSIBLE;
  if (!strict) return PLAUSIBLE;
  const frameEnd = off + 4 + size;
  const available = Math.min(frameEnd, off + len);
  try {
    const h = decodeRequestHeader(buf, off + 4, available, available === frameEnd);
    if (h.problems.length > 0) return IMPLAUSIBLE;
    return PLAUSIBLE;
  } catch (e) {
    if (e instanceof DecodeError) return available < frameEnd ? NEED_MORE : IMPLAUSIBLE;
    throw e;
  }
}

/** plausibleRequest (strict) of a frame head head[at, at + headLen) whose int32 size the framer already read. */
export function plausibleRequestHead(head: Buffer, at: number, headLen: number, size: number, maxFrameBytes: number): Plausibility {
  const b = Buffer.allocUnsafe(headLen + 4);
  b.writeInt32BE(size, 0);
  head.copy(b, 4, at, at + headLen);
  return plausibleRequest(b, 0, headLen + 4, true, maxFrameBytes);
}

/**
 * buf[start, end) is UTF-8 (RFC 3629 §4: no overlong forms, no surrogates, nothing above U+10FFFF)
 * with no C0 control, DEL or C1 control. `cut`: the text goes on past `end`, so a sequence cut there
 * is judged by the bytes it has.
 */
export function isClientIdText(buf: Buffer, start: number, end: number, cut: boolean): boolean {
  let i = start;
  while (i < end) {
    const b = buf[i]!;
    if (b < 0x80) {
      if (b < 0x20 || b === 0x7f) return false;
      i++;
      continue;
    }
    let n: number; // continuation bytes
    let lo = 0x80; // range of the first continuation byte
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) {
      n = 1;
      if (b === 0xc2) lo = 0xa0; // U+0080-U+009F are the C1 controls
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      if (b === 0xe0) lo = 0xa0; // overlong
      else if (b === 0xed) hi = 0x9f; // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      if (b === 0xf0) lo = 0x90; // overlong
      else if (b === 0xf4) hi = 0x8f; // above U+10FFFF
    } else {
      return false;
    }
    for (let k = 1; k <= n; k++) {
      if (i + k >= end) return cut;
      const c = buf[i + k]!;
      if (k === 1 ? c < lo || c > hi : c < 0x80 || c > 0xbf) return false;
    }
    i += n + 1;
  }
  return true;
}

type Piece = { dir: Direction; bytes: Buffer | null; gap: number; frame: number; tsSec: number; tsNsec: number };

/**
 * What the detector makes of a connection so far: its client (by its bytes, or by its port when they
 * cannot tell), not Kafka, or undecided (more bytes may tell).
 */
export type Verdict = Client | 'undecided' | 'not-kafka';
/** The side that sends requests (its TCP direction). */
export interface Client {
  readonly client: Direction;
}
const CLIENT_A: Client = { client: 0 };
const CLIENT_B: Client = { client: 1 };

/** A connection's two endpoints and whether the capture saw its SYN (sent by side A). */
export interface ConnectionEnds {
  readonly a: { readonly port: number };
  readonly b: { readonly port: number };
  readonly synSeen: boolean;
}

/** Where kept pieces go once the detector has decided (the conversation's streams, or a TLS link's plaintext). */
export interface DetectorReplay {
  replayData(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void;
  replayGap(dir: Direction, bytes: number, frame: number): void;
  /** `bytes` of direction `dir` before the first request a mid-stream scan found were skipped (a desync). */
  replaySkipped?(dir: Direction, bytes: number, frame: number): void;
}

/**
 * The client by the ports alone: a --port (kafkaPorts) on either side, or a port learned as a broker's
 * (the target of a SYN whose sender then spoke Kafka). `'probe'`: only the bytes can tell; null: not
 * Kafka (detection off). The SYN decides before any heuristic: its sender, side A, is the client.
 */
export function clientByPort(c: ConnectionEnds, kafkaPorts: ReadonlySet<number>, learned: ReadonlySet<number> | undefined, detect: boolean): Client | 'probe' | null {
  const aKafka = kafkaPorts.has(c.a.port);
  if (kafkaPorts.has(c.b.port) || (aKafka && c.synSeen)) return CLIENT_A;
  if (aKafka) return CLIENT_B;
  if (!detect) return null;
  // A connection whose start the capture missed, where its first bytes could be a response: a learned port settles it.
  if (!c.synSeen) {
    const learnedClient = learnedPortClient(c, learned);
    if (learnedClient !== null) return learnedClient;
  }
  return 'probe';
}

/** The client by a learned broker port on one side only, or null. */
function learnedPortClient(c: ConnectionEnds, learned: ReadonlySet<number> | undefined): Client | null {
  if (learned === undefined) return null;
  const a = learned.has(c.a.port);
  const b = learned.has(c.b.port);
  if (b && (c.synSeen || !a)) return CLIENT_A;
  if (a && !b && !c.synSeen) return CLIENT_B;
  return null;
}

/**
 * "Is this Kafka, and which side is the client?" for a connection on a port not known to be Kafka, in
 * plaintext or in the plaintext of a TLS session alike. It keeps the first bytes of each direction (a
 * copy: the packet buffer is reused), at most PROBE_BYTES of each and MAX_PROBE_CHUNKS pieces, until a
 * candidate client's stream starts with a plausible request (strict: the whole header decodes). A
 * candidate whose first bytes are not a request is not the client; when no candidate is left, the
 * connection is not Kafka. When the bytes cannot tell (a gap at or near the start of the client's
 * stream, or a first request that never completes) and the detector is full or the connection ends,
 * the port decides: a learned broker port makes it Kafka, with every kept piece handed on (gaps
 * included) and nothing dropped, since the detector decides before it refuses a byte.
 */
export class KafkaDetector {
  private pieces: Piece[] = [];
  private readonly kept: [number, number] = [0, 0];
  /** Mid-stream scan (start missed, first bytes not a request): the direction is scanned past its first byte. */
  private readonly scanning: [boolean, boolean] = [false, false];
  /** Scan position: offsets of the direction's kept bytes before it cannot start a confirmed request. */
  private readonly scanPos: [number, number] = [0, 0];
  /** Bytes let go by the scan, and bytes missing from the capture among them (gaps), per direction. */
  private readonly skipped: [number, number] = [0, 0];
  private readonly lost: [number, number] = [0, 0];
  /** The offset in the client's kept bytes where its first confirmed request starts (a scan's find). */
  private clientStart = 0;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly ends: ConnectionEnds,
    private readonly learned: ReadonlySet<number> | undefined,
  ) {}

  /** Nothing kept yet, not even a gap. */
  get empty(): boolean {
    return this.pieces.length === 0;
  }

  /** Keeps up to PROBE_BYTES of this direction; returns how many of `len` bytes were kept (the rest is the owner's once decided). */
  data(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): number {
    if (this.scanning[dir] && this.kept[dir] >= PROBE_BYTES) this.letGo(dir, Math.max(this.scanPos[dir], 1));
    const keep = Math.min(len, PROBE_BYTES - this.kept[dir]);
    if (keep > 0) {
      this.pieces.push({ dir, bytes: Buffer.from(buf.subarray(off, off + keep)), gap: 0, frame, tsSec, tsNsec });
      this.kept[dir] += keep;
    }
    return keep;
  }

  /** `bytes` of direction `dir` are missing from the capture. */
  gap(dir: Direction, bytes: number, frame: number, tsSec: number, tsNsec: number): void {
    if (this.scanning[dir]) {
      // Bytes before the hole cannot start a request that goes on after it: let them go, count the hole.
      this.letGo(dir, this.kept[dir]);
      this.lost[dir] += bytes;
      return;
    }
    // One past the bound, so that the verdict (full) still hands this gap on.
    if (this.pieces.length <= MAX_PROBE_CHUNKS) this.pieces.push({ dir, bytes: null, gap: bytes, frame, tsSec, tsNsec });
  }

  /** The verdict on the bytes so far; with the detector full, the port's. */
  verdict(): Verdict {
    const v = this.byBytes();
    if (v !== 'undecided') return v;
    const full = (this.kept[0] >= PROBE_BYTES && !this.scanning[0]) || (this.kept[1] >= PROBE_BYTES && !this.scanning[1]) || this.pieces.length > MAX_PROBE_CHUNKS;
    return full ? this.byPort() : v;
  }

  /** No more bytes will come (the connection ended, or TLS cannot be read): the bytes' verdict, else the port's. */
  settle(): Verdict {
    const v = this.byBytes();
    return v === 'undecided' ? this.byPort() : v;
  }

  /** The port's verdict alone: Kafka when the broker's port was learned, else not Kafka. */
  byPort(): Verdict {
    return learnedPortClient(this.ends, this.learned) ?? 'not-kafka';
  }

  /** Hands back what was kept, in capture order; the detector is empty afterwards. */
  replay(to: DetectorReplay, client: Direction): void {
    // What a scan let go of the client's stream, up to its first confirmed request, is skipped, not dropped.
    const skip: [number, number] = [0, 0];
    skip[client] = this.clientStart;
    const first = this.pieces[0]?.frame ?? 0;
    for (const d of [0, 1] as const) {
      if (this.lost[d] > 0) to.replayGap(d, this.lost[d], first);
      if (this.skipped[d] + skip[d] > 0) to.replaySkipped?.(d, this.skipped[d] + skip[d], first);
    }
    const pieces = this.pieces;
    this.pieces = [];
    for (const c of pieces) {
      if (c.bytes === null) {
        to.replayGap(c.dir, c.gap, c.frame);
        continue;
      }
      const from = Math.min(skip[c.dir], c.bytes.length);
      skip[c.dir] -= from;
      if (from < c.bytes.length) to.replayData(c.dir, c.bytes, from, c.bytes.length - from, c.frame, c.tsSec, c.tsNsec);
    }
  }

  /** Lets go of the first n kept bytes of direction d (a scan has ruled them out as a request start). */
  private letGo(d: Direction, n: number): void {
    let left = n;
    const out: Piece[] = [];
    for (const c of this.pieces) {
      if (c.dir !== d || left === 0 || c.bytes === null) {
        out.push(c);
        continue;
      }
      if (c.bytes.length <= left) {
        left -= c.bytes.length;
        continue;
      }
      out.push({ ...c, bytes: c.bytes.subarray(left) });
      left = 0;
    }
    const gone = n - left;
    this.pieces = out;
    this.kept[d] -= gone;
    this.skipped[d] += gone;
    this.scanPos[d] = Math.max(0, this.scanPos[d] - gone);
  }

  private byBytes(): Verdict {
    // The SYN's sender (side A) is the only candidate when the capture saw it.
    let a = this.directionVerdict(0);
    if (a === PLAUSIBLE && !this.ends.synSeen && this.midFrame(1)) a = this.confirmStart(0);
    if (a === PLAUSIBLE) return CLIENT_A;
    if (this.ends.synSeen) return a === IMPLAUSIBLE ? 'not-kafka' : 'undecided';
    let b = this.directionVerdict(1);
    if (b === PLAUSIBLE && this.midFrame(0)) b = this.confirmStart(1);
    if (b === PLAUSIBLE) return CLIENT_B;
    return a === IMPLAUSIBLE && b === IMPLAUSIBLE ? 'not-kafka' : 'undecided';
  }

  /**
   * Direction d's first bytes are not a request, nor even a frame's size and a correlation id (a
   * response's head): the capture started inside one of its frames.
   */
  private midFrame(d: Direction): boolean {
    if (!this.scanning[d]) return false;
    if (this.skipped[d] > 0 || this.lost[d] > 0) return true;
    const joined = this.joinedOf(d);
    if (joined.length < 8) return false;
    const size = joined.readInt32BE(0);
    return size < 4 || size > this.maxFrameBytes || joined.readInt32BE(4) < 0;
  }

  /**
   * The other direction is captured mid-frame (its first bytes are not a frame), so one plausible
   * request at the start of d is not enough (a Produce response naming one topic reads as a Produce
   * request header): the frame after it must be a plausible request too.
   */
  private confirmStart(d: Direction): Plausibility {
    if (this.scanning[d]) return PLAUSIBLE; // a scan's find is confirmed already
    const joined = this.joinedOf(d);
    const next = 4 + joined.readInt32BE(0);
    if (next + 14 > joined.length) return NEED_MORE;
    const then = plausibleRequest(joined, next, joined.length - next, true, this.maxFrameBytes);
    if (then !== IMPLAUSIBLE) return then;
    // Not confirmed: d is scanned on past its first byte.
    this.scanning[d] = true;
    this.scanPos[d] = 1;
    return this.scan(d, joined);
  }

  /**
   * Mid-stream (the start missed): the first request start in d's kept bytes past the scan position
   * that is confirmed by the next frame: a plausible request (strict) at o whose frame, ending inside
   * the bytes kept, is followed by another plausible request. Offsets ruled out move the scan
   * position on; each offset is judged once (the bytes a check reads are bounded by PROBE_BYTES).
   */
  private scan(d: Direction, joined: Buffer): Plausibility {
    const len = joined.length;
    let o = this.scanPos[d];
    for (; o + 14 <= len; o++) {
      const here = plausibleRequest(joined, o, len - o, true, this.maxFrameBytes);
      if (here === IMPLAUSIBLE) continue;
      const next = o + 4 + joined.readInt32BE(o);
      // A frame too long to be followed inside the bytes kept cannot be confirmed: not a start kcid can use.
      if (next + 14 > o + PROBE_BYTES) continue;
      if (here === NEED_MORE || next + 14 > len) break;
      const then = plausibleRequest(joined, next, len - next, true, this.maxFrameBytes);
      if (then === IMPLAUSIBLE) continue;
      if (then === NEED_MORE) break;
      this.scanPos[d] = o;
      this.clientStart = o;
      return PLAUSIBLE;
    }
    this.scanPos[d] = o;
    if (this.skipped[d] + o >= SCAN_BYTES) return IMPLAUSIBLE;
    return NEED_MORE;
  }

  /** Does direction d's kept stream start with a plausible request? (From its first byte, before any gap.) */
  private directionVerdict(d: Direction): Plausibility {
    if (this.scanning[d]) return this.scan(d, this.joinedOf(d));
    const parts: Buffer[] = [];
    for (const c of this.pieces) {
      if (c.dir !== d) continue;
      if (c.bytes === null) break;
      parts.push(c.bytes);
    }
    if (parts.length === 0) return NEED_MORE;
    const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (looksLikeTls(joined, 0, joined.length)) return IMPLAUSIBLE;
    const v = plausibleRequest(joined, 0, Math.min(joined.length, PROBE_BYTES), true, this.maxFrameBytes);
    // The start missed, the first bytes not a request: a long-lived connection captured mid-stream is scanned on.
    if (v !== IMPLAUSIBLE || this.ends.synSeen || this.pieces.some((c) => c.dir === d && c.bytes === null)) return v;
    this.scanning[d] = true;
    this.scanPos[d] = 1;
    return this.scan(d, joined);
  }

  private joinedOf(d: Direction): Buffer {
    const parts: Buffer[] = [];
    for (const c of this.pieces) if (c.dir === d && c.bytes !== null) parts.push(c.bytes);
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}
