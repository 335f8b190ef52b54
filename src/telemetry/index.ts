/**
 * KIP-714 telemetry payloads: a PushTelemetry Metrics blob, decompressed within a bound and
 * decoded as OTLP metrics. Between kafka/ (which hands the blob over) and analysis/ (which judges
 * the conversation); it needs neither.
 */
import { decompress, PayloadError } from './codecs.js';
import { decodeMetrics, MetricsDecodeError, type MetricsPayload } from './metrics.js';

export { compressionName, COMPRESSION_NAMES, PayloadError } from './codecs.js';
export type { MetricInfo, MetricsPayload, MetricType, Temporality } from './metrics.js';

export { DEFAULT_MAX_TELEMETRY_BYTES } from './names.js';

export type PayloadResult =
  | { ok: true; decompressedBytes: number; metrics: MetricsPayload }
  | { ok: false; kind: 'too-large' | 'invalid' | 'unknown-codec' | 'not-metrics'; message: string };

/** Decompresses and decodes one blob; never throws for bad bytes. */
export function readTelemetryPayload(compressionType: number, blob: Uint8Array, maxBytes: number): PayloadResult {
  let raw: Uint8Array;
  try {
    raw = decompress(compressionType, blob, maxBytes);
  } catch (e) {
    if (e instanceof PayloadError) return { ok: false, kind: e.kind, message: e.message };
    throw e;
  }
  try {
    return { ok: true, decompressedBytes: raw.length, metrics: decodeMetrics(raw) };
  } catch (e) {
    if (e instanceof MetricsDecodeError) return { ok: false, kind: 'not-metrics', message: e.message };
    // A payload nested past protobufjs's recursion limit, or deep enough to exhaust the stack.
    if (e instanceof RangeError || e instanceof Error) return { ok: false, kind: 'not-metrics', message: `OTLP MetricsData does not parse: ${e.message}` };
    throw e;
  }
}
