/**
 * A body's JSON written straight from the wire: the bytes `toKafkaJson` (json.ts) would give for the
 * Struct the interpreter (interpreter.ts) decodes, UTF-8 encoded, but with no Struct, no string per
 * value and no encoding pass: each field is read from the frame and its text stored into a
 * {@link ByteText} as it is read.
 *
 * Compiled per message, version and replacement map (cached), as the interpreter and json.ts are: one
 * function of straight-line code per message version (a nested struct inline, or in a function of its
 * own when its code is large), the keys as byte stores of their pre-encoded text, one room check per
 * run of fixed-size output, one bounds check per run of fixed-size fields.
 *
 * Exactly as strict as the interpreter (the same checks: fixed sizes and lengths within the frame,
 * negative lengths, nullability, string lengths above 32767, array and tag counts larger than the bytes
 * left, varints longer than 5 bytes and varlongs longer than 10, tags in increasing order, a known tag's
 * value that must take exactly its size; trailing bytes after the body allowed). Any of them failing
 * makes the writer return false with `out.pos` where it was: the caller then takes the interpreter's
 * way, which names the problem. A body is always whole here (`end` is the frame's end).
 *
 * Field order is schema order. Where a struct's tagged fields come before untagged ones in schema
 * order (FetchRequest's ClusterId, FetchResponse's DivergingEpoch, CurrentLeader and SnapshotId,
 * CreateTopicsResponse's TopicConfigErrorCode, ...), the untagged fields are first skipped to find the
 * tagged fields, whose places are kept, and then written in schema order: two passes over that struct.
 */
import { writeIntAt, type ByteText } from '../../base/byte-text.js';
import { jsonString } from '../../base/json-text.js';
import { FIXED_SIZE, inRange, layoutFor, type FieldSchema, type MessageSchema } from './model.js';

/** Writes the JSON of the body in buf[start, end) (a WHOLE body: end is the frame's end) into out. */
export type WireJsonWriter = (buf: Uint8Array, start: number, end: number, out: ByteText) => boolean;

// ---------------------------------------------------------------------------------------------------
// What the generated code calls

/** Thrown by generated code for a body the interpreter refuses; caught by the writer's entry. */
const FAIL: object = Object.freeze({ wireJson: 'malformed' });
function fail(): never {
  throw FAIL;
}

/** The position after a varint read by {@link uvarint} (a second result without an object per call). */
const R = { p: 0 };

/** An unsigned varint of at most 5 bytes at b[p], as interpreter.ts reads it (the rest of it, for the generated code's 1-byte fast path). */
function uvarint(b: Uint8Array, p: number, L: number): number {
  let v = 0;
  for (let shift = 0; shift <= 28; shift += 7) {
    if (p >= L) fail();
    const c = b[p++]!;
    v |= (c & 0x7f) << shift;
    if ((c & 0x80) === 0) {
      R.p = p;
      return v >>> 0;
    }
  }
  return fail();
}

/** ASCII text (a number as String writes it) at o[q]; the caller made room. */
function writeAscii(o: Uint8Array, q: number, s: string): number {
  for (let i = 0; i < s.length; i++) o[q++] = s.charCodeAt(i);
  return q;
}

/** An int64 at b[at]: exact, through a double when it fits in 53 bits, else through a bigint (at most 20 bytes). */
function writeInt64(o: Uint8Array, q: number, b: Uint8Array, at: number): number {
  const hi = (b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!;
  const lo = ((b[at + 4]! << 24) | (b[at + 5]! << 16) | (b[at + 6]! << 8) | b[at + 7]!) >>> 0;
  if (hi >= -0x200000 && hi < 0x200000) return writeIntAt(o, q, hi * 4294967296 + lo);
  return writeAscii(o, q, (BigInt(hi) * 4294967296n + BigInt(lo)).toString());
}

/** A zigzag varlong at b[p] as interpreter.ts reads it (at most 10 bytes); R.p is set to the position after it. */
function writeVarlong(o: Uint8Array, q: number, b: Uint8Array, p: number, L: number): number {
  let len = 0;
  for (;;) {
    if (p + len >= L) fail();
    if ((b[p + len++]! & 0x80) === 0) break;
    if (len === 10) fail();
  }
  R.p = p + len;
  if (len <= 7) {
    // Below 2^49: exact as a double.
    let z = 0;
    for (let i = len - 1; i >= 0; i--) z = z * 128 + (b[p + i]! & 0x7f);
    return writeIntAt(o, q, z % 2 === 0 ? z / 2 : -(z + 1) / 2);
  }
  let z = 0n;
  let shift = 0n;
  for (let i = 0; i < len; i++, shift += 7n) z |= BigInt(b[p + i]! & 0x7f) << shift;
  return writeAscii(o, q, BigInt.asIntN(64, (z >> 1n) ^ -(z & 1n)).toString());
}

const f64 = new DataView(new ArrayBuffer(8));
/** A float64 at b[at] as json.ts writes it: String(x), NaN and the infinities as strings (at most 32 bytes). */
function writeFloat64(o: Uint8Array, q: number, b: Uint8Array, at: number): number {
  for (let i = 0; i < 8; i++) f64.setUint8(i, b[at + i]!);
  const x = f64.getFloat64(0);
  return writeAscii(o, q, Number.isFinite(x) ? String(x) : `"${String(x)}"`);
}

const URL_SAFE = Uint8Array.from(Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1'));
/** A UUID at b[at] as Kafka prints it (uuid.ts): 22 characters of unpadded URL-safe base64, quoted (24 bytes). */
function writeUuid(o: Uint8Array, q: number, b: Uint8Array, at: number): number {
  o[q++] = 0x22;
  for (let i = at; i < at + 15; i += 3) {
    const n = (b[i]! << 16) | (b[i + 1]! << 8) | b[i + 2]!;
    o[q] = URL_SAFE[n >>> 18]!;
    o[q + 1] = URL_SAFE[(n >>> 12) & 63]!;
    o[q + 2] = URL_SAFE[(n >>> 6) & 63]!;
    o[q + 3] = URL_SAFE[n & 63]!;
    q += 4;
  }
  const last = b[at + 15]!;
  o[q] = URL_SAFE[last >>> 2]!;
  o[q + 1] = URL_SAFE[(last & 3) << 4]!;
  o[q + 2] = 0x22;
  return q + 3;
}

const HEX = Uint8Array.from(Buffer.from('0123456789abcdef', 'latin1'));

/** Is the code point one base/json-text.ts writes as a \u escape (C0 but the short ones, DEL, C1, format characters)? */
function unsafe(cp: number): boolean {
  return (
    cp < 0x20 ||
    (cp >= 0x7f && cp <= 0x9f) ||
    cp === 0x061c ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x2069) ||
    cp === 0xfeff
  );
}

/**
 * The rest of a string's bytes b[p, e), then its closing quote: decoded as the interpreter decodes them
 * (the WHATWG UTF-8 decoder TextDecoder runs: each maximal invalid subsequence as U+FFFD, a BOM kept)
 * and escaped as `jsonString` escapes them (JSON.stringify's escapes, then \u escapes for what a
 * terminal would act on), as UTF-8.
 */
function writeStringRest(out: ByteText, b: Uint8Array, p: number, e: number): void {
  // Each byte gives at most 6 bytes (a control byte as \u00XX); the closing quote 1.
  out.room((e - p) * 6 + 1);
  const o = out.buf;
  let q = out.pos;
  while (p < e) {
    const c = b[p]!;
    let cp: number;
    let len: number;
    if (c < 0x80) {
      cp = c;
      len = 1;
    } else {
      // WHATWG UTF-8 decode: the lead byte fixes the count and the second byte's range.
      let need: number;
      let lower = 0x80;
      let upper = 0xbf;
      if (c >= 0xc2 && c <= 0xdf) {
        need = 1;
        cp = c & 0x1f;
      } else if (c >= 0xe0 && c <= 0xef) {
        if (c === 0xe0) lower = 0xa0;
        if (c === 0xed) upper = 0x9f;
        need = 2;
        cp = c & 0x0f;
      } else if (c >= 0xf0 && c <= 0xf4) {
        if (c === 0xf0) lower = 0x90;
        if (c === 0xf4) upper = 0x8f;
        need = 3;
        cp = c & 0x07;
      } else {
        need = 0;
        cp = -1;
      }
      len = 1;
      while (need > 0) {
        const d = p + len < e ? b[p + len]! : -1;
        if (d < lower || d > upper) {
          // The sequence so far is one U+FFFD; the byte that broke it starts the next.
          cp = -1;
          break;
        }
        lower = 0x80;
        upper = 0xbf;
        cp = (cp << 6) | (d & 0x3f);
        len++;
        need--;
      }
      if (cp === -1) {
        o[q] = 0xef;
        o[q + 1] = 0xbf;
        o[q + 2] = 0xbd;
        q += 3;
        p += len;
        continue;
      }
    }
    if (cp === 0x22 || cp === 0x5c) {
      o[q] = 0x5c;
      o[q + 1] = cp;
      q += 2;
    } else if (cp < 0x20 && (cp === 8 || cp === 9 || cp === 10 || cp === 12 || cp === 13)) {
      o[q] = 0x5c;
      o[q + 1] = cp === 8 ? 0x62 : cp === 9 ? 0x74 : cp === 10 ? 0x6e : cp === 12 ? 0x66 : 0x72;
      q += 2;
    } else if (unsafe(cp)) {
      o[q] = 0x5c;
      o[q + 1] = 0x75;
      o[q + 2] = HEX[cp >>> 12]!;
      o[q + 3] = HEX[(cp >>> 8) & 15]!;
      o[q + 4] = HEX[(cp >>> 4) & 15]!;
      o[q + 5] = HEX[cp & 15]!;
      q += 6;
    } else {
      // Valid as it stands: its own bytes.
      for (let i = 0; i < len; i++) o[q + i] = b[p + i]!;
      q += len;
    }
    p += len;
  }
  o[q++] = 0x22;
  out.pos = q;
}

// ---------------------------------------------------------------------------------------------------
// Generating

const utf8 = new TextEncoder();

/** Code that stores `bytes` at o[q] and moves q past them. */
function storeCode(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i++) parts.push(`o[q${i === 0 ? '' : ` + ${i}`}] = ${bytes[i]};`);
  parts.push(`q += ${bytes.length};`);
  return parts.join(' ');
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const c = new Uint8Array(a.length + b.length);
  c.set(a);
  c.set(b, a.length);
  return c;
}

const NULL = utf8.encode('null');
const COMMA = Uint8Array.of(0x2c);
const NONE = new Uint8Array(0);

/**
 * Straight-line code with its output's room made once per run: `fixed` pieces write at most a known
 * number of bytes (their room is checked together, before the run), `code` pieces make their own.
 */
class Block {
  /** Pieces in order: fixed ones (code, bytes) and ones that make their own room (code, -1). */
  private readonly items: { code: string; bytes: number }[] = [];

  fixed(code: string, bytes: number): void {
    this.items.push({ code, bytes });
  }

  code(code: string): void {
    this.items.push({ code, bytes: -1 });
  }

  /** Another block's pieces, its first run of fixed pieces joining this block's last. */
  append(other: Block): void {
    this.items.push(...other.items);
  }

  text(): string {
    const lines: string[] = [];
    let run: string[] = [];
    let runBytes = 0;
    const flush = (): void => {
      if (runBytes > 0) lines.push(`if (q + ${runBytes} > o.length) { out.pos = q; out.room(${runBytes}); o = out.buf; }`);
      lines.push(...run);
      run = [];
      runBytes = 0;
    };
    for (const item of this.items) {
      if (item.bytes < 0) {
        flush();
        lines.push(item.code);
      } else {
        run.push(item.code);
        runBytes += item.bytes;
      }
    }
    flush();
    return lines.join('\n');
  }
}

/** Most bytes of a fixed-size or varint value's text. */
const MAX_TEXT: Readonly<Record<string, number>> = { bool: 5, int8: 4, int16: 6, uint16: 5, int32: 11, uint32: 10, varint: 11, int64: 20, varlong: 20, float64: 32, uuid: 24 };

/** A nested struct's code above this many characters goes in a function of its own (TurboFan optimises functions up to a bytecode size). */
const SPLIT = 6000;

class Unsupported extends Error {}

/** A field's comma: none (first in its struct), always, or when something precedes it (the last byte written is not the struct's '{'). */
const Comma = { None: 0, Static: 1, Dynamic: 2 } as const;
type Comma = (typeof Comma)[keyof typeof Comma];

class Gen {
  private id = 0;
  readonly functions: string[] = [];

  constructor(
    readonly version: number,
    readonly flexible: boolean,
    readonly replace: ReadonlyMap<string, string> | undefined,
  ) {}

  v(name: string): string {
    return `${name}${this.id++}`;
  }

  private compact(f: FieldSchema): boolean {
    return f.flexibleVersions === undefined ? this.flexible : inRange(f.flexibleVersions, this.version);
  }

  private isTagged(f: FieldSchema): boolean {
    return this.flexible && f.tag !== null && inRange(f.taggedVersions, this.version);
  }

  /** Code reading an unsigned varint into `x` (declared), 1-byte values inline. */
  private uvarint(x: string): string {
    return `if (p < L && (${x} = b[p]) < 128) p++; else { ${x} = uv(b, p, L); p = R.p; }`;
  }

  /** Code reading a length or count into `n` (declared): compact (varint - 1) or classic int16/int32. */
  private wireLength(n: string, compact: boolean, wide: boolean): string {
    if (compact) return `${this.uvarint(n)} ${n} -= 1;`;
    return wide
      ? `if (p + 4 > L) F(); ${n} = (b[p] << 24) | (b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]; p += 4;`
      : `if (p + 2 > L) F(); ${n} = ((b[p] << 24) | (b[p + 1] << 16)) >> 16; p += 2;`;
  }

  /** Code writing a fixed-size primitive read at b[at] (the caller checked the bytes and moves p). */
  private fixedText(prim: string, at: string): string {
    switch (prim) {
      case 'bool':
        return `if (b[${at}] !== 0) { ${storeCode(utf8.encode('true'))} } else { ${storeCode(utf8.encode('false'))} }`;
      case 'int8':
        return `q = wi(o, q, (b[${at}] << 24) >> 24);`;
      case 'int16':
        return `q = wi(o, q, ((b[${at}] << 24) | (b[${at} + 1] << 16)) >> 16);`;
      case 'uint16':
        return `q = wi(o, q, (b[${at}] << 8) | b[${at} + 1]);`;
      case 'int32':
        return `q = wi(o, q, (b[${at}] << 24) | (b[${at} + 1] << 16) | (b[${at} + 2] << 8) | b[${at} + 3]);`;
      case 'uint32':
        return `q = wi(o, q, ((b[${at}] << 24) | (b[${at} + 1] << 16) | (b[${at} + 2] << 8) | b[${at} + 3]) >>> 0);`;
      case 'int64':
        return `q = w64(o, q, b, ${at});`;
      case 'float64':
        return `q = wf(o, q, b, ${at});`;
      case 'uuid':
        return `q = wu(o, q, b, ${at});`;
    }
    throw new Unsupported(prim);
  }

  /**
   * Code reading one value of `f` (an element's type, for an array's elements) at p, and with `emit`
   * writing its text: `key` before a non-null value, `nullKey` before a null one (both empty for an
   * array's element). `nullFlag`, in skip mode: a variable set to true when the value is null.
   */
  private primitive(f: FieldSchema, emit: boolean, blk: Block, key: Uint8Array, nullKey: Uint8Array, nullable: boolean, nullFlag: string | null, at?: number): void {
    const prim = f.primitive!;
    const compact = this.compact(f);
    const size = FIXED_SIZE[prim];
    if (size !== undefined) {
      // In a run of fixed-size fields (`at`: the offset in it), the run checks the bytes and moves p.
      if (at === undefined) blk.fixed(`if (p + ${size} > L) F();`, 0);
      if (emit) {
        if (key.length > 0) blk.fixed(storeCode(key), key.length);
        blk.fixed(this.fixedText(prim, at === undefined || at === 0 ? 'p' : `(p + ${at})`), MAX_TEXT[prim]!);
      }
      if (at === undefined) blk.fixed(`p += ${size};`, 0);
      return;
    }
    if (prim === 'varint') {
      const z = this.v('z');
      blk.fixed(`let ${z}; ${this.uvarint(z)}`, 0);
      if (emit) {
        if (key.length > 0) blk.fixed(storeCode(key), key.length);
        blk.fixed(`q = wi(o, q, (${z} >>> 1) ^ -(${z} & 1));`, 11);
      }
      return;
    }
    if (prim === 'varlong') {
      if (emit) {
        if (key.length > 0) blk.fixed(storeCode(key), key.length);
        blk.fixed('q = wvl(o, q, b, p, L); p = R.p;', 20);
      } else {
        blk.fixed('wvl(SCRATCH, 0, b, p, L); p = R.p;', 0);
      }
      return;
    }
    // string, bytes, records: a length, -1 for null.
    const isString = prim === 'string';
    const n = this.v('n');
    const onNull = new Block();
    if (!nullable) onNull.fixed('F();', 0);
    else if (nullFlag !== null) onNull.fixed(`${nullFlag} = true;`, 0);
    else if (emit) onNull.fixed(storeCode(concat(nullKey, NULL)), nullKey.length + 4);
    const onValue = new Block();
    if (isString) onValue.fixed(`if (${n} > 32767) F();`, 0);
    onValue.fixed(`if (${n} > L - p) F();`, 0);
    if (!emit) onValue.fixed(`p += ${n};`, 0);
    else if (isString) {
      const e = this.v('e');
      if (key.length > 0) onValue.fixed(storeCode(key), key.length);
      onValue.code(
        [
          `if (q + ${n} + 2 > o.length) { out.pos = q; out.room(${n} + 2); o = out.buf; }`,
          `o[q++] = 34;`,
          `const ${e} = p + ${n};`,
          `for (; p < ${e}; p++) { const c = b[p]; if (c < 32 || c > 126 || c === 34 || c === 92) break; o[q++] = c; }`,
          `if (p < ${e}) { out.pos = q; ws(out, b, p, ${e}); o = out.buf; q = out.pos; p = ${e}; } else o[q++] = 34;`,
        ].join('\n'),
      );
    } else {
      if (key.length > 0) onValue.fixed(storeCode(key), key.length);
      onValue.fixed(`q = wi(o, q, ${n}); p += ${n};`, 10);
    }
    blk.code(`let ${n}; ${this.wireLength(n, compact, !isString)}\nif (${n} < 0) { if (${n} !== -1) F();\n${onNull.text()}\n} else {\n${onValue.text()}\n}`);
  }

  /** Code reading (and with `emit` writing, key included) one field's value: array, struct or primitive. */
  private value(f: FieldSchema, path: string, emit: boolean, blk: Block, key: Uint8Array, nullKey: Uint8Array, nullFlag: string | null, at?: number): void {
    const nullable = inRange(f.nullableVersions, this.version);
    if (f.isArray) {
      const n = this.v('n');
      const i = this.v('i');
      const onNull = new Block();
      if (!nullable) onNull.fixed('F();', 0);
      else if (nullFlag !== null) onNull.fixed(`${nullFlag} = true;`, 0);
      else if (emit) onNull.fixed(storeCode(concat(nullKey, NULL)), nullKey.length + 4);
      const onValue = new Block();
      onValue.fixed(`if (${n} > L - p) F();`, 0);
      if (emit) onValue.fixed(storeCode(concat(key, Uint8Array.of(0x5b))), key.length + 1);
      const each = new Block();
      if (emit) each.fixed(`if (${i} !== 0) o[q++] = 44;`, 1);
      if (f.struct) this.struct(f.struct.fields, path, emit, each);
      else this.primitive(f, emit, each, NONE, NONE, nullable, null);
      onValue.code(`for (let ${i} = 0; ${i} < ${n}; ${i}++) {\n${each.text()}\n}`);
      if (emit) onValue.fixed('o[q++] = 93;', 1);
      blk.code(`let ${n}; ${this.wireLength(n, this.compact(f), true)}\nif (${n} < 0) { if (${n} !== -1) F();\n${onNull.text()}\n} else {\n${onValue.text()}\n}`);
      return;
    }
    if (f.struct) {
      if (!nullable) {
        if (emit && key.length > 0) blk.fixed(storeCode(key), key.length);
        this.struct(f.struct.fields, path, emit, blk);
        return;
      }
      // A nullable struct: an int8 before it, negative for null.
      const onValue = new Block();
      if (emit && key.length > 0) onValue.fixed(storeCode(key), key.length);
      this.struct(f.struct.fields, path, emit, onValue);
      let onNull = '';
      if (nullFlag !== null) onNull = `${nullFlag} = true;`;
      else if (emit) {
        const bytes = concat(nullKey, NULL);
        onNull = `if (q + ${bytes.length} > o.length) { out.pos = q; out.room(${bytes.length}); o = out.buf; } ${storeCode(bytes)}`;
      }
      blk.code(`if (p >= L) F();\nif (b[p++] >= 128) { ${onNull} } else {\n${onValue.text()}\n}`);
      return;
    }
    this.primitive(f, emit, blk, key, nullKey, nullable, nullFlag, at);
  }

  /** A scalar of fixed size (not tagged here): consecutive ones are read as one run, one bounds check for all. */
  private isFixed(f: FieldSchema): boolean {
    return !f.isArray && f.struct === null && FIXED_SIZE[f.primitive!] !== undefined && !this.isTagged(f);
  }

  /**
   * The untagged fields of `present` from index `i` on that form a run of fixed-size fields (at least
   * the one at `i`), each written by `each` with its offset in the run, after one bounds check; returns
   * the index after the run. A field that is not of fixed size is a run of its own, written without offset.
   */
  private run(present: readonly FieldSchema[], i: number, blk: Block, each: (f: FieldSchema, at: number | undefined) => void): number {
    if (!this.isFixed(present[i]!)) {
      each(present[i]!, undefined);
      return i + 1;
    }
    let j = i;
    let total = 0;
    while (j < present.length && this.isFixed(present[j]!)) total += FIXED_SIZE[present[j++]!.primitive!]!;
    blk.fixed(`if (p + ${total} > L) F();`, 0);
    let at = 0;
    for (let k = i; k < j; k++) {
      each(present[k]!, at);
      at += FIXED_SIZE[present[k]!.primitive!]!;
    }
    blk.fixed(`p += ${total};`, 0);
    return j;
  }

  /** One field of a struct, its key (and comma) included. */
  private field(f: FieldSchema, path: string, emit: boolean, blk: Block, comma: Comma, at?: number): void {
    const here = path === '' ? f.name : `${path}.${f.name}`;
    if (!emit) return this.value(f, here, false, blk, NONE, NONE, null, at);
    const replaced = this.replace?.get(here);
    const size = f.primitive === 'bytes' || f.primitive === 'records';
    const prefix = comma === Comma.Static ? COMMA : NONE;
    const key = concat(prefix, utf8.encode(`${jsonString(size && replaced === undefined ? `${f.jsonName}SizeInBytes` : f.jsonName)}:`));
    const nullKey = concat(prefix, utf8.encode(`${jsonString(f.jsonName)}:`));
    if (comma === Comma.Dynamic) blk.fixed('if (o[q - 1] !== 123) o[q++] = 44;', 1);
    if (replaced === undefined) return this.value(f, here, true, blk, key, nullKey, null, at);
    // Replaced (a hidden config value): read and checked, never written; a null stays null.
    const nl = this.v('nl');
    blk.fixed(`let ${nl} = false;`, 0);
    this.value(f, here, false, blk, NONE, NONE, nl, at);
    const text = concat(key, utf8.encode(replaced));
    const nullText = concat(nullKey, NULL);
    const most = Math.max(text.length, nullText.length);
    blk.fixed(`if (${nl}) { ${storeCode(nullText)} } else { ${storeCode(text)} }`, most);
  }

  /** A struct's code: inline into `blk`, or, when large, a function of its own called from it. */
  private struct(fields: readonly FieldSchema[], path: string, emit: boolean, blk: Block): void {
    const inner = new Block();
    this.structBody(fields, path, emit, inner);
    const text = inner.text();
    // Inline: every name the generated code declares is unique, so no block is needed around it.
    if (text.length <= SPLIT) return blk.append(inner);
    const name = this.v(emit ? 'w' : 's');
    this.functions.push(`function ${name}(b, p, L, out) {\nlet o = out.buf, q = out.pos;\n${text}\nout.pos = q;\nreturn p;\n}`);
    blk.code(`out.pos = q; p = ${name}(b, p, L, out); o = out.buf; q = out.pos;`);
  }

  private structBody(fields: readonly FieldSchema[], path: string, emit: boolean, blk: Block): void {
    const present = fields.filter((f) => inRange(f.versions, this.version));
    const tagged = present.filter((f) => this.isTagged(f));
    const tags = new Set(tagged.map((f) => f.tag));
    if (tags.size !== tagged.length) throw new Unsupported('two fields with one tag');
    const firstTagged = present.findIndex((f) => this.isTagged(f));
    let lastUntagged = -1;
    present.forEach((f, i) => {
      if (!this.isTagged(f)) lastUntagged = i;
    });
    const inOrder = tagged.every((f, i) => i === 0 || f.tag! > tagged[i - 1]!.tag!);
    // Tagged fields last in schema order and in tag order: written as the tag section comes.
    const direct = !emit || tagged.length === 0 || (firstTagged > lastUntagged && inOrder);
    if (direct) {
      if (emit) blk.fixed('o[q++] = 123;', 1);
      let untagged = 0;
      const plain = present.filter((f) => !this.isTagged(f));
      for (let i = 0; i < plain.length; ) {
        i = this.run(plain, i, blk, (f, at) => {
          this.field(f, path, emit, blk, untagged === 0 ? Comma.None : Comma.Static, at);
          untagged++;
        });
      }
      if (this.flexible) {
        this.tagSection(tagged, blk, (f, caseBlk) => this.field(f, path, emit, caseBlk, untagged > 0 ? Comma.Static : Comma.Dynamic));
      }
      if (emit) blk.fixed('o[q++] = 125;', 1);
      return;
    }
    // Tagged fields before untagged ones: skip the untagged fields to the tag section, keep where each
    // known tag's value is, then write every field in schema order.
    const p0 = this.v('p');
    const pEnd = this.v('p');
    const spans = new Map<number, { s: string; e: string }>();
    for (const f of tagged) spans.set(f.tag!, { s: this.v('s'), e: this.v('e') });
    blk.fixed(`const ${p0} = p; let ${[...spans.values()].map((x) => `${x.s} = -1, ${x.e} = 0`).join(', ')};`, 0);
    const plain = present.filter((f) => !this.isTagged(f));
    for (let i = 0; i < plain.length; ) i = this.run(plain, i, blk, (f, at) => this.field(f, path, false, blk, Comma.None, at));
    this.tagSection(tagged, blk, (f, caseBlk, end) => {
      const span = spans.get(f.tag!)!;
      caseBlk.fixed(`${span.s} = p; ${span.e} = ${end}; p = ${end};`, 0);
    });
    blk.fixed(`const ${pEnd} = p; p = ${p0};`, 0);
    blk.fixed('o[q++] = 123;', 1);
    let state: 'none' | 'some' | 'maybe' = 'none';
    const commaFor = (): Comma => (state === 'none' ? Comma.None : state === 'some' ? Comma.Static : Comma.Dynamic);
    for (let i = 0; i < present.length; ) {
      const f = present[i]!;
      if (!this.isTagged(f)) {
        // A run stops at a tagged field (isFixed is false for one).
        i = this.run(present, i, blk, (g, at) => {
          this.field(g, path, true, blk, commaFor(), at);
          state = 'some';
        });
        continue;
      }
      i++;
      const span = spans.get(f.tag!)!;
      const p1 = this.v('p');
      const l1 = this.v('l');
      const one = new Block();
      one.fixed(`const ${p1} = p, ${l1} = L; p = ${span.s}; L = ${span.e};`, 0);
      this.field(f, path, true, one, commaFor());
      one.fixed(`if (p !== L) F(); p = ${p1}; L = ${l1};`, 0);
      blk.code(`if (${span.s} >= 0) {\n${one.text()}\n}`);
      if (state === 'none') state = 'maybe';
    }
    blk.fixed(`p = ${pEnd};`, 0);
    blk.fixed('o[q++] = 125;', 1);
  }

  /**
   * A tagged-field section as interpreter.ts reads it: a count no larger than the bytes left, tags in
   * increasing order, each size within the frame; a known tag's value is read within its size and must
   * take all of it (`known` writes that code; `end` is the expression of the value's end), an unknown one
   * is skipped.
   */
  private tagSection(tagged: readonly FieldSchema[], blk: Block, known: (f: FieldSchema, caseBlk: Block, end: string) => void): void {
    const n = this.v('n');
    const i = this.v('i');
    const last = this.v('t');
    const tag = this.v('t');
    const sz = this.v('z');
    const e = this.v('e');
    const cases: string[] = [];
    for (const f of tagged) {
      const caseBlk = new Block();
      const l0 = this.v('l');
      caseBlk.fixed(`const ${l0} = L; L = ${e};`, 0);
      known(f, caseBlk, e);
      caseBlk.fixed(`if (p !== ${e}) F(); L = ${l0};`, 0);
      cases.push(`case ${f.tag}: {\n${caseBlk.text()}\nbreak;\n}`);
    }
    blk.code(
      [
        `let ${n}; ${this.uvarint(n)}`,
        `if (${n} !== 0) {`,
        `if (${n} > L - p) F();`,
        `let ${last} = -1;`,
        `for (let ${i} = 0; ${i} < ${n}; ${i}++) {`,
        `let ${tag}; ${this.uvarint(tag)}`,
        `if (${tag} <= ${last}) F();`,
        `${last} = ${tag};`,
        `let ${sz}; ${this.uvarint(sz)}`,
        `if (${sz} > L - p) F();`,
        `const ${e} = p + ${sz};`,
        cases.length === 0 ? `p = ${e};` : `switch (${tag}) {\n${cases.join('\n')}\ndefault: p = ${e};\n}`,
        `}`,
        `}`,
      ].join('\n'),
    );
  }

  top(fields: readonly FieldSchema[]): string {
    const blk = new Block();
    this.structBody(fields, '', true, blk);
    return blk.text();
  }
}

/** Bytes a skipped varlong is "written" to (its text is not wanted). */
const SCRATCH = new Uint8Array(32);

function compile(message: MessageSchema, version: number, replace: ReadonlyMap<string, string>): WireJsonWriter | null {
  const layout = layoutFor(message, version);
  if (layout === null) return null;
  const g = new Gen(version, inRange(layout.flexibleVersions, version), replace.size === 0 ? undefined : replace);
  let body: string;
  try {
    body = g.top(layout.fields);
  } catch (e) {
    if (e instanceof Unsupported) return null;
    throw e;
  }
  const text = `${g.functions.join('\n')}
return function write(b, start, end, out) {
  if (!(start >= 0 && start <= end && end <= b.length)) return false;
  const q0 = out.pos;
  let p = start, L = end, o = out.buf, q = q0;
  try {
${body}
  } catch (e) {
    if (e !== FAIL) throw e;
    out.pos = q0;
    return false;
  }
  out.pos = q;
  return true;
};`;
  const make = new Function('F', 'FAIL', 'R', 'uv', 'wi', 'w64', 'wvl', 'wf', 'wu', 'ws', 'SCRATCH', text) as (...a: unknown[]) => WireJsonWriter;
  return make(fail, FAIL, R, uvarint, writeIntAt, writeInt64, writeVarlong, writeFloat64, writeUuid, writeStringRest, SCRATCH);
}

/** Compiled writers per message, version and replacement map (null: the version is not defined). */
const writers = new WeakMap<MessageSchema, Map<number, WeakMap<object, WireJsonWriter | null>>>();
const NO_REPLACEMENTS: ReadonlyMap<string, string> = new Map();

/**
 * The compiled wire-to-JSON writer of one message version (cached), writing what toKafkaJson (with
 * `replace`: fields by path written as the given JSON text) writes for the interpreter's decode of the
 * same bytes. Null when the message does not define the version, or its schema is one this writer
 * does not take (two fields of one struct with one tag).
 */
export function wireJsonWriter(message: MessageSchema, version: number, replace: ReadonlyMap<string, string> = NO_REPLACEMENTS): WireJsonWriter | null {
  let byVersion = writers.get(message);
  if (byVersion === undefined) writers.set(message, (byVersion = new Map()));
  let byReplace = byVersion.get(version);
  if (byReplace === undefined) byVersion.set(version, (byReplace = new WeakMap()));
  let w = byReplace.get(replace);
  if (w === undefined) byReplace.set(replace, (w = compile(message, version, replace)));
  return w;
}
