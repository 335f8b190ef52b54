/**
 * A schema-driven ENCODER for tests, written from Kafka's protocol guide (https://kafka.apache.org/protocol.html)
 * and the message README (KIP-482 for the compact and tagged forms), not from the interpreter: it shares
 * the schema model with kcid but none of its reading code. `randomMessage` writes random values of every
 * field a version has and returns the bytes with the value the interpreter must give back.
 */
import { inRange, layoutFor, type FieldSchema, type MessageSchema } from '../../src/kafka/schema/model.js';

/** A small deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Out {
  private bytes: number[] = [];
  get length(): number {
    return this.bytes.length;
  }
  u8(b: number): void {
    this.bytes.push(b & 0xff);
  }
  raw(b: Uint8Array | number[]): void {
    for (const x of b) this.bytes.push(x);
  }
  int(n: number, size: number): void {
    for (let i = size - 1; i >= 0; i--) this.u8(Math.floor(n / 2 ** (8 * i)) & 0xff);
  }
  int16(n: number): void {
    this.int(n < 0 ? n + 0x10000 : n, 2);
  }
  int32(n: number): void {
    this.int(n < 0 ? n + 0x100000000 : n, 4);
  }
  int64(n: bigint): void {
    const u = BigInt.asUintN(64, n);
    for (let i = 7n; i >= 0n; i--) this.u8(Number((u >> (8n * i)) & 0xffn));
  }
  uvarint(n: number): void {
    let v = n >>> 0;
    while (v >= 0x80) {
      this.u8((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    this.u8(v);
  }
  uvarlong(n: bigint): void {
    let v = n;
    while (v >= 0x80n) {
      this.u8(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.u8(Number(v));
  }
  float64(x: number): void {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, x);
    this.raw(b);
  }
  done(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

type R = () => number;
const pick = <T>(r: R, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: R, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

function randomString(r: R): string {
  const n = int(r, 0, 8);
  let s = '';
  for (let i = 0; i < n; i++) s += pick(r, ['a', 'Z', '0', '-', '.', '_', 'é', '→', '𝄞']);
  return s;
}

function randomBigint(r: R): bigint {
  return BigInt.asIntN(64, (BigInt(int(r, 0, 0xffffffff)) << 32n) | BigInt(int(r, 0, 0xffffffff)));
}

/** A valid magic-2 record batch header with no records after it (61 bytes). */
export function batchHeader(baseOffset: bigint, attributes: number, producerId: bigint, count: number): Uint8Array {
  const o = new Out();
  o.int64(baseOffset);
  o.int32(49);
  o.int32(7); // partitionLeaderEpoch
  o.u8(2); // magic
  o.int32(0x01020304); // crc (not checked)
  o.int16(attributes);
  o.int32(count - 1);
  o.int64(1700000000000n);
  o.int64(1700000000999n);
  o.int64(producerId);
  o.int16(3);
  o.int32(42);
  o.int32(count);
  return o.done();
}

interface Ctx {
  version: number;
  flexible: boolean;
  r: R;
  depth: number;
  /** Hostile values too (see {@link RandomOptions}). */
  wild?: boolean;
}

/**
 * Pieces of a wild string's bytes: plain ASCII, JSON's escapes, C0, DEL, C1, the format characters a
 * terminal would act on, a BOM, 2-, 3- and 4-byte UTF-8, and malformed UTF-8 (a lone continuation
 * byte, overlong and surrogate forms, truncated sequences, bytes that never start one).
 */
const WILD_PIECES: readonly number[][] = [
  [0x61], [0x20], [0x7e], [0x22], [0x5c], [0x2f], [0x00], [0x08], [0x09], [0x0a], [0x0c], [0x0d], [0x1b], [0x1f], [0x7f],
  [0xc2, 0x80], [0xc2, 0x9b], [0xc2, 0x9f], [0xc2, 0xa0], [0xc3, 0xa9], [0xd8, 0x9c], [0xe2, 0x80, 0x8b], [0xe2, 0x80, 0xa8], [0xe2, 0x80, 0xae],
  [0xe2, 0x81, 0xa0], [0xe2, 0x81, 0xa9], [0xef, 0xbb, 0xbf], [0xef, 0xbf, 0xbd], [0xe2, 0x86, 0x92], [0xf0, 0x9d, 0x84, 0x9e], [0xf4, 0x8f, 0xbf, 0xbf],
  [0x80], [0xbf], [0xc0, 0xaf], [0xc1], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xe2, 0x82], [0xf0, 0x9d, 0x84], [0xf0, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80], [0xf5], [0xf8], [0xfe], [0xff], [0xe0, 0xa0], [0xc2],
];

const WILD_FLOATS: readonly number[] = [NaN, Infinity, -Infinity, -0, 0, 1e21, 1e-7, 5e-324, -1.7976931348623157e308, 0.1, 123456789.125, -2.5];
const WILD_INT64: readonly bigint[] = [0n, -1n, 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n), -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 32n, -(2n ** 32n), 4294967295n, 1700000000000n];
const WILD_INT32: readonly number[] = [0, -1, 1, 9, 10, 99, 100, 2147483647, -2147483648, 1000000000, -1000000000];

function wildBytes(r: R): Uint8Array {
  const n = int(r, 0, 12);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(...pick(r, WILD_PIECES));
  return Uint8Array.from(out);
}

function randomInt64(c: Ctx): bigint {
  return c.wild && c.r() < 0.5 ? pick(c.r, WILD_INT64) : randomBigint(c.r);
}

function writeLength(o: Out, compact: boolean, n: number, wide: boolean): void {
  if (compact) o.uvarint(n + 1);
  else if (wide) o.int32(n);
  else o.int16(n);
}

function writePrimitive(o: Out, f: FieldSchema, c: Ctx, compact: boolean, nullable: boolean): unknown {
  const r = c.r;
  switch (f.primitive!) {
    case 'bool': {
      const b = r() < 0.5;
      o.u8(b ? 1 : 0);
      return b;
    }
    case 'int8': {
      const n = int(r, -128, 127);
      o.u8(n);
      return n;
    }
    case 'int16': {
      const n = int(r, -32768, 32767);
      o.int16(n);
      return n;
    }
    case 'uint16': {
      const n = int(r, 0, 65535);
      o.int(n, 2);
      return n;
    }
    case 'int32': {
      const n = c.wild && r() < 0.5 ? pick(r, WILD_INT32) : int(r, -2147483648, 2147483647);
      o.int32(n);
      return n;
    }
    case 'uint32': {
      const n = int(r, 0, 0xffffffff);
      o.int(n, 4);
      return n;
    }
    case 'int64': {
      const n = randomInt64(c);
      o.int64(n);
      return n;
    }
    case 'varint': {
      const n = c.wild && r() < 0.5 ? pick(r, WILD_INT32) : int(r, -2147483648, 2147483647);
      o.uvarint(((n << 1) ^ (n >> 31)) >>> 0);
      return n;
    }
    case 'varlong': {
      const n = randomInt64(c);
      o.uvarlong(BigInt.asUintN(64, (n << 1n) ^ (n >> 63n)));
      return n;
    }
    case 'float64': {
      const x = c.wild && r() < 0.6 ? pick(r, WILD_FLOATS) : (r() - 0.5) * 1e6;
      o.float64(x);
      return x;
    }
    case 'uuid': {
      const u = c.wild && r() < 0.3 ? new Uint8Array(16) : new Uint8Array(16).map(() => int(r, 0, 255));
      o.raw(u);
      return u;
    }
    case 'string': {
      if (nullable && r() < 0.2) {
        writeLength(o, compact, -1, false);
        return null;
      }
      const plain = c.wild ? null : randomString(r);
      const b = plain === null ? wildBytes(r) : new TextEncoder().encode(plain);
      const s = plain ?? new TextDecoder('utf-8', { ignoreBOM: true }).decode(b);
      writeLength(o, compact, b.length, false);
      o.raw(b);
      return s;
    }
    case 'bytes':
    case 'records': {
      if (nullable && r() < 0.2) {
        writeLength(o, compact, -1, true);
        return null;
      }
      const b =
        f.primitive === 'records' && r() < 0.5 ? batchHeader(BigInt(int(r, 0, 1000)), int(r, 0, 0x3f), BigInt(int(r, -1, 99)), int(r, 1, 5)) : new Uint8Array(int(r, 0, 9)).map(() => int(r, 0, 255));
      writeLength(o, compact, b.length, true);
      o.raw(b);
      return { size: b.length };
    }
  }
}

function writeField(o: Out, f: FieldSchema, c: Ctx): unknown {
  const compact = f.flexibleVersions === undefined ? c.flexible : inRange(f.flexibleVersions, c.version);
  const nullable = inRange(f.nullableVersions, c.version);
  if (f.isArray) {
    if (nullable && c.r() < 0.2) {
      writeLength(o, compact, -1, true);
      return null;
    }
    const n = c.depth > 4 ? 0 : int(c.r, 0, 3);
    writeLength(o, compact, n, true);
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(f.struct ? writeStruct(o, f.struct.fields, { ...c, depth: c.depth + 1 }) : writePrimitive(o, f, c, compact, false));
    return out;
  }
  if (f.struct) {
    if (nullable) {
      if (c.r() < 0.2) {
        o.u8(0xff);
        return null;
      }
      o.u8(1);
    }
    return writeStruct(o, f.struct.fields, { ...c, depth: c.depth + 1 });
  }
  return writePrimitive(o, f, c, compact, nullable);
}

export type Expected = { [k: string]: unknown };

export function writeStruct(o: Out, fields: readonly FieldSchema[], c: Ctx): Expected {
  const value = Object.create(null) as Expected;
  const tagged: [number, Uint8Array][] = [];
  for (const f of fields) {
    if (!inRange(f.versions, c.version)) continue;
    if (c.flexible && f.tag !== null && inRange(f.taggedVersions, c.version)) {
      if (c.r() < 0.5) continue;
      const t = new Out();
      value[f.name] = writeField(t, f, c);
      tagged.push([f.tag, t.done()]);
      continue;
    }
    value[f.name] = writeField(o, f, c);
  }
  if (c.flexible) {
    const unknown: { tag: number; size: number }[] = [];
    if (c.r() < 0.3) {
      const size = int(c.r, 0, 5);
      tagged.push([10000 + int(c.r, 0, 99), new Uint8Array(size)]);
    }
    tagged.sort((a, b) => a[0] - b[0]);
    o.uvarint(tagged.length);
    for (const [tag, b] of tagged) {
      o.uvarint(tag);
      o.uvarint(b.length);
      o.raw(b);
      if (tag >= 10000) unknown.push({ tag, size: b.length });
    }
    if (unknown.length) value._unknownTaggedFields = unknown;
  }
  return value;
}

export interface RandomOptions {
  /**
   * Hostile values too: strings of C0 and C1 controls, quotes, backslashes, format characters, BOMs and
   * malformed UTF-8 (the value holds them as the WHATWG decoder reads them); NaN, infinite and
   * negative-zero floats; int64 and varlong at and beyond 2^53 and at their limits; all-zero UUIDs.
   */
  readonly wild?: boolean;
}

/** Random bytes of `message` at `version`, and the value they hold. */
export function randomMessage(message: MessageSchema, version: number, seed: number, options: RandomOptions = {}): { bytes: Uint8Array; value: Expected } {
  const layout = layoutFor(message, version);
  if (!layout) throw new Error(`${message.name} has no v${version}`);
  const o = new Out();
  const value = writeStruct(o, layout.fields, { version, flexible: inRange(layout.flexibleVersions, version), r: rng(seed), depth: 0, wild: options.wild === true });
  return { bytes: o.done(), value };
}
