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
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }
}
