/** PushTelemetry blobs: OTLP metrics from OpenTelemetry's serializer, compressed by each codec's real encoder, decoded exactly; every bound. */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { AggregationTemporality } from '@opentelemetry/sdk-metrics';
import snappy from 'snappyjs';
import lz4 from 'lz4js';
import { readTelemetryPayload } from '../src/telemetry/index.js';
import { decompress } from '../src/telemetry/codecs.js';
import { compress, encodeMetrics, sampleMetrics, T0_US, T1_US, xerial } from './telemetry/otlp.js';

const MiB = 1024 * 1024;
const LIMIT = 16 * MiB;

describe('OTLP metrics in every codec', () => {
  const raw = encodeMetrics(sampleMetrics());
  for (const [type, name] of [[0, 'none'], [1, 'gzip'], [2, 'snappy'], [3, 'lz4'], [4, 'zstd']] as const) {
    it(`decodes ${name}: resource, scope, each metric's type, temporality, points, attributes and times`, async () => {
      const blob = await compress(type, raw);
      const r = readTelemetryPayload(type, blob, LIMIT);
      if (!r.ok) throw new Error(r.message);
      expect(r.decompressedBytes).toBe(raw.length);
      expect(r.metrics.resource).toEqual([
        ['service.name', 'payments-api'],
        ['process.pid', '4242'],
      ]);
      expect(r.metrics.scopes).toEqual(['org.apache.kafka 4.3.0']);
      expect(r.metrics.metricCount).toBe(4);
      expect(r.metrics.points).toBe(5);
      expect(r.metrics.metrics).toEqual([
        { name: 'org.apache.kafka.producer.record.send.total', type: 'sum', temporality: 'delta', monotonic: true, points: 1, attributes: ['client.id'], startUs: T0_US, endUs: T1_US },
        { name: 'org.apache.kafka.producer.node.request.latency.avg', type: 'gauge', temporality: null, monotonic: null, points: 2, attributes: ['node.id'], startUs: T0_US, endUs: T1_US },
        { name: 'org.apache.kafka.producer.request.size', type: 'histogram', temporality: 'delta', monotonic: null, points: 1, attributes: [], startUs: T0_US, endUs: T1_US },
        { name: 'org.apache.kafka.producer.batch.size', type: 'exponentialHistogram', temporality: 'delta', monotonic: null, points: 1, attributes: ['topic'], startUs: T0_US, endUs: T1_US },
      ]);
    });
  }

  it("as the rules read it ('rules'): the same metrics, types, temporalities and point counts, data points not opened", () => {
    const full = readTelemetryPayload(0, raw, LIMIT);
    const rules = readTelemetryPayload(0, raw, LIMIT, 'rules');
    if (!full.ok || !rules.ok) throw new Error('not decoded');
    expect(rules).toEqual({ ...full, metrics: { ...full.metrics, metrics: full.metrics.metrics.map((m) => ({ ...m, attributes: [], startUs: null, endUs: null })) } });
    expect(readTelemetryPayload(0, new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), LIMIT, 'rules')).toMatchObject({ ok: false, kind: 'not-metrics' });
  });

  it('reads cumulative temporality as cumulative', () => {
    const r = readTelemetryPayload(0, encodeMetrics(sampleMetrics(AggregationTemporality.CUMULATIVE)), LIMIT);
    expect(r.ok && r.metrics.metrics.map((m) => m.temporality)).toEqual(['cumulative', null, 'cumulative', 'cumulative']);
  });

  it('reads raw snappy (no xerial framing) and xerial with several blocks', () => {
    const big = Buffer.concat(Array.from({ length: 40 }, () => Buffer.from(raw)));
    expect(Buffer.from(decompress(2, snappy.compress(raw), LIMIT))).toEqual(Buffer.from(raw));
    const framed = xerial(big, 4096);
    expect(Buffer.from(decompress(2, framed, LIMIT))).toEqual(big);
  });

  it('an empty MetricsData is zero metrics, not an error', () => {
    expect(readTelemetryPayload(0, new Uint8Array(0), LIMIT)).toEqual({
      ok: true,
      decompressedBytes: 0,
      metrics: { resource: [], scopes: [], metrics: [], metricCount: 0, points: 0 },
    });
  });
});

describe('bounds: bombs, lies and garbage are refused with a reason, never decompressed whole', () => {
  const zeros = new Uint8Array(17 * MiB);

  it('gzip: output stops at the limit', () => {
    const bomb = gzipSync(zeros);
    expect(bomb.length).toBeLessThan(40_000);
    expect(readTelemetryPayload(1, bomb, LIMIT)).toEqual({ ok: false, kind: 'too-large', message: `gzip output exceeds --max-telemetry-bytes (${LIMIT} bytes)` });
  });

  it('zstd: refused from its frame header and block walk, before any allocation', async () => {
    const bomb = await compress(4, zeros);
    const r = readTelemetryPayload(4, bomb, LIMIT);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.kind).toBe('too-large');
    // A header that declares a 2 GiB window is refused by the header alone.
    const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8, 0x01, 0x00, 0x00]);
    expect(readTelemetryPayload(4, header, LIMIT)).toEqual({ ok: false, kind: 'too-large', message: `a zstd frame with a 2147483648-byte window or content exceeds --max-telemetry-bytes (${LIMIT} bytes)` });
  });

  it('lz4: refused from the content size or blocks its frame declares', () => {
    const bomb = lz4.compress(zeros);
    const r = readTelemetryPayload(3, bomb, LIMIT);
    expect(!r.ok && r.kind).toBe('too-large');
    expect(!r.ok && r.message).toBe(`lz4 output exceeds --max-telemetry-bytes (${LIMIT} bytes)`);
  });

  it('snappy: refused from the length a block declares, raw or in xerial framing', () => {
    expect(readTelemetryPayload(2, snappy.compress(zeros), LIMIT)).toMatchObject({ ok: false, kind: 'too-large' });
    expect(readTelemetryPayload(2, xerial(zeros, 4 * MiB), LIMIT)).toMatchObject({ ok: false, kind: 'too-large' });
  });

  it('uncompressed metrics larger than the limit', () => {
    expect(readTelemetryPayload(0, new Uint8Array(2048), 1024)).toEqual({ ok: false, kind: 'too-large', message: 'uncompressed metrics of 2048 bytes exceeds --max-telemetry-bytes (1024 bytes)' });
  });

  it('a codec that does not match the bytes, an unknown codec, a cut stream', async () => {
    const raw = encodeMetrics(sampleMetrics());
    const zst = await compress(4, raw);
    expect(readTelemetryPayload(1, zst, LIMIT)).toEqual({ ok: false, kind: 'invalid', message: 'not a gzip stream (starts with 28 b5 2f fd)' });
    expect(readTelemetryPayload(3, zst, LIMIT)).toEqual({ ok: false, kind: 'invalid', message: 'not an LZ4 frame (starts with 28 b5 2f fd)' });
    expect(readTelemetryPayload(4, gzipSync(raw), LIMIT)).toEqual({ ok: false, kind: 'invalid', message: 'zstd: not a zstd frame (starts with 1f 8b 08 00)' });
    expect(readTelemetryPayload(2, zst, LIMIT)).toMatchObject({ ok: false, kind: 'invalid' });
    expect(readTelemetryPayload(5, raw, LIMIT)).toEqual({ ok: false, kind: 'unknown-codec', message: 'CompressionType 5 is not one Kafka defines (0-4)' });
    expect(readTelemetryPayload(4, zst.subarray(0, zst.length - 10), LIMIT)).toMatchObject({ ok: false, kind: 'invalid' });
    expect(readTelemetryPayload(1, gzipSync(raw).subarray(0, 40), LIMIT)).toMatchObject({ ok: false, kind: 'invalid' });
    const lz = lz4.compress(raw);
    expect(readTelemetryPayload(3, lz.subarray(0, lz.length - 20), LIMIT)).toMatchObject({ ok: false });
  });

  it('protobuf that does not parse is not-metrics, and so is one nested past the recursion limit', () => {
    expect(readTelemetryPayload(0, Buffer.from('not protobuf at all, just text'), LIMIT)).toMatchObject({ ok: false, kind: 'not-metrics' });
    // ResourceMetrics inside ResourceMetrics' field 1 (Resource) ... : field 1 length-delimited, nested 2,000 deep.
    let nested: Buffer = Buffer.alloc(0);
    for (let i = 0; i < 2000; i++) nested = Buffer.concat([Buffer.from([0x0a]), varint(nested.length), nested]);
    const r = readTelemetryPayload(0, nested, LIMIT);
    expect(r.ok).toBe(false);
  });
});

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

describe('hostile pushes in a real capture', () => {
  it('bytes flipped anywhere in the librdkafka capture: telemetry decoding never throws, and every push is decoded or says why not', async () => {
    const { readFileSync } = await import('node:fs');
    const { tmpFile } = await import('./builder/capture.js');
    const { analyzeFiles } = await import('./helpers.js');
    const original = readFileSync('fixtures/ckjs-mock-telemetry.pcap');
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let i = 0; i < 40; i++) {
      const bytes = Buffer.from(original);
      // The pushes sit in the second half of the capture: flip a few bytes there.
      for (let k = 0; k < 1 + rand(8); k++) bytes[original.length / 2 + rand(original.length / 2)] ^= 1 << rand(8);
      const report = await analyzeFiles([tmpFile(`flip-${i}.pcap`, bytes)], { decodeTelemetry: true });
      for (const c of report.telemetry) for (const { push } of c.pushes) expect(push.payload !== null || push.payloadError !== null || push.metricsBytes === null).toBe(true);
    }
  });
});
