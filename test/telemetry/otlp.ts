/**
 * Test payloads: OTLP metrics encoded by OpenTelemetry's own serializer (@opentelemetry/otlp-transformer,
 * the code OTLP exporters send with), compressed by real encoders, framed as Kafka frames them.
 */
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { AggregationTemporality, DataPointType, type MetricData, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { resourceFromAttributes } from '@opentelemetry/resources';
import snappy from 'snappyjs';
import lz4 from 'lz4js';

const require = createRequire(import.meta.url);
const zstd = require('@bokuweb/zstd-wasm') as { init(): Promise<void>; compress(b: Uint8Array, level?: number): Uint8Array };
let zstdReady: Promise<void> | null = null;

/** 2026-12-01T02:00:00Z and 5 s later, as [seconds, nanoseconds]. */
export const T0: [number, number] = [1_796_090_400, 0];
export const T1: [number, number] = [1_796_090_405, 250_000_000];
export const T0_US = 1_796_090_400_000_000;
export const T1_US = 1_796_090_405_250_000;

const VALUE_DOUBLE = 1;

function descriptor(name: string) {
  return { name, description: '', unit: '', valueType: VALUE_DOUBLE, type: 'COUNTER' } as unknown as MetricData['descriptor'];
}

/** A sum (monotonic, with `temporality`), a gauge with two points, a histogram, an exponential histogram. */
export function sampleMetrics(temporality: AggregationTemporality = AggregationTemporality.DELTA, prefix = 'org.apache.kafka.producer.'): ResourceMetrics {
  const point = (attributes: Record<string, string | number>, value: unknown) => ({ startTime: T0, endTime: T1, attributes, value });
  const metrics = [
    {
      descriptor: descriptor(`${prefix}record.send.total`),
      aggregationTemporality: temporality,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints: [point({ 'client.id': 'payments' }, 42)],
    },
    {
      descriptor: descriptor(`${prefix}node.request.latency.avg`),
      aggregationTemporality: temporality,
      dataPointType: DataPointType.GAUGE,
      dataPoints: [point({ 'node.id': '1' }, 1.5), point({ 'node.id': '2' }, 2.5)],
    },
    {
      descriptor: descriptor(`${prefix}request.size`),
      aggregationTemporality: temporality,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: [point({}, { buckets: { boundaries: [10, 100], counts: [1, 2, 0] }, count: 3, sum: 120, min: 5, max: 90 })],
    },
    {
      descriptor: descriptor(`${prefix}batch.size`),
      aggregationTemporality: temporality,
      dataPointType: DataPointType.EXPONENTIAL_HISTOGRAM,
      dataPoints: [
        point({ topic: 'orders' }, { count: 2, sum: 3, min: 1, max: 2, scale: 1, zeroCount: 0, positive: { offset: 0, bucketCounts: [1, 1] }, negative: { offset: 0, bucketCounts: [] } }),
      ],
    },
  ] as unknown as MetricData[];
  return {
    resource: resourceFromAttributes({ 'service.name': 'payments-api', 'process.pid': 4242 }),
    scopeMetrics: [{ scope: { name: 'org.apache.kafka', version: '4.3.0' }, metrics }],
  };
}

/** OTLP protobuf bytes: ExportMetricsServiceRequest, whose field 1 is MetricsData's (the same bytes). */
export function encodeMetrics(rm: ResourceMetrics): Uint8Array {
  const bytes = ProtobufMetricsSerializer.serializeRequest(rm);
  if (bytes === undefined) throw new Error('serializer returned nothing');
  return bytes;
}

/** Kafka's xerial snappy framing around raw snappy blocks of at most `blockSize` bytes. */
export function xerial(raw: Uint8Array, blockSize = 32 * 1024): Uint8Array {
  const parts: Buffer[] = [Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1])];
  for (let at = 0; at < raw.length; at += blockSize) {
    const block = snappy.compress(raw.subarray(at, at + blockSize));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length);
    parts.push(len, Buffer.from(block));
  }
  return Buffer.concat(parts);
}

/** The blob for CompressionType `type` (0 none, 1 gzip, 2 snappy (xerial), 3 lz4, 4 zstd). */
export async function compress(type: number, raw: Uint8Array): Promise<Uint8Array> {
  switch (type) {
    case 0:
      return raw;
    case 1:
      return gzipSync(raw);
    case 2:
      return xerial(raw);
    case 3:
      return lz4.compress(raw);
    case 4:
      await (zstdReady ??= zstd.init());
      return zstd.compress(raw, 3);
    default:
      throw new Error(`no codec ${type}`);
  }
}
