/**
 * The error-code scan: what `kcid analyze` reads of most responses is every int16 ErrorCode they carry
 * (an error count counts them all: top level, per topic, partition, group), and nothing else. The
 * interpreter (interpreter.ts) can do that while skipping, but it walks the schema as a tree of
 * closures and builds the struct around the top-level code; the scan runs one flat program instead,
 * compiled once per message version: a loop over an Int32Array of ops (skip n bytes, skip a string,
 * read an ErrorCode, enter an array, ...), with no value built and no call per field.
 *
 * It is resumable: bytes may come in pieces (`feed`), and a piece may end anywhere, inside a length or
 * inside a records field being skipped. So a response larger than the prefix the framer keeps (a Fetch
 * response of many partitions) is still scanned to its end, as its segments go by, with nothing copied
 * but the few bytes of a field that a segment boundary cuts.
 *
 * The scan is as strict as the interpreter over the fields it reads (the same lengths, counts, nulls,
 * varints and tag checks), so a body the scan accepts is one the interpreter accepts, with the same
 * codes. It does not say why a body is malformed: a caller that needs that asks the interpreter.
 */
import { FIXED_SIZE, holdsErrorCode, inRange, layoutFor, type FieldSchema, type MessageSchema } from './model.js';
import { MAX_TAPPED } from './interpreter.js';

// Ops: each is its code, then its operands.
/** n: skip n bytes (fixed-size fields, merged). */
const SKIP = 0;
/** An int16 ErrorCode; operand 1 when it is the top-level one. */
const ERROR = 1;
/** A string (int16 length) or compact string (uvarint length + 1); operand: nullable. */
const STRING = 2;
const COMPACT_STRING = 3;
/** bytes or records: int32 length, or compact (uvarint length + 1); operand: nullable. */
const BYTES = 4;
const COMPACT_BYTES = 5;
const VARINT = 6;
const VARLONG = 7;
/**
 * An array: int32 count, or compact (uvarint count + 1); operands: nullable, the element's fixed size
 * (-1: its ops follow, then the body's length in ints).
 */
const ARRAY = 8;
const COMPACT_ARRAY = 9;
/** A nullable struct: int8 -1 for null, else its ops follow; operand: the body's length. */
const NULLABLE_STRUCT = 10;
/**
 * A struct's tagged fields (none of which holds an ErrorCode): skipped, with the interpreter's checks;
 * operands: how many tags the struct defines, then each. A defined tag's value is not checked here.
 */
const TAGS = 11;

export interface ErrorScanPlan {
  readonly ops: Int32Array;
}

class Unsupported extends Error {}

const plans = new WeakMap<MessageSchema, Map<number, ErrorScanPlan | null>>();

/**
 * The scan of a message version, or null when it has none (the version is not defined) or the scan
 * cannot do it: a tagged field that holds an ErrorCode (then the interpreter reads it). The program
 * stops after the last top-level field that holds an ErrorCode, as the interpreter's selective tap does.
 */
export function errorScanPlan(m: MessageSchema, version: number): ErrorScanPlan | null {
  let byVersion = plans.get(m);
  if (byVersion === undefined) plans.set(m, (byVersion = new Map()));
  let plan = byVersion.get(version);
  if (plan !== undefined) return plan;
  plan = null;
  const layout = layoutFor(m, version);
  if (layout !== null) {
    try {
      const flexible = inRange(layout.flexibleVersions, version);
      const ops: number[] = [];
      const fields = plainFields(layout.fields, version, flexible);
      let last = -1;
      for (let i = 0; i < fields.length; i++) if (holdsErrorCode(fields[i]!, version)) last = i;
      if (taggedFields(layout.fields, version, flexible).some((f) => holdsErrorCode(f, version))) throw new Unsupported();
      for (let i = 0; i <= last; i++) compileField(fields[i]!, version, flexible, ops, true, 0);
      plan = { ops: Int32Array.from(merge(ops)) };
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
    }
  }
  byVersion.set(version, plan);
  return plan;
}

function plainFields(fields: readonly FieldSchema[], version: number, flexible: boolean): FieldSchema[] {
  return fields.filter((f) => inRange(f.versions, version) && !(flexible && f.tag !== null && inRange(f.taggedVersions, version)));
}

function taggedFields(fields: readonly FieldSchema[], version: number, flexible: boolean): FieldSchema[] {
  return flexible ? fields.filter((f) => inRange(f.versions, version) && f.tag !== null && inRange(f.taggedVersions, version)) : [];
}

function compileStruct(fields: readonly FieldSchema[], version: number, flexible: boolean, ops: number[], depth: number): void {
  if (depth > 32) throw new Unsupported();
  for (const f of plainFields(fields, version, flexible)) compileField(f, version, flexible, ops, false, depth);
  if (flexible) {
    const tagged = taggedFields(fields, version, flexible);
    if (tagged.some((f) => holdsErrorCode(f, version))) throw new Unsupported();
    ops.push(TAGS, tagged.length, ...tagged.map((f) => f.tag!));
  }
}

function compileField(f: FieldSchema, version: number, flexible: boolean, ops: number[], top: boolean, depth: number): void {
  const compact = f.flexibleVersions === undefined ? flexible : inRange(f.flexibleVersions, version);
  const nullable = inRange(f.nullableVersions, version) ? 1 : 0;
  if (f.isArray) {
    const body: number[] = [];
    if (f.struct !== null) compileStruct(f.struct.fields, version, flexible, body, depth + 1);
    else compilePrimitive(f, compact, nullable, body, false);
    const merged = merge(body);
    const fixed = merged.length === 2 && merged[0] === SKIP ? merged[1]! : -1;
    ops.push(compact ? COMPACT_ARRAY : ARRAY, nullable, fixed);
    if (fixed < 0) ops.push(merged.length, ...merged);
    return;
  }
  if (f.struct !== null) {
    const body: number[] = [];
    compileStruct(f.struct.fields, version, flexible, body, depth + 1);
    if (nullable === 1) {
      const merged = merge(body);
      ops.push(NULLABLE_STRUCT, merged.length, ...merged);
    } else ops.push(...body);
    return;
  }
  compilePrimitive(f, compact, nullable, ops, top);
}

function compilePrimitive(f: FieldSchema, compact: boolean, nullable: number, ops: number[], top: boolean): void {
  const p = f.primitive!;
  if (p === 'int16' && f.name === 'ErrorCode' && !f.isArray) {
    ops.push(ERROR, top ? 1 : 0);
    return;
  }
  const size = FIXED_SIZE[p];
  if (size !== undefined) ops.push(SKIP, size);
  else if (p === 'varint') ops.push(VARINT);
  else if (p === 'varlong') ops.push(VARLONG);
  else if (p === 'string') ops.push(compact ? COMPACT_STRING : STRING, nullable);
  else ops.push(compact ? COMPACT_BYTES : BYTES, nullable);
}

/** Adjacent SKIPs as one; bodies (already merged) are copied whole, so their lengths hold. */
function merge(ops: readonly number[]): number[] {
  const out: number[] = [];
  let lastSkip = -1;
  for (let i = 0; i < ops.length; ) {
    const width = opWidth(ops, i);
    if (ops[i] === SKIP && lastSkip >= 0) out[lastSkip + 1]! += ops[i + 1]!;
    else {
      lastSkip = ops[i] === SKIP ? out.length : -1;
      for (let k = 0; k < width; k++) out.push(ops[i + k]!);
    }
    i += width;
  }
  return out;
}

/** Ints an op takes, its body included. */
function opWidth(ops: readonly number[], i: number): number {
  switch (ops[i]) {
    case VARINT:
    case VARLONG:
      return 1;
    case TAGS:
      return 2 + ops[i + 1]!;
    case ARRAY:
    case COMPACT_ARRAY:
      return ops[i + 2]! >= 0 ? 3 : 4 + ops[i + 3]!;
    case NULLABLE_STRUCT:
      return 2 + ops[i + 1]!;
    default:
      return 2;
  }
}

// ---------------------------------------------------------------------------------------------------
// Running

/** Scanning: more bytes are wanted. */
export const SCANNING = 0;
/** The program ran to its end: every ErrorCode was read. */
export const SCANNED = 1;
/** The bytes break a rule the interpreter checks: it says which (interpreter.ts). */
export const MALFORMED = 2;
/** A tagged field the struct defines came: the scan does not check its value, the interpreter does. */
export const UNCHECKED = 3;
export type ScanStatus = typeof SCANNING | typeof SCANNED | typeof MALFORMED | typeof UNCHECKED;

/** Bytes the longest read of one op takes (a varlong): less than this left, the op may wait for more. */
const MAX_READ = 10;
const NO_TAG = -1;
/** Arrays of structs open at once at most (the compiler refuses schemas nested deeper than 32). */
const MAX_DEPTH = 40;

/**
 * A response's scan, fed its body's bytes in order, after {@link reset}: `limit` is the body's size (the
 * frame after its header): as in the interpreter, a count or length past it is malformed. After SCANNED,
 * MALFORMED or UNCHECKED, feeding does nothing. One scan serves response after response.
 */
export class ErrorScan {
  status: ScanStatus = SCANNING;
  /** The top-level ErrorCode, when the version has one and it was read. */
  topErrorCode: number | null = null;
  /** Every non-zero ErrorCode read, in wire order (at most MAX_TAPPED, as the interpreter's tap). */
  readonly codes: number[] = [];
  /** Body bytes consumed (a skip may run ahead of the bytes fed: skipLeft). */
  private at = 0;
  private pc = 0;
  /** Open arrays of structs: their body's start and end in `ops`, and the elements left (sp of them). */
  private readonly starts = new Int32Array(MAX_DEPTH);
  private readonly ends = new Int32Array(MAX_DEPTH);
  private readonly left = new Int32Array(MAX_DEPTH);
  private sp = 0;
  /** A tagged-field section in progress: tags left to read, the last tag read. */
  private tagsLeft = 0;
  private lastTag = NO_TAG;
  private tagsPc = 0;
  /** Bytes of the stream a skip has passed over but not yet been fed. */
  private skipLeft = 0;
  /** The bytes of an op cut by the end of a piece, completed from the next. */
  private readonly carry = new Uint8Array(3 * MAX_READ);
  private carryLen = 0;
  private ops: Int32Array = new Int32Array(0);
  private limit = 0;

  reset(plan: ErrorScanPlan, limit: number): this {
    this.ops = plan.ops;
    this.limit = limit;
    this.status = SCANNING;
    this.topErrorCode = null;
    if (this.codes.length > 0) this.codes.length = 0;
    this.at = 0;
    this.pc = 0;
    this.sp = 0;
    this.tagsLeft = 0;
    this.lastTag = NO_TAG;
    this.skipLeft = 0;
    this.carryLen = 0;
    return this;
  }

  /** The next `len` bytes of the body, at buf[off]. Returns the status. */
  feed(buf: Uint8Array, off: number, len: number): ScanStatus {
    if (this.status !== SCANNING) return this.status;
    if (this.skipLeft > 0) {
      const n = Math.min(this.skipLeft, len);
      this.skipLeft -= n;
      off += n;
      len -= n;
      if (this.skipLeft > 0) return this.status;
    }
    if (this.carryLen > 0) {
      // Complete the cut op in the carry with the first bytes of this piece, run it there, then go on here.
      const had = this.carryLen;
      const take = Math.min(len, this.carry.length - had);
      this.carry.set(buf.subarray(off, off + take), had);
      const startAt = this.at;
      const p = this.run(this.carry, 0, had + take);
      const used = p - had;
      if (this.status !== SCANNING) return this.status;
      if (used < 0) {
        // Still short of a whole op: the piece was smaller than what the op needs.
        this.carryLen = had + take;
        this.at = startAt;
        return this.status;
      }
      this.carryLen = 0;
      if (used > len) {
        this.skipLeft = used - len;
        return this.status;
      }
      off += used;
      len -= used;
    }
    const end = off + len;
    const p = this.run(buf, off, end);
    if (this.status !== SCANNING) return this.status;
    if (p > end) this.skipLeft = p - end;
    else if (p < end) {
      this.carry.set(buf.subarray(p, end), 0);
      this.carryLen = end - p;
    }
    return this.status;
  }

  /** The body ended (every byte fed): an unfinished scan is malformed. */
  finish(): ScanStatus {
    if (this.status === SCANNING) this.run(this.carry, 0, this.carryLen, true);
    if (this.status === SCANNING) this.status = MALFORMED;
    return this.status;
  }

  /**
   * Runs ops on buf[p, e) from the current op; returns where it stopped: before an op whose bytes are not
   * all there (p <= e), or past e when a skip runs ahead (the bytes in between are to be skipped).
   * The state lives in locals while it runs, and goes back to the fields when it stops.
   */
  private run(buf: Uint8Array, p: number, e: number, last = false): number {
    const ops = this.ops;
    const n0 = ops.length;
    const starts = this.starts;
    const ends = this.ends;
    const left = this.left;
    let sp = this.sp;
    let pc = this.pc;
    // p - origin is the body position of buf[p]; room is the body's bytes from there.
    const origin = p - this.at;
    const end = origin + this.limit;
    let status: ScanStatus = SCANNING;
    let tagsLeft = this.tagsLeft;
    let lastTag = this.lastTag;
    run: for (;;) {
      if (tagsLeft > 0) {
        // Inside a tagged-field section: a tag, its size, then its bytes (skipped).
        if (e - p < 2 * MAX_READ && !varintsThere(buf, p, e, 2)) break;
        const tag = uvarintAt(buf, p);
        if (tag < 0) {
          status = MALFORMED;
          break;
        }
        const size = uvarintAt(buf, next);
        if (size < 0 || tag <= lastTag || next + size > end) {
          status = MALFORMED;
          break;
        }
        if (definesTag(ops, this.tagsPc, tag)) {
          status = UNCHECKED;
          break;
        }
        p = next + size;
        lastTag = tag;
        tagsLeft--;
        if (p > e) break;
        continue;
      }
      while (sp > 0 && pc === ends[sp - 1]) {
        if (--left[sp - 1]! > 0) pc = starts[sp - 1]!;
        else sp--;
      }
      if (pc === n0) {
        status = SCANNED;
        break;
      }
      const op = ops[pc]!;
      if (op === SKIP) {
        const n = ops[pc + 1]!;
        if (p + n > end) {
          status = MALFORMED;
          break;
        }
        p += n;
        pc += 2;
        if (p > e) break;
        continue;
      }
      // Every other op reads first: wait for its bytes.
      if (e - p < MAX_READ && !opThere(ops, pc, buf, p, e)) break;
      switch (op) {
        case ERROR: {
          if (p + 2 > end) {
            status = MALFORMED;
            break run;
          }
          const v = (((buf[p]! << 8) | buf[p + 1]!) << 16) >> 16;
          p += 2;
          if (ops[pc + 1] === 1) this.topErrorCode = v;
          if (v !== 0 && this.codes.length < MAX_TAPPED) this.codes.push(v);
          pc += 2;
          break;
        }
        case STRING:
        case BYTES:
        case COMPACT_STRING:
        case COMPACT_BYTES: {
          const n = lengthAt(buf, p, end, op === STRING ? 2 : op === BYTES ? 4 : 0);
          if (n === BAD_LENGTH) {
            status = MALFORMED;
            break run;
          }
          p = next;
          const nullable = ops[pc + 1] === 1;
          pc += 2;
          if (n < 0) {
            if (n === -1 && nullable) break;
            status = MALFORMED;
            break run;
          }
          if (((op === STRING || op === COMPACT_STRING) && n > 0x7fff) || p + n > end) {
            status = MALFORMED;
            break run;
          }
          p += n;
          if (p > e) break run;
          break;
        }
        case VARINT:
        case VARLONG: {
          const max = op === VARINT ? 5 : 10;
          let k = 0;
          while (k < max && p + k < e && (buf[p + k]! & 0x80) !== 0) k++;
          if (k === max || p + k >= e || p + k + 1 > end) {
            status = MALFORMED;
            break run;
          }
          p += k + 1;
          pc += 1;
          break;
        }
        case ARRAY:
        case COMPACT_ARRAY: {
          const n = lengthAt(buf, p, end, op === ARRAY ? 4 : 0);
          if (n === BAD_LENGTH) {
            status = MALFORMED;
            break run;
          }
          p = next;
          const fixed = ops[pc + 2]!;
          const after = fixed >= 0 ? pc + 3 : pc + 4 + ops[pc + 3]!;
          if (n < 0) {
            if (n === -1 && ops[pc + 1] === 1) {
              pc = after;
              break;
            }
            status = MALFORMED;
            break run;
          }
          // Kafka's check: never more elements than bytes left in the frame.
          if (n > end - p) {
            status = MALFORMED;
            break run;
          }
          if (fixed >= 0) {
            if (p + n * fixed > end) {
              status = MALFORMED;
              break run;
            }
            p += n * fixed;
            pc = after;
            if (p > e) break run;
          } else if (n === 0) pc = after;
          else {
            if (sp === starts.length) {
              status = UNCHECKED; // deeper than any schema nests (compile refuses more than 32 levels)
              break run;
            }
            starts[sp] = pc + 4;
            ends[sp] = after;
            left[sp] = n;
            sp++;
            pc += 4;
          }
          break;
        }
        case NULLABLE_STRUCT: {
          if (p + 1 > end) {
            status = MALFORMED;
            break run;
          }
          const isNull = buf[p]! >= 0x80;
          p += 1;
          pc = isNull ? pc + 2 + ops[pc + 1]! : pc + 2;
          break;
        }
        case TAGS: {
          const n = uvarintAt(buf, p);
          if (n < 0 || n > end - next) {
            status = MALFORMED;
            break run;
          }
          p = next;
          tagsLeft = n;
          lastTag = NO_TAG;
          this.tagsPc = pc;
          pc += 2 + ops[pc + 1]!;
          break;
        }
        default:
          throw new Error(`bad scan op ${op}`);
      }
    }
    if (status === SCANNING && last && p <= e) status = MALFORMED;
    this.status = status;
    this.sp = sp;
    this.pc = pc;
    this.tagsLeft = tagsLeft;
    this.lastTag = lastTag;
    this.at = p - origin;
    return p;
  }
}

/** Where the last uvarintAt or lengthAt ended. */
let next = 0;

/** What lengthAt gives for a length that runs past the body or a varint longer than 5 bytes. */
const BAD_LENGTH = -0x80000001;

/**
 * A length or count on the wire at buf[p] (KIP-482): classic, an int16 (`width` 2: strings) or an
 * int32 (4: bytes, records, arrays); compact (0), an unsigned varint of length + 1. -1 is null. Sets
 * `next` past it.
 */
function lengthAt(buf: Uint8Array, p: number, end: number, width: 0 | 2 | 4): number {
  if (width === 0) {
    const v = uvarintAt(buf, p);
    return v < 0 || next > end ? BAD_LENGTH : v - 1;
  }
  if (p + width > end) return BAD_LENGTH;
  next = p + width;
  if (width === 2) return (((buf[p]! << 8) | buf[p + 1]!) << 16) >> 16;
  return (buf[p]! << 24) | (buf[p + 1]! << 16) | (buf[p + 2]! << 8) | buf[p + 3]!;
}

/** An unsigned varint of at most 5 bytes at buf[p] (Kafka's readUnsignedVarint), or -1 when longer; sets `next`. */
function uvarintAt(buf: Uint8Array, p: number): number {
  let v = 0;
  for (let shift = 0; shift <= 28; shift += 7) {
    const b = buf[p++]!;
    v |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      next = p;
      return v >>> 0;
    }
  }
  return -1;
}

/** Are `count` whole varints (or a varint that is too long: a failure to report) at buf[p, e)? */
function varintsThere(buf: Uint8Array, p: number, e: number, count: number): boolean {
  for (let i = 0; i < count; i++) {
    let k = 0;
    while (p + k < e && (buf[p + k]! & 0x80) !== 0 && k < 5) k++;
    if (k === 5) return true;
    if (p + k >= e) return false;
    p += k + 1;
  }
  return true;
}

/** Are the bytes op `pc` reads first all at buf[p, e)? */
function opThere(ops: Int32Array, pc: number, buf: Uint8Array, p: number, e: number): boolean {
  switch (ops[pc]) {
    case ERROR:
    case STRING:
      return e - p >= 2;
    case BYTES:
    case ARRAY:
      return e - p >= 4;
    case NULLABLE_STRUCT:
      return e - p >= 1;
    case VARLONG: {
      let k = 0;
      while (p + k < e && (buf[p + k]! & 0x80) !== 0 && k < 10) k++;
      return k === 10 || p + k < e;
    }
    default:
      // COMPACT_STRING, COMPACT_BYTES, COMPACT_ARRAY, VARINT, TAGS: one uvarint.
      return varintsThere(buf, p, e, 1);
  }
}

function definesTag(ops: Int32Array, pc: number, tag: number): boolean {
  const n = ops[pc + 1]!;
  for (let i = 0; i < n; i++) if (ops[pc + 2 + i] === tag) return true;
  return false;
}
