/** Why a blob could not be decompressed: 'too-large' past the limit, 'invalid' bytes the codec refuses, 'unknown-codec'. */
export class PayloadError extends Error {
  override readonly name = 'PayloadError';
  constructor(
    readonly kind: 'too-large' | 'invalid' | 'unknown-codec',
    message: string,
  ) {
    super(message);
  }
}

export const tooLarge = (what: string, limit: number) => new PayloadError('too-large', `${what} exceeds --max-telemetry-bytes (${limit} bytes)`);

/**
 * A decoder's output, grown by doubling with what was produced (never from a size the input
 * declares), up to `limit`: past it, 'too-large'.
 */
export class Output {
  buf: Uint8Array;
  n = 0;
  /** `initial`: the first buffer's size (at most 64 KiB and the limit). */
  constructor(
    readonly limit: number,
    readonly what: string,
    initial = 64 * 1024,
  ) {
    this.buf = new Uint8Array(Math.min(limit, initial, 64 * 1024));
  }
  /** Makes room for `k` more bytes; throws once the output would pass the limit. */
  room(k: number): void {
    const need = this.n + k;
    if (need > this.limit) throw tooLarge(this.what, this.limit);
    if (need <= this.buf.length) return;
    let size = Math.max(this.buf.length * 2, 1024);
    while (size < need) size *= 2;
    const next = new Uint8Array(Math.min(size, this.limit));
    next.set(this.buf.subarray(0, this.n));
    this.buf = next;
  }
  /**
   * LZ77's match, as lz4, snappy and zstd write it: `len` bytes copied from `offset` back, where the
   * copy may overlap what it writes (an offset shorter than the length repeats). The caller has
   * checked the offset against what was produced, and made room.
   */
  match(offset: number, len: number): void {
    const buf = this.buf;
    let to = this.n;
    let from = to - offset;
    if (offset >= len) buf.copyWithin(to, from, from + len);
    else for (const stop = to + len; to < stop; ) buf[to++] = buf[from++]!;
    this.n += len;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }
}

/**
 * A skippable frame at `at` (magic 0x184D2A50-5F, then its length: RFC 8878 3.1.2, and LZ4's frame
 * format likewise): the offset past it, or -1 when `at` starts none.
 */
export function pastSkippable(view: DataView, at: number, bad: (why: string) => Error): number {
  if ((view.getUint32(at, true) & 0xfffffff0) !== 0x184d2a50) return -1;
  if (at + 8 > view.byteLength) throw bad(`skippable frame cut at byte ${at}`);
  const next = at + 8 + view.getUint32(at + 4, true);
  if (next > view.byteLength) throw bad('skippable frame passes the end of the data');
  return next;
}
