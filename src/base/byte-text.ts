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
    this.buf.set(src.subarray(from, to), this.pos);
    this.pos += n;
  }

  /** An integer as JSON (and String) writes it; any other number as String writes it. */
  int(n: number): void {
    if (!Number.isSafeInteger(n)) return this.ascii(String(n));
    if (this.pos + 17 > this.buf.length) this.room(17);
    const buf = this.buf;
    let at = this.pos;
    if (n < 0) {
      buf[at++] = 0x2d;
      n = -n;
    }
    if (n < 10) {
      buf[at++] = 0x30 + n;
      this.pos = at;
      return;
    }
    let digits = 1;
    for (let t = n; t >= 10; t = Math.floor(t / 10)) digits++;
    let end = at + digits;
    this.pos = end;
    while (end > at) {
      const q = Math.floor(n / 10);
      buf[--end] = 0x30 + (n - q * 10);
      n = q;
    }
  }

  /** The bytes written from `from`, as a copy of their own (the buffer is reused). */
  copy(from = 0): Uint8Array {
    const c = new Uint8Array(this.pos - from);
    c.set(this.buf.subarray(from, this.pos));
    return c;
  }
}
