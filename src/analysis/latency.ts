/**
 * Request latency, kept two ways.
 *
 *  - Exactly: every latency in microseconds, as [apiKey, µs, apiKey, µs, ...], while there are few
 *    enough of them: up to {@link MAX_EXACT_PER_API} per connection and API, and
 *    {@link EXACT_BUDGET} per capture analysed (so memory stays bounded whatever the capture). A
 *    client instance's percentiles are exact when every one of its connections kept every latency
 *    and it has at most MAX_EXACT_PER_API of them per API.
 *  - As a log-bucketed histogram otherwise: small, mergeable across connections and captures, and
 *    within 5% for percentiles. Bucket 0 holds latencies of at most 1 µs; bucket b > 0 holds
 *    (GROWTH^(b-1), GROWTH^b] µs.
 *
 * Percentiles are nearest-rank: the pth percentile of n latencies is the smallest one with at least
 * p% of them at or below it (rank ceil(p/100 * n)), as HdrHistogram's getValueAtPercentile; so one
 * request of 28.415 ms has p50 = p99 = 28.415 ms. Of a histogram, it is that latency's bucket's upper bound.
 */
import { EMPTY_LIST } from '../base/lists.js';

const GROWTH = 1.05;
const LOG_GROWTH = Math.log(GROWTH);

/** Latencies kept exactly per connection and API, and per client instance and API. */
export const MAX_EXACT_PER_API = 10_000;
/** Latencies kept exactly per capture analysed (16 MB at most as [apiKey, µs] pairs); past that, histograms. */
export const EXACT_BUDGET = 1_000_000;

export function latencyBucket(us: number): number {
  if (!(us > 1)) return 0;
  return Math.ceil(Math.log(us) / LOG_GROWTH - 1e-9);
}

/** Upper bound of a bucket, in microseconds. */
export function bucketUpperUs(bucket: number): number {
  return bucket === 0 ? 1 : Math.pow(GROWTH, bucket);
}

/** Percentile (0..100) of a flattened [bucket, count, ...] histogram, in milliseconds; null when empty. */
export function percentileMs(flat: readonly number[], p: number): number | null {
  let total = 0;
  for (let i = 1; i < flat.length; i += 2) total += flat[i]!;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let i = 0; i < flat.length; i += 2) {
    seen += flat[i + 1]!;
    if (seen >= rank) return Math.round(bucketUpperUs(flat[i]!)) / 1000;
  }
  return null;
}

/** Merges flattened histograms. */
export function mergeHistograms(parts: readonly (readonly number[])[]): number[] {
  const m = new Map<number, number>();
  for (const flat of parts) for (let i = 0; i < flat.length; i += 2) m.set(flat[i]!, (m.get(flat[i]!) ?? 0) + flat[i + 1]!);
  return [...m].sort((a, b) => a[0] - b[0]).flat();
}

/** A histogram of [apiKey, µs, ...] pairs. */
export function histogramOf(pairs: readonly number[]): number[] {
  const m = new Map<number, number>();
  for (let i = 1; i < pairs.length; i += 2) {
    const b = latencyBucket(pairs[i]!);
    m.set(b, (m.get(b) ?? 0) + 1);
  }
  return [...m].sort((a, b) => a[0] - b[0]).flat();
}

/** What a connection's latencies are, as its summary keeps them. */
export interface ConnectionLatency {
  /** The histogram; empty when `latencyUs` holds every latency (it is derived from them then). */
  latency: readonly number[];
  /** Every latency as [apiKey, µs, ...] ascending by API, then latency; absent when only the histogram has them. */
  latencyUs?: readonly number[];
}

/** A connection's latency histogram, from its exact latencies when it kept them. */
export function connectionHistogram(c: ConnectionLatency): readonly number[] {
  return c.latency.length === 0 && c.latencyUs !== undefined ? histogramOf(c.latencyUs) : c.latency;
}

/** Percentiles of a group of connections (a client instance, or all of them), exact when they can be. */
export interface LatencyPercentiles {
  /** Milliseconds (µs precision when exact), or null without answered requests. */
  p50Ms: number | null;
  p99Ms: number | null;
  /** Every latency was kept: the percentiles are latencies that happened, not bucket bounds. */
  exact: boolean;
}

/**
 * The p50 and p99 of `connections`' latencies. Exact when every connection kept every latency and
 * there are at most MAX_EXACT_PER_API per API (pass Infinity as `perApi` for a view that is not per
 * instance); from their merged histograms otherwise.
 */
export function latencyPercentiles(connections: readonly ConnectionLatency[], perApi = MAX_EXACT_PER_API): LatencyPercentiles {
  let n = 0;
  const perKey = new Map<number, number>();
  let exact = true;
  for (const c of connections) {
    const us = c.latencyUs;
    if (us === undefined) {
      if (c.latency.length > 0) exact = false;
      continue;
    }
    for (let i = 0; i < us.length; i += 2) perKey.set(us[i]!, (perKey.get(us[i]!) ?? 0) + 1);
    n += us.length / 2;
  }
  for (const count of perKey.values()) if (count > perApi) exact = false;
  if (!exact) {
    const h = mergeHistograms(connections.map(connectionHistogram));
    return { p50Ms: percentileMs(h, 50), p99Ms: percentileMs(h, 99), exact: false };
  }
  if (n === 0) return { p50Ms: null, p99Ms: null, exact: true };
  const all = new Float64Array(n);
  let k = 0;
  for (const c of connections) {
    const us = c.latencyUs;
    if (us !== undefined) for (let i = 1; i < us.length; i += 2) all[k++] = us[i]!;
  }
  all.sort();
  return { p50Ms: exactPercentile(all, 50) / 1000, p99Ms: exactPercentile(all, 99) / 1000, exact: true };
}

/** Nearest-rank percentile of sorted values. */
export function exactPercentile(sorted: Float64Array, p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** The state of one connection's latencies while it is analysed (ConnState extends it). */
export interface LatencyState {
  /** Histogram as [bucket, count, ...] ascending by bucket; filled once `latencyUs` is given up. */
  latency: number[];
  /** Every latency so far as [apiKey, µs, ...] in arrival order, or null once the histogram holds them. */
  latencyUs: number[] | null;
  countLatency(bucket: number): void;
  apiCount(apiKey: number): number;
}

/** Latencies beyond which exact keeping stops (38 hours): no real request waits so long. */
const MAX_EXACT_US = 2 ** 37;

/** Keeps latencies exactly within the capture's budget; a connection past its limits moves to the histogram. */
export class LatencyKeeper {
  /** Exact latencies held by live connections and kept summaries. */
  private kept = 0;

  constructor(private readonly budget = EXACT_BUDGET) {}

  add(s: LatencyState, apiKey: number, us: number): void {
    const exact = s.latencyUs;
    if (exact !== null) {
      if (this.kept < this.budget && us < MAX_EXACT_US && us > -MAX_EXACT_US && s.apiCount(apiKey) <= MAX_EXACT_PER_API) {
        if (exact.length === 0) s.latencyUs = [apiKey, us];
        else exact.push(apiKey, us);
        this.kept++;
        return;
      }
      this.giveUp(s);
    }
    s.countLatency(latencyBucket(us));
  }

  /** `s`'s exact latencies move into its histogram. */
  giveUp(s: LatencyState): void {
    const exact = s.latencyUs;
    if (exact === null) return;
    for (let i = 1; i < exact.length; i += 2) s.countLatency(latencyBucket(exact[i]!));
    this.kept -= exact.length / 2;
    s.latencyUs = null;
  }

  /** A connection's exact latencies are no longer held (its summary was not kept). */
  release(s: LatencyState): void {
    if (s.latencyUs !== null) this.kept -= s.latencyUs.length / 2;
  }
}

/** [apiKey, µs, ...] pairs sorted by API, then latency, in a new array of exact length. */
export function sortedPairs(pairs: readonly number[]): number[] {
  const n = pairs.length / 2;
  if (n === 0) return EMPTY_LIST;
  const out = pairs.slice();
  if (n <= 32) {
    for (let i = 1; i < n; i++) {
      const k = out[2 * i]!;
      const v = out[2 * i + 1]!;
      let j = i;
      for (; j > 0 && (out[2 * j - 2]! > k || (out[2 * j - 2] === k && out[2 * j - 1]! > v)); j--) {
        out[2 * j] = out[2 * j - 2]!;
        out[2 * j + 1] = out[2 * j - 1]!;
      }
      out[2 * j] = k;
      out[2 * j + 1] = v;
    }
    return out;
  }
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => pairs[2 * a]! - pairs[2 * b]! || pairs[2 * a + 1]! - pairs[2 * b + 1]!);
  for (let i = 0; i < n; i++) {
    out[2 * i] = pairs[2 * order[i]!]!;
    out[2 * i + 1] = pairs[2 * order[i]! + 1]!;
  }
  return out;
}

/** Percentiles of one API's latencies: exact when `samples` (its kept latencies) are all `responses` of them. */
export function apiPercentiles(histogram: readonly number[], responses: number, samples: readonly number[] | undefined): LatencyPercentiles {
  if (samples !== undefined && samples.length === responses && responses > 0) {
    const sorted = Float64Array.from(samples).sort();
    return { p50Ms: exactPercentile(sorted, 50) / 1000, p99Ms: exactPercentile(sorted, 99) / 1000, exact: true };
  }
  return { p50Ms: percentileMs(histogram, 50), p99Ms: percentileMs(histogram, 99), exact: false };
}

/** The kept latencies (µs) of `connections`, per API. */
export function samplesByApi(connections: readonly ConnectionLatency[]): Map<number, number[]> {
  const m = new Map<number, number[]>();
  for (const c of connections) {
    const us = c.latencyUs;
    if (us === undefined) continue;
    for (let i = 0; i < us.length; i += 2) {
      let list = m.get(us[i]!);
      if (list === undefined) m.set(us[i]!, (list = []));
      list.push(us[i + 1]!);
    }
  }
  return m;
}
