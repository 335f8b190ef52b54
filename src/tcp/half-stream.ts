/**
 * One direction of a TCP connection: puts segments in sequence order, delivers in-order bytes
 * straight from the packet buffer, and copies only what arrives ahead of a hole.
 */

import { seqAdd, seqDiff } from './seq.js';
import type { Direction, ReassemblyStats } from './types.js';

/** Where a half stream delivers: its connection. */
export interface HalfStreamSink {
  /** False once the connection is ignored or has ended: deliver nothing more. */
  readonly live: boolean;
  data(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void;
  gap(dir: Direction, bytes: number, frame: number): void;
}

export interface BufferLimits {
  /** Copied out-of-order bytes kept per direction. */
  maxBytes: number;
  /** Out-of-order pieces kept per direction (bounds the per-piece overhead of tiny segments). */
  maxChunks: number;
}

/**
 * Bytes waiting behind a hole: a copy of captured bytes, or (data null) bytes a segment
 * announced but the capture did not keep (snaplen), delivered as a gap in their turn.
 */
interface Chunk {
  seq: number;
  len: number;
  data: Buffer | null;
  frame: number;
  tsSec: number;
  tsNsec: number;
}

/**
 * The largest window TCP can offer (RFC 7323 §2.3: 2^30 with window scaling). A peer
 * acknowledging further ahead than that is not acknowledging real data: ignored.
 */
const MAX_WINDOW = 2 ** 30;

export class HalfStream {
  /** `next` is known: from this side's SYN, the peer's SYN+ACK, or the first data seen. */
  started = false;
  /** Sequence number of the next byte to deliver. */
  next = 0;
  /** Sequence number of this side's SYN, null when the capture has not shown it. */
  isn: number | null = null;
  /** FIN processed (or the connection is over): nothing more is delivered. */
  ended = false;
  /** The receive window this side's sender last advertised for the peer's bytes (unscaled); -1 before any. */
  window = -1;
  /** The window scale option of this side's SYN (RFC 7323), -1 without one or before the SYN. */
  synScale = -1;
  /** The peer's highest acknowledgement of this stream (valid when ackSeen): the receiver's RCV.NXT. */
  lastAck = 0;
  ackSeen = false;
  /** Sorted by sequence, non-overlapping, all after `next` (the first one never at `next`). */
  private chunks: Chunk[] = [];
  private bufferedBytes = 0;

  constructor(
    private readonly sink: HalfStreamSink,
    private readonly dir: Direction,
    private readonly limits: BufferLimits,
    private readonly stats: ReassemblyStats,
  ) {}

  /** This side's SYN: the stream starts at isn + 1 (the SYN takes one sequence number). */
  syn(isn: number): void {
    this.isn = isn;
    this.started = true;
    this.next = seqAdd(isn, 1);
  }

  /**
   * A segment's payload: `len` captured bytes at buf[off..] starting at sequence `seq`, then
   * `missing` bytes the capture did not keep.
   */
  accept(seq: number, buf: Buffer, off: number, len: number, missing: number,
    frame: number, tsSec: number, tsNsec: number): void {
    const total = len + missing;
    if (total === 0 || !this.sink.live) return;
    if (this.ended) {
      if (seqDiff(seqAdd(seq, total), this.next) <= 0) this.stats.duplicateSegments++;
      return;
    }
    if (!this.started) {
      // Capture started mid-connection: the first data seen starts the stream, unless the peer has
      // already acknowledged past it: then it is old (a keep-alive's byte at RCV.NXT - 1, RFC 9293
      // §3.8.4, or a retransmission) and the stream starts where the peer's acknowledgement says.
      this.started = true;
      this.next = this.ackSeen && seqDiff(this.lastAck, seq) > 0 ? this.lastAck : seq;
    }
    const ahead = seqDiff(seq, this.next);
    if (ahead > 0) {
      this.insert(seq, buf, off, len, total, frame, tsSec, tsNsec);
      this.enforceLimits();
    } else if (seqDiff(seqAdd(seq, total), this.next) <= 0) {
      // Everything already delivered. A keep-alive (RFC 9293 §3.8.4: one old byte at next - 1)
      // is not a retransmission worth counting.
      if (!(total === 1 && ahead === -1)) this.stats.duplicateSegments++;
    } else {
      this.deliver(seq, buf, off, len, total, frame, tsSec, tsNsec);
    }
  }

  /**
   * The peer acknowledged up to `ack`. Bytes it acknowledges that the capture never showed
   * were received but not captured (Wireshark: "ACKed segment that wasn't captured"): a gap.
   */
  acked(ack: number, frame: number): void {
    if (!this.ackSeen || seqDiff(ack, this.lastAck) > 0) {
      this.lastAck = ack;
      this.ackSeen = true;
    }
    if (!this.started || this.ended || !this.sink.live) return;
    let acked = seqDiff(ack, this.next);
    if (acked <= 0 || acked > MAX_WINDOW) return;
    while (acked > 0 && this.sink.live) {
      const first = this.chunks[0];
      if (first === undefined) {
        // One sequence number past the data is most likely a FIN the capture missed
        // (RFC 9293 §3.4: a FIN takes one sequence number), not a lost byte.
        if (acked > 1) this.emitGap(acked, frame);
        return;
      }
      const hole = seqDiff(first.seq, this.next);
      if (hole > acked) {
        this.emitGap(acked, frame);
        return;
      }
      this.skipHole();
      acked = seqDiff(ack, this.next);
    }
  }

  /**
   * This side's FIN at sequence `finSeq` (after its last data byte). The direction ends
   * there: data still waiting behind holes is delivered after gaps, bytes missing right
   * before the FIN become a last gap, bytes buffered beyond the FIN are dropped.
   */
  fin(finSeq: number, frame: number): void {
    if (this.ended) return;
    if (!this.sink.live) {
      this.ended = true;
      return;
    }
    if (!this.started) {
      this.started = true;
      this.next = finSeq;
    }
    this.dropFrom(finSeq);
    this.flush();
    const missing = seqDiff(finSeq, this.next);
    if (missing > 0 && this.sink.live) this.emitGap(missing, frame);
    if (missing >= 0) this.next = seqAdd(finSeq, 1);
    this.ended = true;
    this.release();
  }

  /** Deliver whatever waits behind holes, each hole a gap (end of the connection or the capture). */
  flush(): void {
    while (this.chunks.length > 0 && this.sink.live) this.skipHole();
  }

  /** Drop buffered bytes (the connection is ignored or over). */
  release(): void {
    this.chunks.length = 0;
    this.bufferedBytes = 0;
  }

  /** In order (possibly starting with bytes already delivered): deliver in place, interleaved with buffered bytes. */
  private deliver(seq: number, buf: Buffer, off: number, len: number, total: number,
    frame: number, tsSec: number, tsNsec: number): void {
    let pos = seqDiff(this.next, seq);
    while (pos < total && this.sink.live) {
      // Bytes already buffered win over this segment's copy of them (first seen wins).
      const first = this.chunks[0];
      const limit = first === undefined ? total : Math.min(total, seqDiff(first.seq, seq));
      if (limit > pos) this.emitPart(buf, off, len, pos, limit, frame, tsSec, tsNsec);
      this.drain();
      pos = seqDiff(this.next, seq);
    }
  }

  /** Segment bytes [from, to): captured ones as data, the rest as a gap. */
  private emitPart(buf: Buffer, off: number, len: number, from: number, to: number,
    frame: number, tsSec: number, tsNsec: number): void {
    if (from < len) {
      const n = Math.min(to, len) - from;
      this.next = seqAdd(this.next, n);
      this.sink.data(this.dir, buf, off + from, n, frame, tsSec, tsNsec);
    }
    if (to > len && this.sink.live) this.emitGap(to - Math.max(from, len), frame);
  }

  private emitGap(bytes: number, frame: number): void {
    this.next = seqAdd(this.next, bytes);
    this.stats.gaps++;
    this.stats.gapBytes += bytes;
    this.sink.gap(this.dir, bytes, frame);
  }

  /** Deliver buffered chunks that continue the stream at `next`. */
  private drain(): void {
    while (this.chunks.length > 0 && this.sink.live) {
      const chunk = this.chunks[0]!;
      if (chunk.seq !== this.next) return;
      this.chunks.shift();
      if (chunk.data === null) {
        this.emitGap(chunk.len, chunk.frame);
      } else {
        this.bufferedBytes -= chunk.len;
        this.next = seqAdd(this.next, chunk.len);
        this.sink.data(this.dir, chunk.data, 0, chunk.len, chunk.frame, chunk.tsSec, chunk.tsNsec);
      }
    }
  }

  /** Declare the first hole a gap and deliver what follows it. Always consumes the first chunk (while live). */
  private skipHole(): void {
    const first = this.chunks[0]!;
    const hole = seqDiff(first.seq, this.next);
    if (hole < 0) {
      // Cannot happen (chunks stay ahead of `next`); dropping it keeps every loop finite.
      this.chunks.shift();
      if (first.data !== null) this.bufferedBytes -= first.len;
      return;
    }
    if (hole > 0) this.emitGap(hole, first.frame);
    this.drain();
  }

  /** Keep memory bounded: past the limits, holes are given up as gaps, oldest first. */
  private enforceLimits(): void {
    const { maxBytes, maxChunks } = this.limits;
    while ((this.bufferedBytes > maxBytes || this.chunks.length > maxChunks) && this.sink.live) {
      this.skipHole();
    }
  }

  /** Copy the parts of an out-of-order segment that fill holes in the buffer (first seen wins). */
  private insert(seq: number, buf: Buffer, off: number, len: number, total: number,
    frame: number, tsSec: number, tsNsec: number): void {
    const chunks = this.chunks;
    let pos = 0;
    let i = 0;
    let added = false;
    while (pos < total) {
      const chunk = chunks[i];
      let holeEnd = total;
      if (chunk !== undefined) {
        const start = seqDiff(chunk.seq, seq);
        if (start <= pos) {
          // Already buffered from here (or before): the first copy wins, skip past it.
          pos = Math.max(pos, start + chunk.len);
          i++;
          continue;
        }
        holeEnd = Math.min(start, total);
      }
      // Captured bytes [pos, min(holeEnd, len)), then bytes not captured [max(pos, len), holeEnd).
      if (pos < len) {
        const n = Math.min(holeEnd, len) - pos;
        const copy = Buffer.allocUnsafeSlow(n);
        buf.copy(copy, 0, off + pos, off + pos + n);
        chunks.splice(i++, 0, { seq: seqAdd(seq, pos), len: n, data: copy, frame, tsSec, tsNsec });
        this.bufferedBytes += n;
      }
      if (holeEnd > len) {
        const from = Math.max(pos, len);
        chunks.splice(i++, 0, { seq: seqAdd(seq, from), len: holeEnd - from, data: null, frame, tsSec, tsNsec });
      }
      added = true;
      pos = holeEnd;
    }
    if (added) this.stats.outOfOrderSegments++;
    else this.stats.duplicateSegments++;
  }

  /** Forget buffered bytes at or after `seq` (they claim to follow the FIN). */
  private dropFrom(seq: number): void {
    const chunks = this.chunks;
    while (chunks.length > 0) {
      const last = chunks[chunks.length - 1]!;
      const start = seqDiff(last.seq, seq);
      if (start >= 0) {
        chunks.pop();
        if (last.data !== null) this.bufferedBytes -= last.len;
        continue;
      }
      if (start + last.len > 0) {
        const keep = -start;
        if (last.data !== null) {
          this.bufferedBytes -= last.len - keep;
          last.data = last.data.subarray(0, keep);
        }
        last.len = keep;
      }
      return;
    }
  }
}
