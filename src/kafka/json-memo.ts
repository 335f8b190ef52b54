/**
 * --bodies' JSON by the bytes of the body: a body's JSON is a function of the protocol, the API key,
 * version and direction, and the body's bytes (secrets.ts writeBodyJson), and Kafka traffic sends the
 * same bodies again and again: every ApiVersions response of a broker, each member's heartbeats and
 * their answers, metadata requests and responses while the cluster is still, empty fetches of an idle
 * consumer. A body whose bytes equal one written a moment ago gets that JSON back (no field-by-field
 * write, and no copy: JSON bytes are never written again once made), and a response read by the
 * error-code scan gets the scan's result back too (the scan reads the same bytes).
 *
 * Bodies are found by a hash of their length and of up to 48 of their bytes (the first, middle and
 * last 16), then compared whole. Bounded: MAX_ENTRIES bodies per API, version and direction, each at
 * most MAX_BODY bytes, and MAX_BYTES held in all (past either, that list or the whole memo starts
 * over). A kind of body that seldom repeats (produce requests, most fetches) stops being looked up
 * for a while, so it costs next to nothing.
 */
import type { Protocol } from './protocol.js';

/** Bodies kept per API, version and direction (the members of the groups a broker coordinates, say). */
const MAX_ENTRIES = 4096;
/** Larger bodies are not kept (big ones seldom repeat to the byte, and comparing them costs more). */
const MAX_BODY = 16 * 1024;
/** Bodies' and their JSON's bytes held in all. */
const MAX_BYTES = 4 * 1024 * 1024;
/** Looked up this many times with fewer than one hit in HIT_SHARE, a kind of body is left alone for SKIP bodies. */
const TRIAL = 64;
const HIT_SHARE = 8;
const SKIP = 4096;
/** Bodies up to this size are compared in a loop: Buffer#compare's checks and call cost more (240 ns a call here). */
const LOOP_COMPARE = 128;
/** Bytes hashed at each of the body's start, middle and end. */
const SAMPLE = 16;

/** What was made of one body. */
export interface MemoEntry {
  readonly body: Buffer;
  readonly json: Uint8Array;
  /** A response the error-code scan read: its top-level ErrorCode and every code it carries; else `codes` is null. */
  readonly errorCode: number | null;
  readonly codes: readonly number[] | null;
}

class Kind {
  readonly entries = new Map<number, MemoEntry>();
  bytes = 0;
  tries = 0;
  hits = 0;
  /** Bodies still to pass without a look-up. */
  skip = 0;
}

/** FNV-1a over the length and the sampled bytes: where to look, not proof (the bytes are compared). */
function sampleHash(buf: Buffer, start: number, n: number): number {
  let h = Math.imul(0x811c9dc5 ^ n, 0x01000193);
  if (n <= 3 * SAMPLE) {
    for (let i = start; i < start + n; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    return h & 0x3fffffff; // a small integer key (V8 boxes larger ones)
  }
  const mid = start + ((n - SAMPLE) >>> 1);
  const last = start + n - SAMPLE;
  for (let i = 0; i < SAMPLE; i++) h = Math.imul(h ^ buf[start + i]!, 0x01000193);
  for (let i = 0; i < SAMPLE; i++) h = Math.imul(h ^ buf[mid + i]!, 0x01000193);
  for (let i = 0; i < SAMPLE; i++) h = Math.imul(h ^ buf[last + i]!, 0x01000193);
  return h & 0x3fffffff;
}

/** Is buf[start, start + n) the bytes of `body` (of length n)? */
function same(body: Buffer, buf: Buffer, start: number, n: number): boolean {
  if (body.length !== n) return false;
  if (n > LOOP_COMPARE) return body.compare(buf, start, start + n) === 0;
  for (let i = 0; i < n; i++) if (body[i] !== buf[start + i]) return false;
  return true;
}

const kindId = (response: boolean, key: number, version: number): number => (key * 0x10000 + version) * 2 + (response ? 1 : 0);

export class BodyJsonMemo {
  private kinds = new Map<number, Kind>();
  private bytes = 0;
  private protocol: Protocol | null = null;
  /** The kind and hash of the body {@link find} last looked up and missed, for {@link add}. */
  private missedKind = -1;
  private hash = 0;

  /**
   * What was kept for a body equal to buf[start, end) of this API key, version and direction, or
   * null: then the caller makes the JSON and gives it to {@link add}.
   */
  find(p: Protocol, response: boolean, key: number, version: number, buf: Buffer, start: number, end: number): MemoEntry | null {
    if (p !== this.protocol) this.clear(p);
    this.missedKind = -1;
    const n = end - start;
    if (n > MAX_BODY) return null;
    const id = kindId(response, key, version);
    let kind = this.kinds.get(id);
    // One per version the schemas define: the Kafka stage writes JSON only for those (readsBody).
    if (kind === undefined) this.kinds.set(id, (kind = new Kind()));
    if (kind.skip > 0) {
      kind.skip--;
      return null;
    }
    kind.tries++;
    const hash = sampleHash(buf, start, n);
    const e = kind.entries.get(hash);
    if (e !== undefined && same(e.body, buf, start, n)) {
      kind.hits++;
      return e;
    }
    this.missedKind = id;
    this.hash = hash;
    if (kind.tries >= TRIAL) {
      if (kind.hits * HIT_SHARE < kind.tries) kind.skip = SKIP;
      kind.tries = 0;
      kind.hits = 0;
    }
    return null;
  }

  /**
   * Keeps a copy of `json` as the JSON of buf[start, end) (after {@link find} missed it), with
   * the error-code scan's result for a response it read (`codes` null otherwise). A copy: the JSON the
   * caller wrote is a view of a large slab, which a kept view would hold in memory.
   */
  add(response: boolean, key: number, version: number, buf: Buffer, start: number, end: number, json: Uint8Array, errorCode: number | null = null, codes: readonly number[] | null = null): void {
    const n = end - start;
    if (n > MAX_BODY) return;
    const id = kindId(response, key, version);
    let kind = this.kinds.get(id);
    if (kind === undefined || kind.skip > 0) return;
    const size = n + json.length;
    if (this.bytes + size > MAX_BYTES) {
      this.clear(this.protocol);
      this.kinds.set(id, (kind = new Kind()));
    }
    // The hash find() made of this body when it missed it, else made again.
    const hash = this.missedKind === id ? this.hash : sampleHash(buf, start, n);
    this.missedKind = -1;
    const entries = kind.entries;
    const old = entries.get(hash);
    if (old !== undefined) {
      // Another body with the same hash: the newer one stays.
      kind.bytes -= old.body.length + old.json.length;
      this.bytes -= old.body.length + old.json.length;
    } else if (entries.size >= MAX_ENTRIES) {
      this.bytes -= kind.bytes;
      kind.bytes = 0;
      entries.clear();
    }
    // Small buffers come from Node's shared pool: no allocation of their own.
    const body = Buffer.allocUnsafe(n);
    buf.copy(body, 0, start, end);
    const text = Buffer.allocUnsafe(json.length);
    text.set(json);
    entries.set(hash, { body, json: new Uint8Array(text.buffer, text.byteOffset, json.length), errorCode, codes });
    kind.bytes += size;
    this.bytes += size;
  }

  private clear(p: Protocol | null): void {
    this.kinds = new Map();
    this.bytes = 0;
    this.protocol = p;
  }
}
