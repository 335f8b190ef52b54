/**
 * Traffic over time, for the formats that draw it (`--format html`, and `summary-json` so that
 * `kcid merge --format html` can): requests and error responses per broker in time buckets,
 * latency per API, and requests as individual ticks. Bounded whatever the capture's size: at most
 * MAX_BUCKETS buckets per broker (the bucket widens as the capture grows longer), one histogram
 * per API, MAX_TICKS ticks per input (a sample spread over the capture once there are more
 * requests, at most MAX_TICKS_PER_CONNECTION per connection); what is not kept as a tick is still
 * counted in the buckets.
 *
 * Kept per input and plain data, so summaries merge by concatenation and the page of merged
 * summaries is the page of the captures analysed at once.
 */
import type { KafkaRequest, KafkaResponse } from '../kafka/events.js';
import { toMicros } from '../base/time.js';
import type { ConnState } from './connection-state.js';
import type { RequestObserver } from './observer.js';
import type { InputActivity, Tick } from './types.js';
import { latencyBucket } from './latency.js';

/** Buckets per broker at most: the bucket doubles in width when the capture outgrows them. */
export const MAX_BUCKETS = 1024;
/** The narrowest bucket: 1 ms. Widths are this times a power of two, so buckets of any two inputs line up. */
export const MIN_BUCKET_US = 1000;
/** Requests kept as ticks per input, and per connection. */
export const MAX_TICKS = 20_000;
export const MAX_TICKS_PER_CONNECTION = 200;
/** Brokers with buckets of their own; the traffic of any further ones is summed under OTHER_BROKERS. */
export const MAX_BROKERS = 1000;
export const OTHER_BROKERS = 'other brokers';

// The plain data an input's activity is (types.ts: a summary carries it).
export type { InputActivity, Tick } from './types.js';

interface Counts {
  requests: number;
  errors: number;
}

/**
 * One connection's part, kept in its ConnState's observer slot (it dies with the connection; a
 * WeakMap lookup per request and response cost 10% of chatty's analysis, measured): its ticks so
 * far, the ticks awaiting a response, and the bucket it last counted in (a connection's requests
 * mostly fall in the bucket of the one before).
 */
class ConnActivity {
  ticks = 0;
  pending: Tick[] = [];
  bucket = NaN;
  counts: Counts | null = null;
  /** The collector's widenings when `counts` was found: a widening makes it stale. */
  generation = -1;
  constructor(readonly buckets: Map<number, Counts>) {}
}

/** Collects one input's activity as a RequestObserver. */
export class ActivityCollector implements RequestObserver {
  private bucketUs = MIN_BUCKET_US;
  private readonly brokers = new Map<string, Map<number, Counts>>();
  private minBucket = Infinity;
  private maxBucket = -Infinity;
  private readonly latency = new Map<number, Map<number, number>>();
  private ticks: Tick[] = [];
  private ticksNotKept = 0;
  /** Every stride-th request is a tick candidate: doubled each time the ticks fill up (see thin). */
  private stride = 1;
  private requests = 0;
  /** Widenings so far (see ConnActivity.generation). */
  private generation = 0;

  /** The connection's part, in its observer slot: the collector is the only observer of its analysis (run.ts). */
  private of(s: ConnState): ConnActivity {
    let a = s.observerState as ConnActivity | null;
    if (a === null) s.observerState = a = new ConnActivity(this.brokerBuckets(s.broker));
    return a;
  }

  request(s: ConnState, r: KafkaRequest): void {
    const us = toMicros(r.tsSec, r.tsNsec);
    const a = this.of(s);
    this.counted(a, us).requests++;
    if (a.ticks >= MAX_TICKS_PER_CONNECTION || this.requests++ % this.stride !== 0) {
      this.ticksNotKept++;
      return;
    }
    if (this.ticks.length >= MAX_TICKS) this.thin();
    a.ticks++;
    const h = r.header;
    const tick: Tick = [s.conn.tcp.id, r.frame, us, h.apiKey, h.apiVersion, h.correlationId, null, null];
    this.ticks.push(tick);
    // Bounded by the connection's ticks (MAX_TICKS_PER_CONNECTION).
    if (r.expectsResponse) a.pending.push(tick);
  }

  response(s: ConnState, r: KafkaResponse): void {
    const q = r.request;
    if (q === null) return;
    const a = this.of(s);
    const requestUs = toMicros(q.tsSec, q.tsNsec);
    const latencyUs = toMicros(r.tsSec, r.tsNsec) - requestUs;
    if (r.errorCode !== null && r.errorCode !== 0) this.counted(a, requestUs).errors++;
    let histogram = this.latency.get(q.header.apiKey);
    if (histogram === undefined) this.latency.set(q.header.apiKey, (histogram = new Map()));
    const b = latencyBucket(latencyUs);
    histogram.set(b, (histogram.get(b) ?? 0) + 1);
    // The tick of this request, if it is one: responses come in request order, so nearly always the first.
    const pending = a.pending;
    for (let i = 0; i < pending.length; i++) {
      const t = pending[i]!;
      if (t[5] === q.header.correlationId && t[1] === q.frame) {
        t[6] = r.errorCode;
        t[7] = latencyUs;
        if (i === 0) pending.shift();
        else pending.splice(i, 1);
        break;
      }
    }
  }

  /** The counts of the bucket holding `us` on this connection's broker: the last one again, or looked up. */
  private counted(a: ConnActivity, us: number): Counts {
    const b = Math.floor(us / this.bucketUs);
    if (b === a.bucket && a.generation === this.generation) return a.counts!;
    const c = this.counts(a, us);
    a.bucket = Math.floor(us / this.bucketUs); // counts() may have widened the buckets
    a.counts = c;
    a.generation = this.generation;
    return c;
  }

  /** A broker's buckets; beyond MAX_BROKERS brokers, the shared OTHER_BROKERS ones. */
  private brokerBuckets(broker: string): Map<number, Counts> {
    let buckets = this.brokers.get(broker);
    if (buckets === undefined) {
      // A capture of a thousand brokers is odd, of a million hostile: memory stays bounded.
      if (this.brokers.size >= MAX_BROKERS) broker = OTHER_BROKERS;
      buckets = this.brokers.get(broker);
      if (buckets === undefined) this.brokers.set(broker, (buckets = new Map()));
    }
    return buckets;
  }

  /**
   * The ticks are full: keep every other one (and every error response: they are what a reader
   * looks for), and from now on take every other candidate. The ticks stay a sample spread over
   * the whole capture rather than its first MAX_TICKS requests, and the same for the same input.
   */
  private thin(): void {
    const before = this.ticks.length;
    let kept = this.ticks.filter((t, i) => i % 2 === 0 || (t[6] !== null && t[6] !== 0));
    if (kept.length >= MAX_TICKS) kept = this.ticks.filter((_, i) => i % 2 === 0);
    this.ticks = kept;
    this.ticksNotKept += before - kept.length;
    this.stride *= 2;
  }

  /** The counts of the bucket holding `us` in `a`'s broker, widening the buckets if it falls outside MAX_BUCKETS. */
  private counts(a: ConnActivity, us: number): Counts {
    let b = Math.floor(us / this.bucketUs);
    if (b < this.minBucket || b > this.maxBucket) {
      const lo = Math.min(b, this.minBucket);
      const hi = Math.max(b, this.maxBucket);
      let width = this.bucketUs;
      while (Math.floor(hi * (this.bucketUs / width)) - Math.floor(lo * (this.bucketUs / width)) + 1 > MAX_BUCKETS) width *= 2;
      if (width !== this.bucketUs) {
        this.widen(width);
        b = Math.floor(us / width);
      }
      this.minBucket = Math.min(this.minBucket, b);
      this.maxBucket = Math.max(this.maxBucket, b);
    }
    const buckets = a.buckets;
    let c = buckets.get(b);
    if (c === undefined) buckets.set(b, (c = { requests: 0, errors: 0 }));
    return c;
  }

  /**
   * Merges buckets into ones `width` wide (a power-of-two multiple: floor(floor(t/w)/k) = floor(t/(w*k))).
   * Each broker's Map is rewritten in place: connections hold it.
   */
  private widen(width: number): void {
    const k = width / this.bucketUs;
    for (const buckets of this.brokers.values()) {
      const wider = new Map<number, Counts>();
      for (const [b, c] of buckets) {
        const nb = Math.floor(b / k);
        const w = wider.get(nb);
        if (w === undefined) wider.set(nb, { requests: c.requests, errors: c.errors });
        else {
          w.requests += c.requests;
          w.errors += c.errors;
        }
      }
      buckets.clear();
      for (const [b, c] of wider) buckets.set(b, c);
    }
    if (this.minBucket !== Infinity) {
      this.minBucket = Math.floor(this.minBucket / k);
      this.maxBucket = Math.floor(this.maxBucket / k);
    }
    this.bucketUs = width;
    this.generation++;
  }

  result(): InputActivity {
    const byString = <T>(a: [string, T], b: [string, T]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    return {
      bucketUs: this.bucketUs,
      brokers: [...this.brokers]
        .map(([broker, buckets]): [string, number[]] => [
          broker,
          [...buckets].sort((a, b) => a[0] - b[0]).flatMap(([bucket, c]) => [bucket, c.requests, c.errors]),
        ])
        .sort(byString),
      latency: [...this.latency]
        .sort((a, b) => a[0] - b[0])
        .map(([key, h]): [number, number[]] => [key, [...h].sort((a, b) => a[0] - b[0]).flat()]),
      ticks: this.ticks,
      ticksNotKept: this.ticksNotKept,
    };
  }
}

/** The latency bucket of 2^53 µs (285 years): no real capture has a larger one. */
const MAX_LATENCY_BUCKET = latencyBucket(2 ** 53);

const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
const isInt = (v: unknown): boolean => Number.isSafeInteger(v);
const isIntOrNull = (v: unknown): boolean => v === null || Number.isSafeInteger(v);

/** Checks an input's activity read from a summary file (hostile or damaged files too); a description of what is wrong, or null. */
export function activityProblem(a: unknown): string | null {
  if (typeof a !== 'object' || a === null || Array.isArray(a)) return 'is not an object';
  const o = a as Record<string, unknown>;
  const w = o.bucketUs;
  if (!isCount(w) || (w as number) < MIN_BUCKET_US || !Number.isInteger(Math.log2((w as number) / MIN_BUCKET_US))) {
    return "'bucketUs' is not 1000 µs times a power of two";
  }
  if (!Array.isArray(o.brokers) || !o.brokers.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && flatOf(p[1], 3, [isInt, isCount, isCount]))) {
    return "'brokers' is not [[broker, [bucket, requests, errors, ...]]]";
  }
  const isLatencyBucket = (v: unknown) => isCount(v) && (v as number) <= MAX_LATENCY_BUCKET;
  if (!Array.isArray(o.latency) || !o.latency.every((p) => Array.isArray(p) && p.length === 2 && isCount(p[0]) && flatOf(p[1], 2, [isLatencyBucket, isCount]))) {
    return "'latency' is not [[apiKey, [bucket, count, ...]]]";
  }
  const tickOk = (t: unknown) =>
    Array.isArray(t) && t.length === 8 && isCount(t[0]) && isCount(t[1]) && isInt(t[2]) && isCount(t[3]) && isCount(t[4]) && isInt(t[5]) && isIntOrNull(t[6]) && isIntOrNull(t[7]);
  if (!Array.isArray(o.ticks) || !o.ticks.every(tickOk)) return "'ticks' is not a list of [connection, frame, time, apiKey, apiVersion, correlationId, errorCode, latency]";
  if (!isCount(o.ticksNotKept)) return "'ticksNotKept' is not a count";
  return null;
}

function flatOf(v: unknown, stride: number, checks: ((x: unknown) => boolean)[]): boolean {
  if (!Array.isArray(v) || v.length % stride !== 0) return false;
  for (let i = 0; i < v.length; i++) if (!checks[i % stride]!(v[i])) return false;
  return true;
}
