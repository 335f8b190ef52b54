/**
 * One schema interpreter for every request, response and header of every version
 * (https://kafka.apache.org/protocol.html, KIP-482 for the flexible encoding): it decodes
 * `buf[start, end)` by the schema, bounded by the frame.
 *
 * Compiled, then run: {@link compileDecoder} turns (message, version, selection) into closures once
 * (cached): one per field, and per struct a straight-line function calling them (see `unrolled`), so a
 * frame costs the reads and nothing else. A selection names the fields a
 * caller needs ("Acks", "TopicData.PartitionData.Index"): the others are skipped without building
 * values, and decoding stops after the last selected top-level field (unless a tagged field is
 * selected: tagged fields come last).
 *
 * Values (a {@link Struct} per struct, keyed by the schema's field names, with a null prototype:
 * names may come from a user's --kafka-specs):
 * - int8, int16, uint16, int32, uint32, varint, float64: number; bool: boolean;
 * - int64 and varlong: bigint, always (one type whatever the value; offsets and producer IDs are exact);
 * - string: string (UTF-8, malformed bytes as U+FFFD like Java) or null;
 * - uuid: a 16-byte Uint8Array copied out of the frame (frame buffers are reused);
 * - bytes: {size} only, never the content (SASL tokens, SCRAM salts, token HMACs are bytes);
 * - records: {size}, or with `records: 'summary'` a {@link RecordsSummary} of the batch headers;
 * - arrays: arrays; a nullable struct, array, string, bytes or records: null when the wire says so;
 * - a field the version does not have, or a tagged field the frame does not carry: absent;
 * - tagged fields the schema does not know: `_unknownTaggedFields: [{tag, size}]` (a name no schema
 *   field can have: field names start with a letter).
 *
 * Three outcomes: a {@link Decoded} that is complete; a Decoded with `complete: false` when the bytes
 * given end before the frame does (`end < frameEnd`: the caller holds a prefix; `stoppedAt` says where,
 * the value holds what was read); or a thrown {@link BodyError} when the frame itself is malformed,
 * naming the path and the problem: "Produce v11 request: TopicData[0].PartitionData[2].Records:
 * length 1048576 overruns the frame by 12 bytes". Nothing is allocated in proportion to a count or
 * length before the bytes are known to be there (Kafka's own check: a count larger than the bytes left
 * is refused).
 */
import { holdsErrorCode, inRange, layoutFor, type FieldSchema, type MessageSchema, type ProtocolSchemas } from './model.js';
import { summariseRecords, type RecordsSummary } from './records.js';
import { requestHeaderVersion } from './registry.js';

export type Value = number | bigint | boolean | string | null | Uint8Array | SizeOnly | RecordsSummary | Struct | Value[];
export interface SizeOnly {
  readonly size: number;
}
export interface UnknownTag {
  readonly tag: number;
  readonly size: number;
}
/** A decoded struct: field name to value, null prototype. */
export type Struct = { [field: string]: Value | UnknownTag[] | undefined };

export const UNKNOWN_TAGS = '_unknownTaggedFields';

export interface DecodeOptions {
  /** Field paths to decode ("Acks", "TopicData.PartitionData.Index"); a struct's name selects all of it. Default: everything. */
  readonly select?: readonly string[];
  /** How `records` fields are given: their size (default) or a summary of the batch headers. */
  readonly records?: 'size' | 'summary';
  /**
   * Collect every non-zero int16 ErrorCode field, at any depth, into Decoded.errorCodes, without building
   * the structs and arrays around it (a selective decode then reads on to the last top-level field that
   * holds one): what an error count needs, at the cost of skipping, not of building.
   */
  readonly tapErrorCodes?: boolean;
}

export interface Decoded {
  readonly value: Struct;
  /** Where decoding stopped in `buf`. */
  readonly end: number;
  /** False when the bytes given ran out before the body was read (the frame goes on past them). */
  readonly complete: boolean;
  /** When not complete: the path of the field being read when the bytes ran out. */
  readonly stoppedAt: string | null;
  /** Complete and unselective: bytes left in the frame after the body (Kafka ignores them). */
  readonly trailing: number;
  /** With tapErrorCodes: the non-zero ErrorCodes read, in wire order (at most MAX_TAPPED). */
  readonly errorCodes?: readonly number[];
}

/** Error codes collected per decode at most (a response may carry one per partition). */
export const MAX_TAPPED = 4096;
const NO_CODES: readonly number[] = Object.freeze([]);
let tapped: number[] = [];

/**
 * A malformed body: `path` ("TopicData[0].PartitionData[2].Records") and `problem`, at `offset` in the
 * buffer. `value` holds every field read before the break (as an incomplete decode's value does) and
 * `errorCodes` the ErrorCodes tapped before it: a body that ends early keeps what it carried.
 */
export class BodyError extends Error {
  override readonly name = 'BodyError';
  constructor(
    readonly context: string,
    readonly path: string,
    readonly problem: string,
    readonly offset: number,
    readonly value: Struct = Object.create(null) as Struct,
    readonly errorCodes: readonly number[] = NO_CODES,
  ) {
    super(`${context}: ${path === '' ? '' : `${path}: `}${problem}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// The cursor: one per thread (decoding is synchronous and not re-entrant).

let buf: Uint8Array = new Uint8Array(0);
/** A DataView of `buf` for int64 and float64, made when first needed (frames change buffers often). */
let dv: DataView | null = null;
function view(): DataView {
  return (dv ??= new DataView(buf.buffer, buf.byteOffset, buf.byteLength));
}
/** Big-endian int16 and int32 by byte arithmetic: no DataView per buffer. */
const i16 = (p: number): number => (((buf[p]! << 8) | buf[p + 1]!) << 16) >> 16;
const i32 = (p: number): number => (buf[p]! << 24) | (buf[p + 1]! << 16) | (buf[p + 2]! << 8) | buf[p + 3]!;
let pos = 0;
/** The bytes available. */
let avail = 0;
/** The frame's end: reading past `avail` but not past this is "incomplete", past this "malformed". */
let limit = 0;
let recordsMode: 'size' | 'summary' = 'size';

/** Thrown inside the interpreter; carries the path, built while it unwinds. */
class Fail {
  readonly path: string[] = [];
  constructor(
    readonly incomplete: boolean,
    readonly problem: string,
    readonly offset: number,
  ) {}
}

function fail(problem: string): never {
  throw new Fail(false, problem, pos);
}

/** `n` more bytes (fixed-size reads). */
function need(n: number): void {
  if (pos + n > avail) {
    if (pos + n > limit) throw new Fail(false, `needs ${n} bytes, the frame has ${limit - pos} left`, pos);
    throw new Fail(true, `needs ${n} bytes`, pos);
  }
}

/** `n` bytes that a length on the wire announced. */
function needLength(n: number): void {
  if (pos + n > avail) {
    if (pos + n > limit) throw new Fail(false, `length ${n} overruns the frame by ${pos + n - limit} bytes`, pos);
    throw new Fail(true, `length ${n}`, pos);
  }
}

/**
 * A length on the wire, the one place each encoding is read (KIP-482): compact, an unsigned varint
 * of length + 1; classic, an int16 (strings) or an int32 (bytes, records, arrays). -1 is null.
 */
function wireLength(compact: boolean, classicBytes: 2 | 4): number {
  if (compact) return uvarint() - 1;
  need(classicBytes);
  const n = classicBytes === 2 ? i16(pos) : i32(pos);
  pos += classicBytes;
  return n;
}

function uvarint(): number {
  let v = 0;
  for (let shift = 0; shift <= 28; shift += 7) {
    need(1);
    const b = buf[pos++]!;
    v |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return v >>> 0;
  }
  return fail('varint is longer than 5 bytes');
}

function uvarlong(): bigint {
  let v = 0n;
  for (let shift = 0n; shift <= 63n; shift += 7n) {
    need(1);
    const b = buf[pos++]!;
    v |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return v;
  }
  return fail('varlong is longer than 10 bytes');
}

/**
 * Kafka decodes strings with Java's `new String(bytes, UTF_8)`: malformed sequences become U+FFFD and a
 * leading byte-order mark is kept (hence ignoreBOM). ASCII, nearly every string on the wire, takes
 * Buffer's native latin1 slice instead, which is several times cheaper than a TextDecoder call.
 */
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice?: (this: Uint8Array, from: number, to: number) => string }).latin1Slice;

function text(from: number, to: number): string {
  let i = from;
  while (i < to && buf[i]! < 0x80) i++;
  if (i === to && latin1Slice !== undefined) return latin1Slice.call(buf, from, to);
  return utf8.decode(buf.subarray(from, to));
}

// ---------------------------------------------------------------------------------------------------
// Compiling

/** Reads one value (or skips it when `build` is false: then it returns undefined). */
type Read = () => Value | undefined;

interface Selection {
  /** null: the whole subtree. */
  readonly children: Map<string, Selection> | null;
}
const ALL: Selection = { children: null };

function selectionOf(paths: readonly string[] | undefined): Selection {
  if (!paths) return ALL;
  const root: { children: Map<string, Selection> } = { children: new Map() };
  for (const p of paths) {
    let node: Selection = root;
    for (const part of p.split('.')) {
      if (node.children === null) break;
      let next = node.children.get(part);
      if (!next) node.children.set(part, (next = { children: new Map() }));
      node = next;
    }
    // A path's last part selects that field's whole subtree.
    (node as { children: Map<string, Selection> | null }).children = null;
  }
  return root;
}

interface Ctx {
  readonly version: number;
  readonly flexible: boolean;
  /** tapErrorCodes. */
  readonly tap: boolean;
}

const skip = (n: number): Read => () => {
  need(n);
  pos += n;
  return undefined;
};

function primitiveRead(f: FieldSchema, ctx: Ctx, build: boolean): Read {
  const compact = f.flexibleVersions === undefined ? ctx.flexible : inRange(f.flexibleVersions, ctx.version);
  const nullable = inRange(f.nullableVersions, ctx.version);
  const notNull = (): never => fail(`null, but ${f.name} is not nullable in v${ctx.version}`);
  switch (f.primitive!) {
    case 'bool':
      return build ? () => (need(1), buf[pos++] !== 0) : skip(1);
    case 'int8':
      return build ? () => (need(1), (buf[pos++]! << 24) >> 24) : skip(1);
    case 'int16':
      if (ctx.tap && f.name === 'ErrorCode') {
        return () => {
          need(2);
          const v = i16(pos);
          pos += 2;
          if (v !== 0 && tapped.length < MAX_TAPPED) tapped.push(v);
          return build ? v : undefined;
        };
      }
      return build ? () => (need(2), (pos += 2), i16(pos - 2)) : skip(2);
    case 'uint16':
      return build ? () => (need(2), (pos += 2), (i16(pos - 2) & 0xffff)) : skip(2);
    case 'int32':
      return build ? () => (need(4), (pos += 4), i32(pos - 4)) : skip(4);
    case 'uint32':
      return build ? () => (need(4), (pos += 4), (i32(pos - 4) >>> 0)) : skip(4);
    case 'int64':
      return build ? () => (need(8), (pos += 8), view().getBigInt64(pos - 8)) : skip(8);
    case 'float64':
      return build ? () => (need(8), (pos += 8), view().getFloat64(pos - 8)) : skip(8);
    case 'uuid':
      return build
        ? () => {
            need(16);
            const u = new Uint8Array(16);
            u.set(buf.subarray(pos, pos + 16));
            pos += 16;
            return u;
          }
        : skip(16);
    case 'varint':
      return () => {
        const z = uvarint();
        return build ? (z >>> 1) ^ -(z & 1) : undefined;
      };
    case 'varlong':
      return () => {
        const z = uvarlong();
        return build ? BigInt.asIntN(64, (z >> 1n) ^ -(z & 1n)) : undefined;
      };
    case 'string':
      return () => {
        const n = wireLength(compact, 2);
        if (n < 0) {
          if (n === -1 && nullable) return null;
          return n === -1 ? notNull() : fail(`string length ${n} is negative`);
        }
        if (n > 0x7fff) fail(`string length ${n} is longer than 32767`);
        needLength(n);
        pos += n;
        return build ? text(pos - n, pos) : undefined;
      };
    case 'bytes':
    case 'records': {
      const records = f.primitive === 'records';
      return () => {
        const n = wireLength(compact, 4);
        if (n < 0) {
          if (n === -1 && nullable) return null;
          return n === -1 ? notNull() : fail(`length ${n} is negative`);
        }
        needLength(n);
        pos += n;
        if (!build) return undefined;
        if (records && recordsMode === 'summary') return summariseRecords(buf, pos - n, pos);
        return { size: n };
      };
    }
  }
}

/** An array count (Kafka's check: never more elements than bytes left in the frame). */
function arrayCount(compact: boolean, nullable: boolean, name: string, version: number): number {
  const n = wireLength(compact, 4);
  if (n < 0) {
    if (n === -1 && nullable) return -1;
    fail(n === -1 ? `null, but ${name} is not nullable in v${version}` : `array count ${n} is negative`);
  }
  if (n > limit - pos) fail(`array count ${n} is larger than the ${limit - pos} bytes left in the frame`);
  return n;
}

function fieldRead(f: FieldSchema, ctx: Ctx, sel: Selection | undefined, depth: number): Read {
  const build = sel !== undefined;
  const compact = f.flexibleVersions === undefined ? ctx.flexible : inRange(f.flexibleVersions, ctx.version);
  const nullable = inRange(f.nullableVersions, ctx.version);
  const element: Read = f.struct ? structRead(f.struct.fields, ctx, sel, depth + 1) : primitiveRead(f, ctx, build);
  if (!f.isArray) {
    if (!f.struct || !nullable) return element;
    // A nullable struct is preceded by an int8: -1 null, else present.
    return () => {
      need(1);
      if (buf[pos++]! >= 0x80) return build ? null : undefined;
      return element();
    };
  }
  return () => {
    const n = arrayCount(compact, nullable, f.name, ctx.version);
    if (n < 0) return build ? null : undefined;
    if (!build) {
      let i = 0;
      try {
        for (; i < n; i++) element();
      } catch (e) {
        if (e instanceof Fail) e.path.unshift(`[${i}]`);
        throw e;
      }
      return undefined;
    }
    const out: Value[] = [];
    let i = 0;
    try {
      for (; i < n; i++) out.push(element() as Value);
    } catch (e) {
      if (e instanceof Fail) {
        e.path.unshift(`[${i}]`);
        if (pending !== null) out.push(pending);
        pending = out;
      }
      throw e;
    }
    return out;
  };
}

/**
 * While a Fail unwinds: the partly read value of the field that failed (an array or struct), which the
 * struct or array holding it keeps, so an incomplete decode returns everything read up to that point.
 */
let pending: Value | null = null;

/** The prototype of every decoded struct: an empty object with a null prototype. */
const STRUCT_PROTO: object = Object.freeze(Object.create(null));

function structConstructor(): new () => Struct {
  // A function per call: V8 gives each its own initial map; its prototype is STRUCT_PROTO.
  const C = function () {} as unknown as { prototype: object };
  C.prototype = STRUCT_PROTO;
  return C as unknown as new () => Struct;
}

interface CompiledStruct {
  readonly read: Read;
  /** Fields read before decoding may stop (the top level of a selective decode), for the early exit. */
  readonly stepCount: number;
}

function structRead(fields: readonly FieldSchema[], ctx: Ctx, sel: Selection | undefined, depth: number, top = false): Read {
  return compileStruct(fields, ctx, sel, depth, top).read;
}

function compileStruct(fields: readonly FieldSchema[], ctx: Ctx, sel: Selection | undefined, depth: number, top: boolean): CompiledStruct {
  const build = sel !== undefined;
  const names: string[] = [];
  const reads: Read[] = [];
  const keep: boolean[] = [];
  const tagged = new Map<number, { name: string; read: Read; keep: boolean }>();
  let anyTaggedWanted = false;
  for (const f of fields) {
    if (!inRange(f.versions, ctx.version)) continue;
    const childSel = !build ? undefined : sel.children === null ? ALL : sel.children.get(f.name);
    if (ctx.flexible && f.tag !== null && inRange(f.taggedVersions, ctx.version)) {
      tagged.set(f.tag, { name: f.name, read: fieldRead(f, ctx, childSel, depth), keep: childSel !== undefined });
      if (childSel !== undefined) anyTaggedWanted = true;
      continue;
    }
    names.push(f.name);
    reads.push(fieldRead(f, ctx, childSel, depth));
    keep.push(childSel !== undefined);
  }
  // At the top level of a selective decode, stop after the last wanted field.
  let count = reads.length;
  let readTags = ctx.flexible;
  if (top && build && sel.children !== null) {
    count = keep.lastIndexOf(true) + 1;
    if (!anyTaggedWanted) readTags = false;
    else count = reads.length;
    if (ctx.tap) {
      // Read on to the last top-level field that holds an ErrorCode (skipped, but tapped).
      const plain = fields.filter((f) => inRange(f.versions, ctx.version) && !(ctx.flexible && f.tag !== null && inRange(f.taggedVersions, ctx.version)));
      for (let i = plain.length - 1; i >= count; i--) {
        if (holdsErrorCode(plain[i]!, ctx.version)) {
          count = i + 1;
          break;
        }
      }
      const taggedCodes = fields.some((f) => ctx.flexible && f.tag !== null && inRange(f.taggedVersions, ctx.version) && holdsErrorCode(f, ctx.version));
      if (taggedCodes) {
        readTags = true;
        count = reads.length;
      }
    }
  }
  const keepTags = build && sel.children === null;
  // One constructor per compiled struct: its values share one hidden class (fast properties), and no
  // Object.prototype is in their chain (Object.create(null) would give slow dictionary objects).
  const Struct = structConstructor();
  const read = unrolled(build, count, names, keep, reads, Struct, readTags ? (out: Struct | undefined) => readTaggedFields(tagged, out, keepTags) : null);
  return { read, stepCount: count };
}

/** While a Fail unwinds through a struct: the field's name on the path, and the partial value kept. */
function structFailed(e: unknown, out: Struct | undefined, i: number, count: number, names: readonly string[], keep: readonly boolean[]): never {
  if (e instanceof Fail) {
    if (i < count) {
      e.path.unshift(names[i]!);
      if (out !== undefined && keep[i] && pending !== null) out[names[i]!] = pending;
    }
    pending = out ?? null;
  }
  throw e;
}

/**
 * A struct's reader as straight-line code: one call site per field, so each calls one closure only (V8
 * can inline it), instead of a loop whose one call site sees every field's closure. The generated text
 * holds no schema text but field names, written as JSON string literals; everything else is passed in.
 */
function unrolled(
  build: boolean,
  count: number,
  names: readonly string[],
  keep: readonly boolean[],
  reads: readonly Read[],
  S: new () => Struct,
  tags: ((out: Struct | undefined) => void) | null,
): Read {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    lines.push(`i = ${i};`);
    lines.push(build && keep[i] ? `out[${JSON.stringify(names[i])}] = r${i}();` : `r${i}();`);
  }
  if (tags) lines.push(`i = ${count};`, 'tags(out);');
  const body = `return function read() {
  const out = ${build ? 'new S()' : 'undefined'};
  let i = 0;
  try {
    ${lines.join('\n    ')}
  } catch (e) {
    failed(e, out, i, count, names, keep);
  }
  return out;
};`;
  // The readers are separate parameters (r0, r1, ...), so that each call site sees one closure.
  const params = Array.from({ length: count }, (_, i) => `r${i}`);
  const make = new Function(...params, 'S', 'tags', 'failed', 'count', 'names', 'keep', body) as (...a: unknown[]) => Read;
  return make(...reads.slice(0, count), S, tags, structFailed, count, names, keep);
}

function readTaggedFields(tagged: Map<number, { name: string; read: Read; keep: boolean }>, out: Struct | undefined, keepUnknown: boolean): void {
  const n = uvarint();
  if (n > limit - pos) fail(`tagged field count ${n} is larger than the ${limit - pos} bytes left in the frame`);
  let last = -1;
  for (let i = 0; i < n; i++) {
    const tag = uvarint();
    if (tag <= last) fail(`tag ${tag} follows tag ${last}: tags must be in increasing order`);
    last = tag;
    const size = uvarint();
    const t = tagged.get(tag);
    if (!t) {
      needLength(size);
      pos += size;
      if (out !== undefined && keepUnknown) {
        let list = out[UNKNOWN_TAGS] as UnknownTag[] | undefined;
        if (!list) out[UNKNOWN_TAGS] = list = [];
        list.push({ tag, size });
      }
      continue;
    }
    // A known tag is read within its size: it may neither stop short nor run past it.
    needLength(size);
    const end = pos + size;
    const savedAvail = avail;
    const savedLimit = limit;
    avail = limit = end;
    let v: Value | undefined;
    try {
      v = t.read();
      if (pos !== end) fail(`tag ${tag} has ${size} bytes, its value took ${size - (end - pos)}`);
    } catch (e) {
      if (e instanceof Fail) {
        e.path.unshift(t.name);
        if (e.problem.startsWith('needs ') || e.problem.startsWith('length ')) {
          (e as { problem: string }).problem = `tag ${tag} has ${size} bytes, too few for its value`;
        }
      }
      throw e;
    } finally {
      avail = savedAvail;
      limit = savedLimit;
    }
    if (out !== undefined && t.keep) out[t.name] = v!;
  }
}

// ---------------------------------------------------------------------------------------------------
// The entry points

export interface Decoder {
  /** "Produce v11 request", the prefix of error messages. */
  readonly context: string;
  readonly message: MessageSchema;
  readonly version: number;
  readonly selective: boolean;
  readonly read: Read;
  readonly records: 'size' | 'summary';
}

/** A selected path must name a field of the message in some version: a typo is a bug, not an empty result. */
function checkSelection(message: MessageSchema, paths: readonly string[]): void {
  for (const path of paths) {
    let levels: (readonly FieldSchema[])[] = message.layouts.map((l) => l.fields);
    for (const part of path.split('.')) {
      const next: (readonly FieldSchema[])[] = [];
      let found = false;
      for (const fields of levels) {
        for (const f of fields) {
          if (f.name !== part) continue;
          found = true;
          if (f.struct) next.push(f.struct.fields);
        }
      }
      if (!found) throw new RangeError(`${message.name} has no field ${JSON.stringify(path)} in any version`);
      levels = next;
    }
  }
}

interface VersionCache {
  /** By the options object itself: a caller that keeps its options constant pays one lookup. */
  readonly byOptions: WeakMap<DecodeOptions, Decoder | null>;
  /** By what the options say, for callers that make new option objects. */
  readonly byKey: Map<string, Decoder | null>;
}

const cache = new WeakMap<MessageSchema, Map<number, VersionCache>>();
const NO_OPTIONS: DecodeOptions = Object.freeze({});

/**
 * Compiles (once: cached per message, version and options) the decoder of one message version; null when
 * the message does not define the version. Keep `options` in a constant: the cache is keyed by the object
 * first.
 */
export function compileDecoder(message: MessageSchema, version: number, options: DecodeOptions = NO_OPTIONS, context?: string): Decoder | null {
  let versions = cache.get(message);
  if (!versions) cache.set(message, (versions = new Map()));
  let vc = versions.get(version);
  if (!vc) versions.set(version, (vc = { byOptions: new WeakMap(), byKey: new Map() }));
  const fast = vc.byOptions.get(options);
  if (fast !== undefined) return fast;
  const key = `${options.records ?? 'size'}|${options.tapErrorCodes === true}|${options.select ? JSON.stringify(options.select) : '*'}`;
  let d = vc.byKey.get(key);
  if (d === undefined) {
    if (options.select) checkSelection(message, options.select);
    d = null;
    const layout = layoutFor(message, version);
    if (layout) {
      const ctx: Ctx = { version, flexible: inRange(layout.flexibleVersions, version), tap: options.tapErrorCodes === true };
      d = {
        context: context ?? `${message.name.replace(/(Request|Response)$/, '')} v${version} ${message.type}`,
        message,
        version,
        selective: options.select !== undefined,
        read: compileStruct(layout.fields, ctx, selectionOf(options.select), 0, true).read,
        records: options.records ?? 'size',
      };
    }
    vc.byKey.set(key, d);
  }
  vc.byOptions.set(options, d);
  return d;
}

/**
 * Runs a compiled decoder on `bytes[start, end)`; `frameEnd` (default `end`) is where the frame ends,
 * when the caller holds only a prefix of it. Throws BodyError for a malformed body.
 */
export function runDecoder(d: Decoder, bytes: Uint8Array, start: number, end: number, frameEnd = end): Decoded {
  if (!(start >= 0 && start <= end && end <= frameEnd && end <= bytes.length)) throw new RangeError(`bad range [${start}, ${end}) / ${frameEnd}`);
  if (bytes !== buf) {
    buf = bytes;
    dv = null;
  }
  pos = start;
  avail = end;
  limit = frameEnd;
  recordsMode = d.records;
  pending = null;
  if (tapped.length > 0) tapped = [];
  try {
    const value = d.read() as Struct;
    const errorCodes = tapped.length === 0 ? NO_CODES : tapped;
    return { value, end: pos, complete: true, stoppedAt: null, trailing: d.selective ? 0 : frameEnd - pos, errorCodes };
  } catch (e) {
    if (!(e instanceof Fail)) throw e;
    const path = e.path.join('.').replace(/\.\[/g, '[');
    const value = (pending as Struct | null) ?? (Object.create(null) as Struct);
    if (!e.incomplete) throw new BodyError(d.context, path, e.problem, e.offset, value, tapped.length === 0 ? NO_CODES : tapped);
    return { value, end: e.offset, complete: false, stoppedAt: path, trailing: 0, errorCodes: tapped.length === 0 ? NO_CODES : tapped };
  } finally {
    pending = null;
  }
}

/** Decodes a request or response body of an API; null when the schemas do not define that version. */
export function decodeBody(
  schemas: ProtocolSchemas,
  kind: 'request' | 'response',
  apiKey: number,
  version: number,
  bytes: Uint8Array,
  start: number,
  end: number,
  options?: DecodeOptions,
  frameEnd?: number,
): Decoded | null {
  const api = schemas.apis.get(apiKey);
  if (!api) return null;
  const d = compileDecoder(kind === 'request' ? api.request : api.response, version, options, `${api.name} v${version} ${kind}`);
  return d === null ? null : runDecoder(d, bytes, start, end, frameEnd);
}

export interface DecodedRequest {
  readonly apiKey: number;
  readonly apiVersion: number;
  /** Null when the schemas do not define this API or version: then neither header nor body is decoded. */
  readonly headerVersion: number | null;
  readonly header: Decoded | null;
  /** Null without a header version, or when the header did not end within the bytes given. */
  readonly body: Decoded | null;
}

/**
 * Decodes a whole request frame (`bytes[start, end)` after the size prefix; `frameEnd` its end when only a
 * prefix is held): the header by the version registry.ts's requestHeaderVersion gives for its API key and
 * version, then the body with `options`. Throws BodyError for a malformed header or body.
 */
export function decodeRequest(
  schemas: ProtocolSchemas,
  bytes: Uint8Array,
  start: number,
  end: number,
  options?: DecodeOptions,
  frameEnd = end,
): DecodedRequest {
  if (end - start < 4) {
    if (frameEnd - start < 4) throw new BodyError('request header', '', `needs 4 bytes, the frame has ${frameEnd - start}`, start);
    return { apiKey: -1, apiVersion: -1, headerVersion: null, header: null, body: null };
  }
  const apiKey = ((bytes[start]! << 24) | (bytes[start + 1]! << 16)) >> 16;
  const apiVersion = ((bytes[start + 2]! << 24) | (bytes[start + 3]! << 16)) >> 16;
  const hv = requestHeaderVersion(schemas, apiKey, apiVersion);
  if (hv === null) return { apiKey, apiVersion, headerVersion: null, header: null, body: null };
  const header = decodeRequestHeader(schemas, hv, bytes, start, end, frameEnd);
  if (header === null || !header.complete) return { apiKey, apiVersion, headerVersion: hv, header, body: null };
  const body = decodeBody(schemas, 'request', apiKey, apiVersion, bytes, header.end, end, options, frameEnd);
  return { apiKey, apiVersion, headerVersion: hv, header, body };
}

/** Decodes a request header (of the version registry.requestHeaderVersion gives); null for an undefined header version. */
export function decodeRequestHeader(schemas: ProtocolSchemas, headerVersion: number, bytes: Uint8Array, start: number, end: number, frameEnd?: number): Decoded | null {
  const d = compileDecoder(schemas.requestHeader, headerVersion, {}, `request header v${headerVersion}`);
  return d === null ? null : runDecoder(d, bytes, start, end, frameEnd);
}

export function decodeResponseHeader(schemas: ProtocolSchemas, headerVersion: number, bytes: Uint8Array, start: number, end: number, frameEnd?: number): Decoded | null {
  const d = compileDecoder(schemas.responseHeader, headerVersion, {}, `response header v${headerVersion}`);
  return d === null ? null : runDecoder(d, bytes, start, end, frameEnd);
}
