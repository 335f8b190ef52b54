/**
 * Request latency as a log-bucketed histogram: small, mergeable across connections and captures,
 * and within 5% for percentiles. Bucket 0 holds latencies of at most 1 µs; bucket b > 0 holds
 * (GROWTH^(b-1), GROWTH^b] µs.
 */
const GROWTH = 1.05;
const LOG_GROWTH = Math.log(GROWTH);

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
