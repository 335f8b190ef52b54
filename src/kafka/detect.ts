/**
 * Is this Kafka? Two questions the conversation asks of raw bytes: does a request plausibly start
 * here (to resync a client stream, and to tell a SASL token from the next request), and, on a port
 * not known to be Kafka, which side of a new connection is the client (the probe).
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
 * a run of bare ACKs acknowledging bytes never captured would otherwise grow the probe forever.
 */
const MAX_PROBE_CHUNKS = 1024;

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

type ProbeChunk = { dir: Direction; bytes: Buffer | null; gap: number; frame: number; tsSec: number; tsNsec: number };

/** What the probe makes of the bytes so far. */
export type ProbeVerdict = { client: Direction } | 'undecided' | 'not-kafka';

/**
 * An unknown port: keeps the first bytes of each direction (a copy: the packet buffer is reused)
 * until one of them starts with a plausible Kafka request. That side is the client; the owner then
 * replays what was kept, in capture order.
 */
export class KafkaProbe {
  private chunks: ProbeChunk[] = [];
  private readonly kept: [number, number] = [0, 0];

  /** `client`: the capture saw the SYN, so only that side can be the client (its sender, side A). */
  constructor(
    private readonly maxFrameBytes: number,
    private readonly client: Direction | null = null,
  ) {}

  /** Nothing kept yet, not even a gap. */
  get empty(): boolean {
    return this.chunks.length === 0;
  }

  /** Keeps up to PROBE_BYTES of this direction; returns how many of `len` bytes were kept. */
  data(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): number {
    const keep = Math.min(len, PROBE_BYTES - this.kept[dir]);
    if (keep > 0) {
      this.chunks.push({ dir, bytes: Buffer.from(buf.subarray(off, off + keep)), gap: 0, frame, tsSec, tsNsec });
      this.kept[dir] += keep;
    }
    return keep;
  }

  /** A gap; false when the probe has seen too many pieces to go on (the connection is not Kafka). */
  gap(dir: Direction, bytes: number, frame: number, tsSec: number, tsNsec: number): boolean {
    if (this.chunks.length >= MAX_PROBE_CHUNKS) return false;
    this.chunks.push({ dir, bytes: null, gap: bytes, frame, tsSec, tsNsec });
    return true;
  }

  verdict(): ProbeVerdict {
    for (const d of [0, 1] as const) if ((this.client === null || d === this.client) && this.directionVerdict(d) === PLAUSIBLE) return { client: d };
    return this.kept[0] >= PROBE_BYTES || this.kept[1] >= PROBE_BYTES ? 'not-kafka' : 'undecided';
  }

  /** Hands back what was kept, in capture order; the probe is empty afterwards. */
  replay(data: (dir: Direction, bytes: Buffer, frame: number, tsSec: number, tsNsec: number) => void, gap: (dir: Direction, bytes: number, frame: number) => void): void {
    const chunks = this.chunks;
    this.chunks = [];
    for (const c of chunks) {
      if (c.bytes !== null) data(c.dir, c.bytes, c.frame, c.tsSec, c.tsNsec);
      else gap(c.dir, c.gap, c.frame);
    }
  }

  /** Does direction d's kept stream start with a plausible request? (From its first byte, before any gap.) */
  private directionVerdict(d: Direction): Plausibility {
    const parts: Buffer[] = [];
    for (const c of this.chunks) {
      if (c.dir !== d) continue;
      if (c.bytes === null) break;
      parts.push(c.bytes);
    }
    if (parts.length === 0) return NEED_MORE;
    const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (looksLikeTls(joined, 0, joined.length)) return IMPLAUSIBLE;
    return plausibleRequest(joined, 0, Math.min(joined.length, PROBE_BYTES), true, this.maxFrameBytes);
  }
}
