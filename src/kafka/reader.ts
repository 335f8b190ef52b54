/**
 * Bounded reader for the Kafka protocol's primitive types
 * (https://kafka.apache.org/protocol.html#protocol_types, KIP-482 for the compact/tagged forms).
 *
 * Every read is checked against `end`: a length read from the input never makes the reader look past
 * it, and nothing is allocated in proportion to a length before the bytes are known to be there.
 * The only exception it throws is {@link DecodeError}. Byte results are zero-copy subarrays of the
 * input: copy them if they must outlive the input buffer.
 */

/** Any failure to decode input bytes. `offset` is the index in the input buffer where reading failed. */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  readonly offset: number;

  constructor(message: string, offset: number) {
    super(message);
    this.offset = offset;
  }
}

/**
 * Kafka decodes strings with Java's `new String(bytes, UTF_8)`: malformed sequences become U+FFFD and a
 * leading byte-order mark is kept as U+FEFF, hence `ignoreBOM: true` (the default would silently drop it).
 */
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/**
 * Kafka's generated readers reject strings longer than a signed 16-bit length can express, including
 * compact strings whose varint length could say more ("string field X had invalid length").
 */
export const MAX_STRING_LENGTH = 0x7fff;

export class Reader {
  buf: Uint8Array;
  pos: number;
  end: number;
  /** Where offset 0 of error messages is in `buf` (a frame read where it lies in a larger buffer). */
  origin = 0;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = 0;
    this.end = 0;
    this.reset(buf, start, end);
  }

  /** Reuse this reader for another range (saves an allocation on hot paths); `origin` as the field says. */
  reset(buf: Uint8Array, start = 0, end = buf.length, origin = 0): this {
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= buf.length)) {
      throw new DecodeError(`bad reader range [${start}, ${end}) for ${buf.length} bytes`, start);
    }
    this.buf = buf;
    this.pos = start;
    this.end = end;
    this.origin = origin;
    return this;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  /** Throws DecodeError unless `n` more bytes are there. */
  need(n: number): void {
    if (n > this.end - this.pos) {
      throw new DecodeError(`truncated: need ${n} bytes at offset ${this.pos - this.origin}, have ${this.end - this.pos}`, this.pos);
    }
  }

  int8(): number {
    this.need(1);
    return (this.buf[this.pos++]! << 24) >> 24;
  }

  uint8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  /** Kafka reads a boolean as "byte != 0". */
  bool(): boolean {
    return this.uint8() !== 0;
  }

  int16(): number {
    this.need(2);
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 2;
    return ((b[p]! << 24) | (b[p + 1]! << 16)) >> 16;
  }

  uint16(): number {
    return this.int16() & 0xffff;
  }

  int32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;
  }

  uint32(): number {
    return this.int32() >>> 0;
  }

  int64(): bigint {
    this.need(8);
    const hi = this.int32();
    const lo = this.uint32();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** 16 bytes, big-endian most significant half first (Kafka's Uuid). */
  uuid(): Uint8Array {
    return this.bytes(16);
  }

  /**
   * Unsigned LEB128 varint of at most 5 bytes (Kafka ByteUtils.readUnsignedVarint). As in Kafka, bits of the
   * fifth byte beyond 32 are dropped; a sixth byte is an error. Returns 0 .. 2^32-1.
   */
  uvarint(): number {
    const b = this.buf;
    let value = 0;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= this.end) {
        throw new DecodeError(`truncated: varint at offset ${this.pos - this.origin} runs past the end`, this.pos);
      }
      const byte = b[this.pos++]!;
      value |= (byte & 0x7f) << (7 * i);
      if ((byte & 0x80) === 0) return value >>> 0;
    }
    throw new DecodeError('varint too long', this.pos - 5);
  }

  /** Zigzag-encoded signed varint (Kafka ByteUtils.readVarint). */
  varint(): number {
    const v = this.uvarint();
    return (v >>> 1) ^ -(v & 1);
  }

  skip(n: number): void {
    if (n < 0) throw new DecodeError(`negative skip ${n}`, this.pos);
    this.need(n);
    this.pos += n;
  }

  /** The next `n` bytes as a subarray (no copy); the reader moves past them. */
  bytes(n: number): Uint8Array {
    if (n < 0) throw new DecodeError(`negative length ${n}`, this.pos);
    this.need(n);
    const p = this.pos;
    this.pos = p + n;
    return this.buf.subarray(p, p + n);
  }

  /** A reader over the next `len` bytes only; this reader moves past them. */
  child(len: number): Reader {
    if (len < 0) throw new DecodeError(`negative length ${len}`, this.pos);
    this.need(len);
    const r = new Reader(this.buf, this.pos, this.pos + len);
    this.pos += len;
    return r;
  }

  /** The last string read was all ASCII (so certainly valid UTF-8). */
  lastTextAscii = true;

  private text(len: number): string {
    if (len > MAX_STRING_LENGTH) {
      throw new DecodeError(`string length ${len} exceeds ${MAX_STRING_LENGTH}`, this.pos);
    }
    this.need(len);
    const b = this.buf;
    const from = this.pos;
    const to = from + len;
    this.pos = to;
    // ClientIds, group IDs and software names are nearly always ASCII: read as Latin-1 (the same
    // characters) without TextDecoder's overhead or a subarray.
    let i = from;
    while (i < to && b[i]! < 0x80) i++;
    this.lastTextAscii = i === to;
    return i === to ? latin1(b, from, to) : utf8.decode(b.subarray(from, to));
  }

  /** STRING / NULLABLE_STRING: int16 length. Kafka reads any negative length as null. */
  string(): string | null {
    const len = this.int16();
    return len < 0 ? null : this.text(len);
  }

  /** COMPACT_STRING / COMPACT_NULLABLE_STRING: uvarint of length + 1, 0 for null. */
  compactString(): string | null {
    const n = this.uvarint();
    return n === 0 ? null : this.text(n - 1);
  }

  /** BYTES / NULLABLE_BYTES: int32 length, negative for null. */
  bytesField(): Uint8Array | null {
    const len = this.int32();
    return len < 0 ? null : this.bytes(len);
  }

  /** Only the length prefix of COMPACT_BYTES (null for null), for callers that may not have the bytes. */
  compactBytesLength(): number | null {
    const n = this.uvarint();
    return n === 0 ? null : n - 1;
  }

  /** COMPACT_BYTES / COMPACT_NULLABLE_BYTES: uvarint of length + 1, 0 for null. */
  compactBytes(): Uint8Array | null {
    const len = this.compactBytesLength();
    return len === null ? null : this.bytes(len);
  }

  /** ARRAY: int32 element count, negative for null. */
  array<T>(minElementSize: number, readElement: (r: Reader) => T): T[] | null {
    const count = this.int32();
    return count < 0 ? null : this.elements(count, minElementSize, readElement);
  }

  /** COMPACT_ARRAY: uvarint of count + 1, 0 for null. */
  compactArray<T>(minElementSize: number, readElement: (r: Reader) => T): T[] | null {
    const n = this.uvarint();
    return n === 0 ? null : this.elements(n - 1, minElementSize, readElement);
  }

  /**
   * Reads `count` elements of at least `minElementSize` (>= 1) bytes each. The count is checked against the
   * remaining bytes first, as Kafka's generated readers do, so a lying count fails before anything is allocated.
   */
  private elements<T>(count: number, minElementSize: number, readElement: (r: Reader) => T): T[] {
    const min = Math.max(1, minElementSize);
    if (count * min > this.end - this.pos) {
      throw new DecodeError(
        `truncated: array of ${count} elements needs at least ${count * min} bytes at offset ${this.pos - this.origin}, have ${this.end - this.pos}`,
        this.pos,
      );
    }
    const out: T[] = [];
    for (let i = 0; i < count; i++) out.push(readElement(this));
    return out;
  }

  /**
   * TAGGED_FIELDS (KIP-482): uvarint count, then per field uvarint tag, uvarint size and `size` bytes.
   * `visit` gets each field's tag, size and the offset of its value in `buf`; the reader then moves past the
   * value whatever `visit` did. Each field takes at least two bytes, so a huge count cannot loop for long.
   * Returns the number of fields.
   */
  taggedFields(visit?: (tag: number, size: number, valueOffset: number) => void): number {
    const count = this.uvarint();
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      const size = this.uvarint();
      this.need(size);
      const at = this.pos;
      visit?.(tag, size, at);
      this.pos = at + size;
    }
    return count;
  }
}

/** Latin-1 text of b[from, to): Buffer's native slice, which takes any Uint8Array. */
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice?: (this: Uint8Array, from: number, to: number) => string }).latin1Slice;
function latin1(b: Uint8Array, from: number, to: number): string {
  return latin1Slice !== undefined ? latin1Slice.call(b, from, to) : Buffer.from(b.buffer, b.byteOffset + from, to - from).toString('latin1');
}
