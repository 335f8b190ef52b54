/**
 * The pieces of `kcid show`'s walk that the record batch walk (records.ts) shares with the schema
 * walk (walk.ts): the node a field becomes, the bounded cursor both read with, and hex text.
 */
import type { FieldSchema } from '../kafka/schema/model.js';

export type ShowValue = string | number | boolean | null;

export interface ShowNode {
  /** "Topics[0].Partitions[1].ErrorCode"; "header.ClientId"; "size". */
  readonly path: string;
  /** From the message's first byte (its size prefix). */
  readonly offset: number;
  length: number;
  /** The schema's type ("int16", "[]TopicData", "string"), or what the bytes are ("tag", "raw", "batch"). */
  readonly type: string;
  value: ShowValue;
  children?: ShowNode[];
  /** The bytes are never shown (masked in the hex dump): a secret, or a record's payload without --payload. */
  hidden?: 'secret' | 'payload';
  /** A UUID's RFC 4122 text beside Kafka's base64 value. */
  hex?: string;
  /** What else there is to say: a CRC's check, a problem, a decoded attribute. */
  note?: string;
}

/** The walk stopped: `at` is where the field it was reading starts; `problem` the interpreter's words. */
export class WalkFail {
  constructor(
    readonly problem: string,
    /** Where the interpreter's cursor was (BodyError.offset), from the message's first byte. */
    readonly offset: number,
    /** The start of the field being read. */
    readonly at: number,
    /** The bytes ran into a gap of the capture, not past the frame. */
    readonly gap: boolean,
    readonly path: string,
  ) {}
}

export interface WalkOptions {
  /** Show record keys and values (else their lengths only, bytes masked). */
  readonly payload?: boolean;
  /**
   * A known tagged field whose value does not fit its size is kept as raw bytes and the walk goes
   * on (request headers: kcid's header rules judge them, Kafka skips them); else it ends the walk as
   * the interpreter's error does.
   */
  readonly lenientTags?: boolean;
  /** Words for a tagged field kept raw by lenientTags ("tag 0 (ClientInstanceId) has 8 bytes, expected 16"). */
  readonly tagProblem?: (tag: number, name: string, size: number, f: FieldSchema) => string;
}

/** Elements of one array listed at most; the rest are one node (walked, so their bytes are still checked). */
export const MAX_ELEMENTS_LISTED = 1000;
/** Nodes of one message at most: past this, arrays list no element (their ranges stay exact). */
export const MAX_NODES = 200_000;

export class Cursor {
  pos: number;
  nodes = 0;
  /** While a Fail unwinds: the path, innermost last. */
  constructor(
    readonly buf: Uint8Array,
    start: number,
    /** The first byte the capture misses (a gap), or the frame's end. */
    public avail: number,
    /** The frame's end. */
    public limit: number,
    /** Offsets are given from here (the size prefix's first byte). */
    readonly base: number,
    readonly opts: WalkOptions,
  ) {
    this.pos = start;
  }

  rel(p: number): number {
    return p - this.base;
  }

  fail(problem: string, at: number, path: string): never {
    throw new WalkFail(problem, this.rel(this.pos), this.rel(at), false, path);
  }

  need(n: number, at: number, path: string): void {
    if (this.pos + n > this.avail) {
      if (this.pos + n > this.limit) this.fail(`needs ${n} bytes, the frame has ${this.limit - this.pos} left`, at, path);
      throw new WalkFail(`needs ${n} bytes the capture misses (a gap from offset ${this.rel(this.avail)})`, this.rel(this.pos), this.rel(at), true, path);
    }
  }

  needLength(n: number, at: number, path: string): void {
    if (this.pos + n > this.avail) {
      if (this.pos + n > this.limit) this.fail(`length ${n} overruns the frame by ${this.pos + n - this.limit} bytes`, at, path);
      throw new WalkFail(`length ${n} reaches bytes the capture misses (a gap from offset ${this.rel(this.avail)})`, this.rel(this.pos), this.rel(at), true, path);
    }
  }

  u8(): number {
    return this.buf[this.pos++]!;
  }

  uvarint(at: number, path: string): number {
    let v = 0;
    for (let shift = 0; shift <= 28; shift += 7) {
      this.need(1, at, path);
      const b = this.buf[this.pos++]!;
      v |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v >>> 0;
    }
    return this.fail('varint is longer than 5 bytes', at, path);
  }

  uvarlong(at: number, path: string): bigint {
    let v = 0n;
    for (let shift = 0n; shift <= 63n; shift += 7n) {
      this.need(1, at, path);
      const b = this.buf[this.pos++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
    }
    return this.fail('varlong is longer than 10 bytes', at, path);
  }

  dv(): DataView {
    return new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  leaf(out: ShowNode[], path: string, at: number, type: string, value: ShowValue, extra?: Partial<ShowNode>): ShowNode {
    const n: ShowNode = { path, offset: this.rel(at), length: this.pos - at, type, value, ...extra };
    out.push(n);
    this.nodes++;
    return n;
  }

  /** A container whose length is set when it ends (a failed walk sets it where it stopped). */
  open(out: ShowNode[], path: string, at: number, type: string, value: ShowValue): ShowNode {
    const n: ShowNode = { path, offset: this.rel(at), length: -1, type, value, children: [] };
    out.push(n);
    this.nodes++;
    return n;
  }

  close(n: ShowNode): void {
    n.length = this.rel(this.pos) - n.offset;
  }
}

export function hexOf(buf: Uint8Array, from: number, to: number, max = 64): string {
  const s = Buffer.from(buf.buffer, buf.byteOffset + from, Math.min(to - from, max)).toString('hex');
  return to - from > max ? `${s}…` : s;
}
