/**
 * KIP-714 telemetry payloads: a PushTelemetry Metrics blob, decompressed within a bound and
 * decoded as OTLP metrics. Between kafka/ (which hands the blob over) and analysis/ (which judges
 * the conversation); it needs neither.
 */
import { decompress, PayloadError } from './codecs.js';
import { decodeMetrics, MetricsDecodeError, type MetricsPayload, type MetricsView } from './metrics.js';

export { compressionName, COMPRESSION_NAMES, PayloadError } from './codecs.js';
export type { MetricInfo, MetricsPayload, MetricsView, MetricType, Temporality } from './metrics.js';

export { DEFAULT_MAX_TELEMETRY_BYTES } from './names.js';

export type PayloadResult =
  | { ok: true; decompressedBytes: number; metrics: MetricsPayload }
  | { ok: false; kind: 'too-large' | 'invalid' | 'unknown-codec' | 'not-metrics'; message: string };

/** A push's metrics read from what the frame kept: {@link PayloadResult}, or why the blob was not kept. */
export type PushMetricsResult = PayloadResult | { ok: false; kind: 'not-kept'; message: string };

/**
 * One PushTelemetry's metrics: `blob` is what the Kafka stage handed over (null when it did not keep
 * the frame whole: larger than `maxBytes`, or cut by the capture; `frame` says which). Never throws
 * for bad bytes.
 */
export function readPushMetrics(
  compressionType: number,
  blob: Uint8Array | null,
  frame: { complete: boolean; size: number },
  maxBytes: number,
  view: MetricsView = 'full',
): PushMetricsResult {
  if (blob !== null) return readTelemetryPayload(compressionType, blob, maxBytes, view);
  const why = !frame.complete
    ? 'the capture misses part of the frame'
    : `the frame (${frame.size} bytes) is larger than --max-telemetry-bytes (${maxBytes} bytes)`;
  return { ok: false, kind: 'not-kept', message: `metrics not decoded: ${why}` };
}

/** Decompresses and decodes one blob; never throws for bad bytes. */
export function readTelemetryPayload(compressionType: number, blob: Uint8Array, maxBytes: number, view: MetricsView = 'full'): PayloadResult {
  let raw: Uint8Array;
  try {
    raw = decompress(compressionType, blob, maxBytes);
  } catch (e) {
    if (e instanceof PayloadError) return { ok: false, kind: e.kind, message: e.message };
    throw e;
  }
  try {
    return { ok: true, decompressedBytes: raw.length, metrics: decodeMetrics(raw, view) };
  } catch (e) {
    if (e instanceof MetricsDecodeError) return { ok: false, kind: 'not-metrics', message: e.message };
    // A payload nested past protobufjs's recursion limit, or deep enough to exhaust the stack.
    if (e instanceof RangeError || e instanceof Error) return { ok: false, kind: 'not-metrics', message: `OTLP MetricsData does not parse: ${e.message}` };
    throw e;
  }
}
