/**
 * Real PushTelemetry payloads for the telemetry mix: OTLP MetricsData made by OpenTelemetry's own
 * serializer (@opentelemetry/otlp-transformer, what OTLP exporters send), with the metric names and
 * shapes librdkafka pushes (its src/rdkafka_telemetry_encode.h: gauges per broker node with a
 * `node.id` attribute, monotonic delta sums), compressed as Kafka frames them: none, gzip (zlib),
 * snappy (snappyjs in Kafka's xerial framing), lz4 (lz4js, the LZ4 frame format) and zstd
 * (@bokuweb/zstd-wasm, libzstd). All devDependencies or dependencies of kcid.
 */
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import { resourceFromAttributes } from '@opentelemetry/resources';
import snappy from 'snappyjs';
import lz4 from 'lz4js';

const require = createRequire(import.meta.url);
const zstd = require('@bokuweb/zstd-wasm');
const xxh32 = require('lz4js/xxh32.js');
await zstd.init();

const PREFIX = 'org.apache.kafka.';
/** [name, kind]: g a gauge, n a gauge per broker node, s a monotonic sum. */
const PRODUCER = [
  ['producer.connection.creation.rate', 'g'],
  ['producer.connection.creation.total', 's'],
  ['producer.node.request.latency.avg', 'n'],
  ['producer.node.request.latency.max', 'n'],
  ['producer.produce.throttle.time.avg', 'g'],
  ['producer.produce.throttle.time.max', 'g'],
  ['producer.record.queue.time.avg', 'g'],
  ['producer.record.queue.time.max', 'g'],
  ['producer.request.latency.avg', 'g'],
  ['producer.request.latency.max', 'g'],
];
const CONSUMER = [
  ['consumer.connection.creation.rate', 'g'],
  ['consumer.connection.creation.total', 's'],
  ['consumer.node.request.latency.avg', 'n'],
  ['consumer.node.request.latency.max', 'n'],
  ['consumer.coordinator.assigned.partitions', 'g'],
  ['consumer.coordinator.rebalance.latency.avg', 'g'],
  ['consumer.coordinator.rebalance.latency.max', 'g'],
  ['consumer.coordinator.rebalance.latency.total', 's'],
  ['consumer.fetch.manager.fetch.latency.avg', 'g'],
  ['consumer.fetch.manager.fetch.latency.max', 'g'],
  ['consumer.poll.idle.ratio.avg', 'g'],
  ['consumer.coordinator.commit.latency.avg', 'g'],
  ['consumer.coordinator.commit.latency.max', 'g'],
];

/** Kafka's xerial snappy framing around raw snappy blocks of 32 KiB. */
function xerial(raw) {
  const parts = [Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1])];
  for (let at = 0; at < raw.length; at += 32 * 1024) {
    const block = snappy.compress(raw.subarray(at, at + 32 * 1024));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length);
    parts.push(len, Buffer.from(block));
  }
  return Buffer.concat(parts);
}

/**
 * lz4js writes frames of 4 MiB blocks; Kafka's clients write 64 KiB ones (Java's
 * KafkaLZ4BlockOutputStream, librdkafka's LZ4F default). A payload under 64 KiB is one block either
 * way: the descriptor's block size byte (BD) is set to 64 KiB and its checksum (HC) written again.
 */
function kafkaLz4(frame) {
  if (frame.length > 64 * 1024) throw new Error('a payload over 64 KiB would need several blocks');
  frame[5] = 4 << 4;
  frame[6] = (xxh32.hash(0, frame, 4, 2) >> 8) & 0xff;
  return frame;
}

function compress(type, raw) {
  switch (type) {
    case 0:
      return Buffer.from(raw);
    case 1:
      return gzipSync(raw);
    case 2:
      return xerial(raw);
    case 3:
      return kafkaLz4(Buffer.from(lz4.compress(raw)));
    case 4:
      return Buffer.from(zstd.compress(raw, 3));
    default:
      throw new Error(`no codec ${type}`);
  }
}

/** One push of a producer or consumer talking to `nodes` brokers: MetricsData bytes. */
function metricsData(rng, consumer, nodes, clientId, t0) {
  const start = [t0, 0];
  const end = [t0 + 5, rng.int(0, 999_999_999)];
  const point = (attributes, value) => ({ startTime: start, endTime: end, attributes, value });
  const metrics = (consumer ? CONSUMER : PRODUCER).map(([name, kind]) => ({
    descriptor: { name: PREFIX + name, description: '', unit: '', valueType: 1, type: kind === 's' ? 'COUNTER' : 'GAUGE' },
    aggregationTemporality: AggregationTemporality.DELTA,
    dataPointType: kind === 's' ? DataPointType.SUM : DataPointType.GAUGE,
    isMonotonic: kind === 's',
    dataPoints:
      kind === 'n'
        ? Array.from({ length: nodes }, (_, i) => point({ 'node.id': String(i + 1) }, rng.int(0, 100_000) / 1000))
        : [point({}, rng.int(0, 100_000) / 100)],
  }));
  const attributes = consumer ? { group_id: `group-${clientId}`, member_id: rng.bytes(16).toString('base64') } : {};
  const bytes = ProtobufMetricsSerializer.serializeRequest({
    resource: resourceFromAttributes(attributes),
    scopeMetrics: [{ scope: { name: `${clientId}#${consumer ? 'consumer' : 'producer'}-1`, version: '2.15.1' }, metrics }],
  });
  if (bytes === undefined) throw new Error('the OTLP serializer returned nothing');
  return bytes;
}

/**
 * `count` distinct pushes, cycling through the five codecs: producers and consumers alike, talking
 * to 1-64 broker nodes (10 or 13 metrics, 10-139 points, about 1.5-12 KB decompressed).
 * Each is { compressionType, blob, rawBytes, metrics, points }.
 */
export function telemetryPayloads(rng, count, t0 = 1_796_090_400) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const consumer = i % 2 === 1;
    const nodes = rng.int(1, 64);
    const raw = metricsData(rng, consumer, nodes, `svc-${i}`, t0 + i);
    const compressionType = i % 5;
    const list = consumer ? CONSUMER : PRODUCER;
    const perNode = list.filter(([, k]) => k === 'n').length;
    out.push({
      compressionType,
      blob: compress(compressionType, raw),
      rawBytes: raw.length,
      metrics: list.length,
      points: list.length - perNode + perNode * nodes,
    });
  }
  return out;
}
