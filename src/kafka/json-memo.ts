/**
 * --bodies' JSON by the bytes of the body: a body's JSON is a function of the protocol, the API key,
 * version and direction, and the body's bytes (secrets.ts writeBodyJson), and Kafka traffic sends the
 * same bodies again and again: every ApiVersions response of a broker, heartbeats and their answers,
 * metadata requests and responses while the cluster is still, empty fetches of an idle consumer. A body
 * whose bytes equal one written a moment ago gets that JSON back (one native compare instead of a
 * field-by-field write, and no copy: JSON bytes are never written again once made).
 *
 * Bounded: MAX_ENTRIES bodies per API, version and direction, each at most MAX_BODY bytes, and
 * MAX_BYTES held in all (the cache starts over past that). A kind of body that seldom repeats
 * (produce requests, most fetches) stops being looked up for a while, so it costs next to nothing.
 */
import type { Protocol } from './protocol.js';

/** Bodies kept per API, version and direction (a broker's, a member's: a few at a time). */
const MAX_ENTRIES = 8;
/** Larger bodies are not kept (big ones seldom repeat to the byte, and comparing them costs more). */
const MAX_BODY = 16 * 1024;
/** Bodies' and their JSON's bytes held in all. */
const MAX_BYTES = 4 * 1024 * 1024;
/** Looked up this many times with fewer than one hit in HIT_SHARE, a kind of body is left alone for SKIP bodies. */
const TRIAL = 64;
const HIT_SHARE = 8;
const SKIP = 4096;

interface Entry {
  body: Buffer;
  json: Uint8Array;
}

class Kind {
  readonly entries: Entry[] = [];
  /** Where the next body goes once the list is full (the oldest). */
  next = 0;
  /** The entry that matched last. */
  last = 0;
  tries = 0;
  hits = 0;
  /** Bodies still to pass without a look-up. */
  skip = 0;
}

/** Bodies up to this size are compared in a loop: Buffer#compare's checks and call cost more. */
const LOOP_COMPARE = 128;

/** Is buf[start, start + n) the bytes of `body` (of length n)? */
function same(body: Buffer, buf: Buffer, start: number, n: number): boolean {
  if (n > LOOP_COMPARE) return body.compare(buf, start, start + n) === 0;
  for (let i = 0; i < n; i++) if (body[i] !== buf[start + i]) return false;
  return true;
}

export class BodyJsonMemo {
  private kinds = new Map<number, Kind>();
  private bytes = 0;
  private protocol: Protocol | null = null;

  /**
   * The JSON kept for a body equal to buf[start, end) of this API key, version and direction, or
   * null: then the caller writes the JSON and gives it to {@link add}.
   */
  find(p: Protocol, response: boolean, key: number, version: number, buf: Buffer, start: number, end: number): Uint8Array | null {
    if (p !== this.protocol) this.clear(p);
    const n = end - start;
    if (n > MAX_BODY) return null;
    const id = (key * 0x10000 + version) * 2 + (response ? 1 : 0);
    let kind = this.kinds.get(id);
    if (kind === undefined) this.kinds.set(id, (kind = new Kind()));
    if (kind.skip > 0) {
      kind.skip--;
      return null;
    }
    kind.tries++;
    const entries = kind.entries;
    // The body that matched last first: a broker's answer, a member's heartbeat, come in runs.
    const count = entries.length;
    for (let j = 0, i = kind.last; j < count; j++, i = i + 1 === count ? 0 : i + 1) {
      const e = entries[i]!;
      if (e.body.length === n && same(e.body, buf, start, n)) {
        kind.hits++;
        kind.last = i;
        return e.json;
      }
    }
    if (kind.tries >= TRIAL) {
      if (kind.hits * HIT_SHARE < kind.tries) kind.skip = SKIP;
      kind.tries = 0;
      kind.hits = 0;
    }
    return null;
  }

  /**
   * Keeps a copy of `json` as the JSON of buf[start, end) (after {@link find} missed it). A copy: the
   * JSON the caller wrote is a view of a large slab, which a kept view would hold in memory.
   */
  add(response: boolean, key: number, version: number, buf: Buffer, start: number, end: number, json: Uint8Array): void {
    const n = end - start;
    if (n > MAX_BODY) return;
    const id = (key * 0x10000 + version) * 2 + (response ? 1 : 0);
    let kind = this.kinds.get(id);
    if (kind === undefined || kind.skip > 0) return;
    if (this.bytes + n + json.length > MAX_BYTES) {
      this.clear(this.protocol);
      this.kinds.set(id, (kind = new Kind()));
    }
    // Small buffers come from Node's shared pool: no allocation of their own.
    const body = Buffer.allocUnsafe(n);
    buf.copy(body, 0, start, end);
    const text = Buffer.allocUnsafe(json.length);
    text.set(json);
    const e: Entry = { body, json: new Uint8Array(text.buffer, text.byteOffset, json.length) };
    const entries = kind.entries;
    if (entries.length < MAX_ENTRIES) entries.push(e);
    else {
      const old = entries[kind.next]!;
      this.bytes -= old.body.length + old.json.length;
      entries[kind.next] = e;
      kind.next = (kind.next + 1) % MAX_ENTRIES;
    }
    this.bytes += n + json.length;
  }

  private clear(p: Protocol | null): void {
    this.kinds = new Map();
    this.bytes = 0;
    this.protocol = p;
  }
}
