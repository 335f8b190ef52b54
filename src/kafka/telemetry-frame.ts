/**
 * Keeping PushTelemetry frames whole, so that kcid can open the Metrics blob (issue 15). Off by
 * default: the framer then keeps PushTelemetry up to its blob's length and skips the blob by
 * counting, as for Produce. With a bound, a PushTelemetry request up to that size is kept whole,
 * the prefix growing with the bytes that arrive (never allocated from the size the frame declares),
 * and its blob copied out. The two functions below are the only places that know about it.
 */
import { Reader } from './reader.js';

/** API key of PushTelemetry (KIP-714). */
const PUSH_TELEMETRY = 72;
/** The prefix first asked for, then at least four times what arrived. */
const FIRST_STEP = 64 * 1024;

/**
 * The prefix to ask for a request frame of `size` bytes when whole PushTelemetry frames up to
 * `keepBytes` are kept; null when this frame is not one to keep (another API, keeping off, or
 * larger than the bound: then the blob is only sized).
 */
export function keptTelemetryPrefix(apiKey: number, headLen: number, size: number, keepBytes: number): number | null {
  if (apiKey !== PUSH_TELEMETRY || keepBytes <= 0 || size > keepBytes) return null;
  return Math.min(size, Math.max(FIRST_STEP, headLen * 4));
}

/**
 * PushTelemetry's Metrics bytes, copied out of the frame `buf[start, end)` (the body after its
 * header, whole): v0 ClientInstanceId (16), SubscriptionId (int32), Terminating (bool),
 * CompressionType (int8), then Metrics (compact bytes). Null when Metrics is null or the bytes do
 * not reach its end (the body decoder reports those).
 */
export function pushTelemetryMetrics(buf: Uint8Array, start: number, end: number, apiVersion: number): Uint8Array | null {
  try {
    const r = new Reader(buf, start, end);
    if (apiVersion === 0) r.skip(16);
    r.skip(4 + 1 + 1);
    const size = r.compactBytesLength();
    if (size === null || size > r.remaining) return null;
    const at = r.pos;
    // A copy: buf is the framer's prefix buffer, which the next frame reuses (and Buffer#slice is a view).
    return new Uint8Array(buf.subarray(at, at + size));
  } catch {
    return null;
  }
}
