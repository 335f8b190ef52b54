/**
 * `kcid requests --bodies`: a PushTelemetry row carries its metrics decoded (`telemetry`, between
 * `request` and `response` in NDJSON; codec, sizes, metric and point counts in the table's summary),
 * on librdkafka's real pushes and on pushes built with OpenTelemetry's serializer and real encoders.
 */
import { describe, expect, it } from 'vitest';
import { Scenario } from './builder/scenario.js';
import { pushTelemetryRequestBody, pushTelemetryResponseBody } from './builder/kafka.js';
import { ID_A, runKcid } from './helpers.js';
import { compress, encodeMetrics, sampleMetrics, T0_US, T1_US } from './telemetry/otlp.js';

const FIXTURE = 'fixtures/ckjs-mock-telemetry.pcap';
const PUSH = 72;

/** The NDJSON rows of `kcid requests ARGS --bodies --format ndjson`, parsed. */
async function rows(args: string[]): Promise<Record<string, unknown>[]> {
  const r = await runKcid(['requests', ...args, '--bodies', '--format', 'ndjson']);
  expect([r.code, r.stderr]).toEqual([0, '']);
  return r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** One client pushing `blob` (CompressionType `type`) once, answered NONE. */
function onePush(type: number, blob: Uint8Array): Scenario {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
  const corr = c.request({
    apiKey: PUSH,
    apiVersion: 1,
    clientId: 'orders',
    clientInstanceId: ID_A,
    body: pushTelemetryRequestBody(1, { subscriptionId: 7, terminating: false, compressionType: type, metrics: blob }),
  });
  c.respond(corr, pushTelemetryResponseBody({ throttleTimeMs: 0, errorCode: 0 }));
  return s;
}

describe('kcid requests --bodies on librdkafka 2.15.1 pushes (ckjs-mock-telemetry.pcap)', () => {
  it('writes each push decoded beside its body, in the names of kcid telemetry --format json', async () => {
    const pushes = (await rows([FIXTURE, '--api', 'PushTelemetry'])).map((r) => {
      const t = r.telemetry as Record<string, unknown> & { metricList: { name: string; type: string; points: number }[] };
      return [r.frame, r.clientId, t.compression, t.compressedBytes, t.decompressedBytes, t.metrics, t.points, t.metricList.length, t.metricList.reduce((n, m) => n + m.points, 0)];
    });
    expect(pushes).toEqual([
      [138, 'kcid-modern-consumer', 'zstd', 775, 2978, 19, 19, 19, 19],
      [147, 'kcid-modern-producer', 'zstd', 538, 2041, 14, 14, 14, 14],
      [156, 'kcid-modern-consumer', 'zstd', 738, 2978, 19, 19, 19, 19],
      [165, 'kcid-modern-producer', 'zstd', 499, 2041, 14, 14, 14, 14],
      [184, 'kcid-modern-consumer', 'zstd', 759, 2978, 19, 19, 19, 19],
      [198, 'kcid-modern-producer', 'zstd', 503, 2041, 14, 14, 14, 14],
    ]);
  });

  it("the producer's first push, whole: resource, scope, and per metric its type, temporality, monotonicity, points and attributes", async () => {
    const row = (await rows([FIXTURE, '--api', 'PushTelemetry'])).find((r) => r.frame === 147)!;
    expect(Object.keys(row).slice(-4)).toEqual(['request', 'telemetry', 'response', 'truncated']);
    expect(row.request).toEqual({ clientInstanceId: 'AAAAAAAAASoAAAAAAAAAgQ', subscriptionId: 0, terminating: false, compressionType: 4, metricsSizeInBytes: 538 });
    const t = row.telemetry as Record<string, unknown> & { metricList: Record<string, unknown>[] };
    expect({ ...t, metricList: t.metricList.length }).toEqual({
      compression: 'zstd',
      compressedBytes: 538,
      decompressedBytes: 2041,
      metrics: 14,
      points: 14,
      resource: {},
      scopes: ['kcid-modern-producer#producer-2 2.15.1'],
      metricList: 14,
    });
    const gauge = (name: string, attributes: string[] = []) => ({ name: `org.apache.kafka.producer.${name}`, type: 'gauge', temporality: null, monotonic: null, points: 1, attributes });
    const times = { startUs: 1_796_093_003_077_698, endUs: 1_796_093_004_278_764 };
    expect(t.metricList).toEqual(
      [
        gauge('connection.creation.rate'),
        { name: 'org.apache.kafka.producer.connection.creation.total', type: 'sum', temporality: 'delta', monotonic: true, points: 1, attributes: [] },
        ...Array(3).fill(gauge('node.request.latency.avg', ['node.id'])),
        ...Array(3).fill(gauge('node.request.latency.max', ['node.id'])),
        gauge('produce.throttle.time.avg'),
        gauge('produce.throttle.time.max'),
        gauge('record.queue.time.avg'),
        gauge('record.queue.time.max'),
        gauge('request.latency.avg'),
        gauge('request.latency.max'),
      ].map((m) => ({ ...m, ...times })),
    );
    expect(row.response).toEqual({ throttleTimeMs: 0, errorCode: 0 });
  });

  it("the consumer's pushes carry its group and member as resource attributes", async () => {
    const row = (await rows([FIXTURE, '--api', 'PushTelemetry'])).find((r) => r.frame === 138)!;
    const t = row.telemetry as { resource: unknown; scopes: unknown };
    expect([t.resource, t.scopes]).toEqual([{ group_id: 'kcid-group', member_id: 'B5ZrjW/FRP6zPpIdPwWFMw' }, ['kcid-modern-consumer#consumer-3 2.15.1']]);
  });

  it('only PushTelemetry rows gain it, and only with --bodies', async () => {
    const all = await rows([FIXTURE]);
    expect(all.filter((r) => 'telemetry' in r).map((r) => r.frame)).toEqual([138, 147, 156, 165, 184, 198]);
    const plain = await runKcid(['requests', FIXTURE, '--api', 'PushTelemetry', '--format', 'ndjson']);
    expect(plain.stdout).not.toContain('"telemetry"');
    expect(plain.stdout.trimEnd().split('\n')).toHaveLength(6);
  });

  it('the table shows codec, sizes, metric and point counts per push', async () => {
    const r = await runKcid(['requests', FIXTURE, '--api', 'PushTelemetry', '--bodies']);
    expect(r.stdout.split('\n').slice(1, 7).map((l) => l.replace(/^.*0\.\d{3}  /, ''))).toEqual([
      'zstd 775 -> 2,978 bytes, 19 metrics, 19 points',
      'zstd 538 -> 2,041 bytes, 14 metrics, 14 points',
      'zstd 738 -> 2,978 bytes, 19 metrics, 19 points',
      'zstd 499 -> 2,041 bytes, 14 metrics, 14 points',
      'zstd 759 -> 2,978 bytes, 19 metrics, 19 points',
      'zstd 503 -> 2,041 bytes, 14 metrics, 14 points',
    ]);
  });
});

describe('kcid requests --bodies on built pushes', () => {
  const raw = encodeMetrics(sampleMetrics());

  it('decodes OTLP from OpenTelemetry’s serializer in every codec', async () => {
    for (const [type, name] of [[0, 'none'], [1, 'gzip'], [2, 'snappy'], [3, 'lz4'], [4, 'zstd']] as const) {
      const blob = await compress(type, raw);
      const [row] = await rows([onePush(type, blob).file()]);
      expect(row!.telemetry).toEqual({
        compression: name,
        compressedBytes: blob.length,
        decompressedBytes: raw.length,
        metrics: 4,
        points: 5,
        resource: { 'service.name': 'payments-api', 'process.pid': '4242' },
        scopes: ['org.apache.kafka 4.3.0'],
        metricList: [
          { name: 'org.apache.kafka.producer.record.send.total', type: 'sum', temporality: 'delta', monotonic: true, points: 1, attributes: ['client.id'], startUs: T0_US, endUs: T1_US },
          { name: 'org.apache.kafka.producer.node.request.latency.avg', type: 'gauge', temporality: null, monotonic: null, points: 2, attributes: ['node.id'], startUs: T0_US, endUs: T1_US },
          { name: 'org.apache.kafka.producer.request.size', type: 'histogram', temporality: 'delta', monotonic: null, points: 1, attributes: [], startUs: T0_US, endUs: T1_US },
          { name: 'org.apache.kafka.producer.batch.size', type: 'exponentialHistogram', temporality: 'delta', monotonic: null, points: 1, attributes: ['topic'], startUs: T0_US, endUs: T1_US },
        ],
      });
    }
  });

  it('says why a push did not decode: bytes its codec refuses, protobuf that is not MetricsData', async () => {
    const [gzip] = await rows([onePush(1, raw).file()]);
    expect(gzip!.telemetry).toEqual({ compression: 'gzip', compressedBytes: raw.length, payloadError: 'not a gzip stream (starts with 0a f2 04 0a)' });
    const junk = new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    const [none] = await rows([onePush(0, junk).file()]);
    expect(none!.telemetry).toEqual({ compression: 'none', compressedBytes: 6, payloadError: expect.stringMatching(/^OTLP MetricsData does not parse: /) });
    const r = await runKcid(['requests', onePush(0, junk).file(), '--bodies']);
    expect(r.stdout).toMatch(/ none 6 bytes, not decoded: OTLP MetricsData does not parse: /);
  });

  it('is bounded by --max-telemetry-bytes: a larger frame is not kept, a larger output is refused (a gzip bomb)', async () => {
    const blob = await compress(1, raw);
    const [big] = await rows([onePush(1, blob).file(), '--max-telemetry-bytes', '100']);
    // Header v2: ApiKey, ApiVersion, CorrelationId (8), ClientId 'orders' (2 + 6), tags: count, tag 0,
    // size and the 16-byte ClientInstanceId (19). Body v1: SubscriptionId, Terminating, CompressionType
    // (6), Metrics as compact bytes (a 2-byte varint, the blob), no tags (1).
    expect(blob.length).toBeGreaterThan(127);
    const size = 8 + 8 + 19 + 6 + 2 + blob.length + 1;
    expect(big!.telemetry).toEqual({
      compression: 'gzip',
      compressedBytes: blob.length,
      payloadError: `metrics not decoded: the frame (${size} bytes) is larger than --max-telemetry-bytes (100 bytes)`,
    });
    const bomb = await compress(1, new Uint8Array(1024 * 1024));
    const [refused] = await rows([onePush(1, bomb).file(), '--max-telemetry-bytes', '64KiB']);
    expect(refused!.telemetry).toEqual({ compression: 'gzip', compressedBytes: bomb.length, payloadError: 'gzip output exceeds --max-telemetry-bytes (65536 bytes)' });
  });

  it('escapes wire strings in attribute values, keys and metric names', async () => {
    const rm = sampleMetrics(undefined, 'evil\u001b[31m.');
    const [row] = await rows([onePush(0, encodeMetrics(rm)).file()]);
    const names = (row!.telemetry as { metricList: { name: string }[] }).metricList.map((m) => m.name);
    expect(names[0]).toBe('evil\u001b[31m.record.send.total');
    const r = await runKcid(['requests', onePush(0, encodeMetrics(rm)).file(), '--bodies', '--format', 'ndjson']);
    expect(r.stdout).not.toContain('\u001b');
    expect(r.stdout).toContain('evil\\u001b[31m.record.send.total');
  });
});
