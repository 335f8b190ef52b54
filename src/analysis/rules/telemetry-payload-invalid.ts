import type { TelemetryRule } from './rule.js';
import { answer, compressionName } from './telemetry-common.js';

export const telemetryPayloadInvalid: TelemetryRule = {
  kind: 'telemetry',
  readsMetrics: true,
  id: 'telemetry-payload-invalid',
  severity: 'error',
  summary: 'A PushTelemetry whose Metrics do not decompress with its CompressionType, or are not OTLP MetricsData.',
  explanation:
    'PushTelemetry carries OpenTelemetry metrics (OTLP MetricsData, protobuf), compressed with the ' +
    'request\'s CompressionType and framed as Kafka frames record batches (a gzip stream, snappy in ' +
    'Kafka\'s xerial framing or raw, an LZ4 frame, a zstd frame). Bytes the codec refuses, an ' +
    'unknown codec, or protobuf that does not parse is a push the broker answers INVALID_RECORD. ' +
    'It reads the metrics inside the pushes: kcid decodes them while a rule that does, such as this one, is on.',
  spec:
    'KIP-714, PushTelemetryRequest: "Metrics: Metrics encoded in OpenTelemetry MetricsData v1 protobuf format." ' +
    'Error table, INVALID_RECORD: the broker failed to decode or validate the client\'s encoded metrics (paraphrased).',
  check(c, report) {
    for (const p of c.pushes) {
      const e = p.push.payloadError;
      if (e === null || e.kind === 'too-large' || e.kind === 'not-kept') continue;
      report({ event: p.push, message: `Metrics (${p.push.metricsBytes} bytes, ${compressionName(p.push.compressionType)}) do not decode: ${e.message}; ${answer(p.push)}` });
    }
  },
};
