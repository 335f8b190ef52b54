/**
 * Kafka framing over one ordered TCP byte stream: every message is an int32 size followed by
 * that many bytes (https://kafka.apache.org/protocol#protocol_common).
 *
 * The framer keeps only what decoding needs: the size, then a prefix of the frame that the
 * {@link FrameSink} asks for (the header, and the body for the few APIs kcid reads). The rest of
 * the frame is skipped by counting bytes: Produce and Fetch payloads are never copied.
 *
 * A size outside [minFrameBytes, maxFrameBytes], a head the sink rejects, or a gap that covers a
 * frame's size, all mean the stream is out of sync: the framer reports the bytes it could not
 * frame and scans for the next position the sink calls a plausible frame start. A gap inside a
 * frame whose size is known costs no sync: the count of bytes to skip shrinks, and when the gap
 * cuts the prefix the sink asked for (a capture's snapshot length keeps only the first bytes of
 * each packet) the sink gets a last look at the bytes that did arrive.
 */

export interface FrameSink {
  /**
   * A frame of `size` bytes starts; `buf[at, at + headLen)` are its first bytes: min(size, asked) of them,
   * or the whole frame when it arrived in one piece and is no larger than maxPrefixBytes (then `buf` is
   * the caller's buffer, valid during the call only: copy what is kept).
   * Returns a {@link HeadAnswer}: DONE, need(n) (n more than headLen: called again with more bytes),
   * STREAM, or NOT_A_FRAME.
   * `final`: no more bytes of this frame's prefix will come (the capture misses them); the sink
   * decodes what it can from the bytes given and the framer ignores the answer.
   */
  frameHead(buf: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean): HeadAnswer;
  /** After STREAM: the frame's next bytes, at buf[off, off + len), valid during the call only. */
  frameBytes?(buf: Buffer, off: number, len: number): void;
  /** After STREAM: bytes of the rest of the frame are missing from the capture (no more frameBytes). */
  frameHole?(): void;
  /** The frame's last byte arrived (or the frame was cut short by a gap or the end of the stream). */
  frameEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void;
  /**
   * Could a frame start at `buf[off]` (the int32 size)? `len` bytes are available (at most
   * SCAN_WINDOW). Returns PLAUSIBLE, IMPLAUSIBLE, or NEED_MORE when `len` is too short to judge.
   * `segmentStart`: a TCP segment began at this byte (a likely boundary, see kafka/resync.ts). Apart
   * from that the answer must depend only on the bytes.
   */
  plausibleStart(buf: Buffer, off: number, len: number, segmentStart: boolean): Plausibility;
  /** Bytes that could not be framed were skipped. */
  desync(skippedBytes: number, reason: string, frame: number): void;
}

export interface FramerOptions {
  maxFrameBytes: number;
  minFrameBytes: number;
  /** Bytes of the frame given to the first frameHead call (the sink may ask for more). */
  initialHead: number;
  /** Never buffer more prefix than this, whatever the sink asks. */
  maxPrefixBytes: number;
}

/** How many bytes a resync scan may look at to judge a candidate frame start. */
export const SCAN_WINDOW = 64;

/**
 * A sink's answer to a frame head (FrameSink.frameHead), in the manner of Go's bufio.SplitFunc or
 * Wireshark's tcp_dissect_pdus: {@link DONE} with the bytes given, {@link need}(n) for a longer prefix,
 * {@link STREAM} for the rest of the frame as it passes, or {@link NOT_A_FRAME}.
 */
export type HeadAnswer = number & { readonly headAnswer: unique symbol };
/** The sink has what it wants of this frame: the rest is skipped. */
export const DONE = 0 as HeadAnswer;
/** The bytes are not a frame: the stream is out of sync. */
export const NOT_A_FRAME = -1 as HeadAnswer;
/** The rest of the frame's bytes, as they pass, by frameBytes (nothing kept). */
export const STREAM = -2 as HeadAnswer;
/** The first `bytes` bytes of the frame, before the sink is asked again (capped by the frame's size and maxPrefixBytes). */
export function need(bytes: number): HeadAnswer {
  return bytes as HeadAnswer;
}

export const IMPLAUSIBLE = 0;
export const PLAUSIBLE = 1;
export const NEED_MORE = 2;
export type Plausibility = typeof IMPLAUSIBLE | typeof PLAUSIBLE | typeof NEED_MORE;


/** Why a head the sink rejects is skipped. */
const NOT_KAFKA = 'bytes that do not parse as a Kafka message';

const SIZE = 0;
const PREFIX = 1;
const SKIP = 2;
const RESYNC = 3;
type State = typeof SIZE | typeof PREFIX | typeof SKIP | typeof RESYNC;

export class Framer {
  private state: State = SIZE;
  /** The int32 size gathered so far, big-endian, when a segment boundary cuts it. */
  private sizeValue = 0;
  private sizeHave = 0;
  private frameSize = 0;
  /** Bytes of the current frame consumed so far (prefix + skipped). */
  private frameHave = 0;
  private prefix: Buffer | null = null;
  private prefixWant = 0;
  private prefixHave = 0;
  /** The sink asked for the rest of the current frame's bytes (STREAM). */
  private streaming = false;
  /** Resync: bytes not yet judged (at most WINDOW_CAPACITY). */
  private window: Buffer | null = null;
  private windowLen = 0;
  private skipped = 0;
  private resyncReason = '';
  private resyncFrame = 0;
  private lastFrame = 0;
  private readonly windowCapacity: number;
  private minFrameBytes: number;
  /** Offset in the buffer of the current data() call where its TCP segment begins; -1 for bytes kcid re-reads. */
  private segmentOff = -1;
  /** Resync: window positions where a TCP segment began, ascending. */
  private readonly segmentStarts: number[] = [];

  constructor(
    private readonly sink: FrameSink,
    private readonly opts: FramerOptions,
  ) {
    this.windowCapacity = Math.max(4 * SCAN_WINDOW, opts.initialHead + 8);
    this.minFrameBytes = opts.minFrameBytes;
  }

  /** True while the framer is between frames (no partial frame pending). */
  get idle(): boolean {
    return this.state === SIZE && this.sizeHave === 0;
  }

  get inSync(): boolean {
    return this.state !== RESYNC;
  }

  /** Bytes of the stream; the tcp stage hands each TCP segment (or what is new of it) in its own call. */
  data(buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    this.segmentOff = off;
    this.consume(buf, off, len, frame, tsSec, tsNsec);
  }

  private consume(buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    this.lastFrame = frame;
    const end = off + len;
    while (off < end) {
      switch (this.state) {
        case SIZE:
          if (this.sizeHave === 0 && end - off >= 4) {
            const size = buf.readInt32BE(off);
            off += 4;
            // The usual case: the whole frame is in this call. The sink reads it where it lies, in one look.
            if (size <= end - off && size > 0 && size >= this.minFrameBytes && size <= this.opts.maxPrefixBytes) off = this.wholeFrame(buf, off, size, frame, tsSec, tsNsec);
            else this.beginFrame(size, frame, tsSec, tsNsec);
          } else {
            // `<<` works on int32: after the fourth byte this is readInt32BE's value.
            this.sizeValue = (this.sizeValue << 8) | buf[off++]!;
            if (++this.sizeHave === 4) this.beginFrame(this.sizeValue, frame, tsSec, tsNsec);
          }
          break;
        case PREFIX: {
          const n = Math.min(this.prefixWant - this.prefixHave, end - off);
          copyBytes(buf, off, this.prefix!, this.prefixHave, n);
          this.prefixHave += n;
          this.frameHave += n;
          off += n;
          if (this.prefixHave === this.prefixWant) {
            this.askSink(frame);
            if ((this.state as State) === SKIP && this.frameHave === this.frameSize) this.finishFrame(frame, tsSec, tsNsec);
          }
          break;
        }
        case SKIP: {
          const n = Math.min(this.frameSize - this.frameHave, end - off);
          if (this.streaming) this.sink.frameBytes!(buf, off, n);
          this.frameHave += n;
          off += n;
          if (this.frameHave === this.frameSize) this.finishFrame(frame, tsSec, tsNsec);
          break;
        }
        case RESYNC:
          off = this.resync(buf, off, end, frame, tsSec, tsNsec);
          break;
      }
    }
  }

  /** `bytes` bytes of the stream are missing (never captured). */
  gap(bytes: number, frame: number): void {
    this.lastFrame = frame;
    if (this.state === PREFIX) {
      // The head asked for will not arrive whole: the sink reads what did. Then, as for a frame
      // being skipped, the hole costs no sync if it ends inside the frame.
      if (this.prefixHave > 0) this.sink.frameHead(this.prefix!, 0, this.prefixHave, this.frameSize, frame, true);
      this.state = SKIP;
    }
    if (this.streaming) {
      this.streaming = false;
      this.sink.frameHole!();
    }
    switch (this.state) {
      case SKIP:
        if (this.frameHave + bytes <= this.frameSize) {
          this.frameHave += bytes;
          // A frame whose last bytes are in the hole ends at the packet that showed it, incomplete.
          if (this.frameHave === this.frameSize) this.finishFrame(frame, 0, 0, false);
          return;
        }
        // The hole runs past this frame's end, over the next one's size.
        this.sink.frameEnd(frame, 0, 0, false);
        break;
      case RESYNC:
        // Bytes before the hole can no longer start a frame that continues after it.
        this.dropWindow(this.windowLen);
        return;
      case SIZE:
        break;
    }
    this.enterResync('bytes missing from the capture', frame);
  }

  /** End of the stream: a frame in progress is reported as incomplete, unframed bytes as a desync. */
  end(tsSec: number, tsNsec: number): void {
    // As at a gap: a head still growing (a PushTelemetry kept whole, a --bodies frame) is read as far as it came.
    if (this.state === PREFIX && this.prefixHave > 0) this.sink.frameHead(this.prefix!, 0, this.prefixHave, this.frameSize, this.lastFrame, true);
    if (this.state === SKIP || this.state === PREFIX) this.sink.frameEnd(this.lastFrame, tsSec, tsNsec, false);
    if (this.state === RESYNC) {
      this.dropWindow(this.windowLen);
      this.reportResync();
    }
    this.state = SIZE;
    this.sizeHave = 0;
    this.sizeValue = 0;
    if (this.prefix !== null) giveBuffer(this.prefix);
    this.prefix = null;
    this.window = null;
    this.streaming = false;
  }

  private beginFrame(size: number, frame: number, tsSec: number, tsNsec: number): void {
    this.sizeHave = 0;
    this.sizeValue = 0;
    if (size < this.minFrameBytes || size > this.opts.maxFrameBytes) {
      const reason =
        size > this.opts.maxFrameBytes
          ? `frame size ${size} exceeds the maximum of ${this.opts.maxFrameBytes} bytes`
          : `frame size ${size} is below the minimum of ${this.minFrameBytes} bytes`;
      this.refuse(reason, frame, size, null, 0);
      return;
    }
    this.frameSize = size;
    this.frameHave = 0;
    this.prefixHave = 0;
    this.prefixWant = Math.min(size, this.opts.initialHead);
    this.prefix = this.bufferFor(this.prefixWant);
    this.state = PREFIX;
    if (size === 0) {
      // An empty frame (a SASL token can be empty) is whole as soon as its size is.
      this.askSink(frame);
      if ((this.state as State) === SKIP) this.finishFrame(frame, tsSec, tsNsec);
    }
  }

  /**
   * A frame of `size` bytes whose every byte is in `buf` from `at`: given to the sink where it lies, with
   * nothing copied, not even a view (making a Buffer view costs more than decoding a small frame). The
   * sink copies what it keeps, as it must from the prefix buffer, which the next frame reuses. Returns
   * where the stream goes on: after the frame, or at its first byte when the sink refuses it, to be
   * scanned for the next frame start as the slow path would scan it.
   */
  private wholeFrame(buf: Buffer, at: number, size: number, frame: number, tsSec: number, tsNsec: number): number {
    if (this.sink.frameHead(buf, at, size, size, frame, false) < 0) {
      this.refuse(NOT_KAFKA, frame, size, null, 0);
      return at;
    }
    this.sink.frameEnd(frame, tsSec, tsNsec, true);
    return at + size;
  }

  /** The smallest size that is a frame; the conversation lowers it to 0 while SASL tokens flow. */
  set minimumFrameBytes(n: number) {
    this.minFrameBytes = n;
  }

  private askSink(frame: number): void {
    const want = this.sink.frameHead(this.prefix!, 0, this.prefixHave, this.frameSize, frame, false);
    if (want === STREAM && this.sink.frameBytes !== undefined) {
      this.streaming = this.prefixHave < this.frameSize;
      this.state = SKIP;
      return;
    }
    if (want < 0) {
      this.refuse(NOT_KAFKA, frame, this.frameSize, this.prefix, this.prefixHave);
      return;
    }
    const capped = Math.min(want, this.frameSize, this.opts.maxPrefixBytes);
    if (capped > this.prefixHave) {
      const grown = this.bufferFor(capped);
      if (grown !== this.prefix) {
        this.prefix!.copy(grown, 0, 0, this.prefixHave);
        giveBuffer(this.prefix!);
      }
      this.prefix = grown;
      this.prefixWant = capped;
      return; // stay in PREFIX
    }
    this.state = SKIP;
  }

  /** `complete` false: the frame's last bytes were in a hole (the time is then the sink's to know). */
  private finishFrame(frame: number, tsSec: number, tsNsec: number, complete = true): void {
    this.state = SIZE;
    this.sizeHave = 0;
    this.streaming = false;
    // Keep a small prefix buffer for the next frame; give a large one back, so idle connections stay small.
    if (this.prefix !== null && this.prefix.length > SMALL_PREFIX) {
      giveBuffer(this.prefix);
      this.prefix = null;
    }
    this.sink.frameEnd(frame, tsSec, tsNsec, complete);
  }

  private bufferFor(n: number): Buffer {
    if (this.prefix !== null && this.prefix.length >= n) return this.prefix;
    return takeBuffer(n);
  }

  // ---- resynchronisation -------------------------------------------------------------------

  /**
   * A frame start refused (its size out of bounds, or a head the sink rejects): the bytes consumed for
   * it, the size and `head[0, headLen)`, are scanned again for the next frame start, from the byte after
   * the refused one.
   */
  private refuse(reason: string, frame: number, size: number, head: Buffer | null, headLen: number): void {
    this.enterResync(reason, frame);
    this.replay(int32Bytes(size), 0, 4);
    if (head !== null) this.replay(head, 0, headLen);
    this.dropWindow(1); // a frame cannot start where one was just refused
  }

  private enterResync(reason: string, frame: number): void {
    this.state = RESYNC;
    if (this.resyncReason === '') {
      this.resyncReason = reason;
      this.resyncFrame = frame;
    }
    this.window ??= Buffer.allocUnsafe(this.windowCapacity);
    this.windowLen = 0;
    this.segmentStarts.length = 0;
  }

  /** Bytes already consumed that must be scanned again (a refused size and head), bounded by the window. */
  private replay(src: Buffer, from: number, to: number): void {
    const n = Math.min(to - from, this.windowCapacity - this.windowLen);
    src.copy(this.window!, this.windowLen, from, from + n);
    this.windowLen += n;
    this.skipped += to - from - n;
  }

  private dropWindow(n: number): void {
    this.skipped += n;
    this.window!.copyWithin(0, n, this.windowLen);
    this.windowLen -= n;
    const starts = this.segmentStarts;
    if (starts.length === 0) return;
    let kept = 0;
    for (const s of starts) if (s >= n) starts[kept++] = s - n;
    starts.length = kept;
  }

  /** Scan for the first position the sink calls a plausible frame start; returns how far `buf` was consumed. */
  private resync(buf: Buffer, off: number, end: number, frame: number, tsSec: number, tsNsec: number): number {
    while (true) {
      const n = Math.min(end - off, this.windowCapacity - this.windowLen);
      if (off === this.segmentOff && n > 0) this.segmentStarts.push(this.windowLen);
      buf.copy(this.window!, this.windowLen, off, off + n);
      this.windowLen += n;
      off += n;
      const starts = this.segmentStarts;
      let p = 0;
      let s = 0;
      for (; p < this.windowLen; p++) {
        const avail = Math.min(this.windowLen - p, SCAN_WINDOW);
        while (s < starts.length && starts[s]! < p) s++;
        const verdict = this.sink.plausibleStart(this.window!, p, avail, s < starts.length && starts[s] === p);
        if (verdict === PLAUSIBLE) {
          this.dropWindow(p);
          this.reportResync();
          const rest = Buffer.from(this.window!.subarray(0, this.windowLen));
          this.windowLen = 0;
          starts.length = 0;
          this.state = SIZE;
          this.sizeHave = 0;
          this.sizeValue = 0;
          // Bytes already seen: no segment starts among them if framing fails again.
          const segmentOff = this.segmentOff;
          this.segmentOff = -1;
          this.consume(rest, 0, rest.length, frame, tsSec, tsNsec);
          this.segmentOff = segmentOff;
          return off;
        }
        if (verdict === NEED_MORE && avail < SCAN_WINDOW) break;
      }
      this.dropWindow(p);
      if (off >= end) return end;
    }
  }

  private reportResync(): void {
    // A gap that ended exactly at a frame boundary costs nothing more than the gap itself.
    if (this.skipped > 0) this.sink.desync(this.skipped, this.resyncReason, this.resyncFrame);
    this.skipped = 0;
    this.resyncReason = '';
  }
}

/** A prefix buffer a connection keeps between frames; larger ones go back to the pool. */
const SMALL_PREFIX = 1024;
/** What the pool of large prefix buffers holds at most, in bytes and in buffers. */
const POOL_BYTES = 64 * 1024 * 1024;
const POOL_BUFFERS = 64;
const pool: Buffer[] = [];
let pooledBytes = 0;

/**
 * A buffer of at least `n` bytes for a frame's prefix. Large ones (`kcid requests --bodies` keeps whole
 * frames, up to --max-body-bytes) come from a pool that frames give back as they end, made in powers of
 * two so that they fit the next: one allocated per frame made V8 collect garbage for their memory
 * (produce-heavy 1 GiB with --bodies: 237 ms of 1.9 s in the collector). The pool is the isolate's,
 * bounded; a buffer's old bytes are never read (a sink sees only buf[0, headLen) of its own frame).
 */
function takeBuffer(n: number): Buffer {
  if (n <= SMALL_PREFIX) return Buffer.allocUnsafe(Math.max(n, 128));
  let best = -1;
  for (let i = 0; i < pool.length; i++) {
    if (pool[i]!.length >= n && (best < 0 || pool[i]!.length < pool[best]!.length)) best = i;
  }
  if (best < 0) return Buffer.allocUnsafe(2 ** Math.ceil(Math.log2(n)));
  const b = pool[best]!;
  pool[best] = pool[pool.length - 1]!;
  pool.pop();
  pooledBytes -= b.length;
  return b;
}

function giveBuffer(b: Buffer): void {
  if (b.length <= SMALL_PREFIX || pool.length >= POOL_BUFFERS || pooledBytes + b.length > POOL_BYTES) return;
  pool.push(b);
  pooledBytes += b.length;
}

/** Up to a request's first look (96 bytes), heads are copied by a loop (see copyBytes). */
const COPY_BY_LOOP_BYTES = 96;

/**
 * src[from, from + n) to dst[to..]. Buffer#copy makes a Uint8Array view of the source on every
 * call: up to COPY_BY_LOOP_BYTES a loop is as fast and leaves no garbage (measured: 59 ns against
 * 52 ns for 96 bytes, before the view's collection).
 */
function copyBytes(src: Buffer, from: number, dst: Buffer, to: number, n: number): void {
  if (n > COPY_BY_LOOP_BYTES) {
    src.copy(dst, to, from, from + n);
    return;
  }
  for (let i = 0; i < n; i++) dst[to + i] = src[from + i]!;
}

function int32Bytes(v: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeInt32BE(v, 0);
  return b;
}
