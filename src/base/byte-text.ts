/** Below this many bytes a copy in a JavaScript loop beats TypedArray#set's call. */
const LOOP_MAX = 20;

/**
 * Text written straight into bytes: a growable UTF-8 buffer that writers append to, for output that
 * is made in bulk (`kcid requests --bodies` writes about 2 bytes of JSON per byte of capture). A
 * string per piece, joined and then encoded, costs an allocation per piece, a rope to flatten and a
 * pass to encode; here each piece is stored once, where it will be written from.
 *
 * The writer owns `pos`; a caller that wants to undo a piece saves `pos` and puts it back.
 */
export class ByteText {
  buf: Buffer;
  /** Bytes written so far: buf[0, pos). */
  pos = 0;

  constructor(size = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Makes room for `n` more bytes (the buffer at least doubles, so appending stays linear). */
  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  /** One byte (an ASCII character code). */
  byte(c: number): void {
    if (this.pos === this.buf.length) this.room(1);
    this.buf[this.pos++] = c;
  }

  /**
   * Bytes made once ({@link latin1Bytes}): keys and literals. A short one is copied in a loop; from
   * LOOP_MAX bytes the native copy is faster (2 cores here: 24 ns against 40 ns at 24 bytes, 50 ns
   * against 170 ns at 80).
   */
  lit(b: Uint8Array): void {
    const n = b.length;
    if (this.pos + n > this.buf.length) this.room(n);
    const buf = this.buf;
    const at = this.pos;
    if (n < LOOP_MAX) for (let i = 0; i < n; i++) buf[at + i] = b[i]!;
    else buf.set(b, at);
    this.pos = at + n;
  }

  /** A string of ASCII characters only (keys, numbers, literals the program wrote). */
  ascii(s: string): void {
    const n = s.length;
    if (this.pos + n > this.buf.length) this.room(n);
    const buf = this.buf;
    let at = this.pos;
    for (let i = 0; i < n; i++) buf[at++] = s.charCodeAt(i);
    this.pos = at;
  }

  /** Any string, as UTF-8 (lone surrogates as U+FFFD, as Buffer.from does). */
  utf8(s: string): void {
    const n = s.length;
    // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
    if (this.pos + n * 3 > this.buf.length) this.room(n * 3);
    // Past a few dozen characters the native encoder is faster than a loop.
    if (n > 48) {
      this.pos += this.buf.write(s, this.pos, 'utf8');
      return;
    }
    const buf = this.buf;
    let at = this.pos;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[at++] = c;
    }
    if (i < n) at += buf.write(s.slice(i), at, 'utf8');
    this.pos = at;
  }

  /** Bytes copied from src[from, to). */
  bytes(src: Uint8Array, from = 0, to = src.length): void {
    const n = to - from;
    if (this.pos + n > this.buf.length) this.room(n);
    if (n < 32) {
      const buf = this.buf;
      let at = this.pos;
      for (let i = from; i < to; i++) buf[at++] = src[i]!;
      this.pos = at;
      return;
    }
    this.buf.set(from === 0 && to === src.length ? src : src.subarray(from, to), this.pos);
    this.pos += n;
  }

  /** An integer as JSON (and String) writes it; any other number as String writes it. */
  int(n: number): void {
    if (!Number.isSafeInteger(n)) return this.ascii(String(n));
    // A sign and at most 16 digits (2^53 - 1 is 9007199254740991).
    if (this.pos + 17 > this.buf.length) this.room(17);
    this.pos = writeIntAt(this.buf, this.pos, n);
  }
}

/**
 * An integer (|n| < 2^53) as String writes it, at o[q] (the caller made room); returns the position
 * after it. ByteText.int and the wire-to-JSON writers (kafka/schema/wire-json.ts) write with it.
 */
export function writeIntAt(o: Uint8Array, q: number, n: number): number {
  if (n < 0) {
    o[q++] = 0x2d;
    n = -n;
  }
  if (n < 10) {
    o[q] = 0x30 + n;
    return q + 1;
  }
  if (n < 100) {
    const t = (n / 10) | 0;
    o[q] = 0x30 + t;
    o[q + 1] = 0x30 + (n - t * 10);
    return q + 2;
  }
  let digits = 3;
  for (let t = 1000; t <= n && digits < 16; t *= 10) digits++;
  if (digits === 16 && n >= 1e16) digits = 17;
  let end = q + digits;
  const after = end;
  if (n < 0x80000000) {
    while (end > q) {
      const t = (n / 10) | 0;
      o[--end] = 0x30 + (n - t * 10);
      n = t;
    }
  } else {
    while (end > q) {
      const t = Math.floor(n / 10);
      o[--end] = 0x30 + (n - t * 10);
      n = t;
    }
  }
  return after;
}

/**
 * Byte pieces kept for a while (a row's bodies, until the row is written), in shared slabs and
 * handed out as views of them: a typed array of its own per piece is an allocation outside the
 * heap, which cost more than the copy (1 µs a piece). A slab lives while a view of it does; pieces
 * are kept in the order they come and let go in about that order, so the slabs alive are those
 * written since the oldest piece still held.
 *
 * A piece is either copied in ({@link keep}) or written straight into the slab ({@link begin} lends
 * a ByteText the slab, {@link end} keeps what was written), which saves the copy.
 */
export class ByteArena {
  private slab: Buffer;
  private pos = 0;

  constructor(private readonly slabSize = 1024 * 1024) {
    this.slab = Buffer.allocUnsafeSlow(slabSize);
  }

  /** A copy of src[from, to) that stays as it is. */
  keep(src: Uint8Array, from: number, to: number): Uint8Array {
    const n = to - from;
    if (n > this.slab.length - this.pos) {
      // A large piece gets a buffer of its own, rather than most of a slab.
      if (n > this.slabSize >>> 3) {
        const own = new Uint8Array(n);
        own.set(src.subarray(from, to));
        return own;
      }
      this.fresh();
    }
    const slab = this.slab;
    const at = this.pos;
    if (n < 64) for (let i = 0; i < n; i++) slab[at + i] = src[from + i]!;
    else slab.set(src.subarray(from, to), at);
    this.pos = at + n;
    return new Uint8Array(slab.buffer, slab.byteOffset + at, n);
  }

  /**
   * Lends `out` the slab to write the next piece into, from the arena's position; {@link end} keeps
   * it. Nothing else may be kept in between. A slab with less than a sixteenth of it left is
   * replaced first, so that a piece seldom outgrows the room.
   */
  begin(out: ByteText): void {
    if (this.slab.length - this.pos < this.slabSize >>> 4) this.fresh();
    out.buf = this.slab;
    out.pos = this.pos;
  }

  /**
   * The piece written into `out` since {@link begin}. One that outgrew the slab was moved by `out`
   * into a larger buffer, with the slab's earlier pieces: it is copied out into a buffer of its
   * own (the earlier pieces' copies are not kept), and the next piece starts a fresh slab.
   */
  end(out: ByteText): Uint8Array {
    const from = this.pos;
    const n = out.pos - from;
    if (out.buf === this.slab) {
      this.pos = out.pos;
      return new Uint8Array(this.slab.buffer, this.slab.byteOffset + from, n);
    }
    const own = new Uint8Array(n);
    own.set(out.buf.subarray(from, out.pos));
    this.fresh();
    return own;
  }

  private fresh(): void {
    this.slab = Buffer.allocUnsafeSlow(this.slabSize);
    this.pos = 0;
  }
}

/** A literal's bytes, for {@link ByteText.lit} (its characters below U+0100, one byte each). */
export function latin1Bytes(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}
