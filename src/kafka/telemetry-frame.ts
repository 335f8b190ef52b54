/**
 * Keeping PushTelemetry frames whole, so that kcid can open the Metrics blob (issue 15). Off by
 * default: the framer then keeps PushTelemetry up to its blob's length and skips the blob by
 * counting, as for Produce. With a bound, a PushTelemetry request up to that size is kept whole,
 * the prefix growing with the bytes that arrive (never allocated from the size the frame declares),
 * and its blob copied out. The two functions below are the only places that know about it.
 */
import { Reader } from './reader.js';
import { API_KEY } from './protocol.js';
/** The prefix first asked for, then at least four times what arrived. */
const FIRST_STEP = 64 * 1024;

/**
 * The prefix to ask for a request frame of `size` bytes when whole PushTelemetry frames up to
 * `keepBytes` are kept; null when this frame is not one to keep (another API, keeping off, or
 * larger than the bound: then the blob is only sized).
 */
export function keptTelemetryPrefix(apiKey: number, headLen: number, size: number, keepBytes: number): number | null {
  if (apiKey !== API_KEY.PushTelemetry || keepBytes <= 0 || size > keepBytes) return null;
  return Math.min(size, Math.max(FIRST_STEP, headLen * 4));
}

/** Where PushTelemetry's Metrics blob lies in `buf[start, end)` (the body after its header), or null. */
function metricsAt(buf: Uint8Array, start: number, end: number, frameEnd: number, apiVersion: number): { at: number; size: number } | null {
  try {
    // v0 ClientInstanceId (16), SubscriptionId (int32), Terminating (bool), CompressionType (int8),
    // then Metrics (compact bytes).
    const r = new Reader(buf, start, end);
    if (apiVersion === 0) r.skip(16);
    r.skip(4 + 1 + 1);
    const size = r.compactBytesLength();
    if (size === null || r.pos + size > frameEnd) return null;
    return { at: r.pos, size };
  } catch {
    return null;
  }
}

/**
 * The size of PushTelemetry's Metrics blob as declared, read from a prefix of the frame (the blob
 * itself need not be there: it is sized, never copied). Null when Metrics is null, or its length
 * does not fit the frame (`frameEnd`, the frame's end in `buf` terms) or the prefix.
 */
export function pushTelemetryMetricsSize(buf: Uint8Array, start: number, end: number, frameEnd: number, apiVersion: number): number | null {
  return metricsAt(buf, start, end, frameEnd, apiVersion)?.size ?? null;
}

/**
 * PushTelemetry's Metrics bytes, copied out of the frame `buf[start, end)` (the body after its
 * header, whole). Null when Metrics is null or the bytes do not reach its end.
 */
export function pushTelemetryMetrics(buf: Uint8Array, start: number, end: number, apiVersion: number): Uint8Array | null {
  const m = metricsAt(buf, start, end, end, apiVersion);
  // A copy: buf is the framer's prefix buffer, which the next frame reuses (and Buffer#slice is a view).
  return m === null ? null : new Uint8Array(buf.subarray(m.at, m.at + m.size));
}
