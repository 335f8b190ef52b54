/**
 * The KIP-714 conversation rules, each firing and not firing, on captures built byte by byte: a
 * client (request header v2 with its ID) fetching subscriptions and pushing OTLP metrics encoded
 * by OpenTelemetry's serializer and compressed by the real encoders; across brokers and through
 * summary files and `kcid merge`.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { TELEMETRY_RULES } from '../src/analysis/rules/index.js';
import { Scenario } from './builder/scenario.js';
import { tmpFile } from './builder/capture.js';
import { pushTelemetryRequestBody, pushTelemetryResponseBody } from './builder/kafka.js';
import { analyzeFiles, ID_A, ID_A_B64, ID_B, ID_B_B64, runKcid } from './helpers.js';
import { compress, encodeMetrics, sampleMetrics } from './telemetry/otlp.js';
import { TelemetryClient } from './telemetry/client.js';

const PUSH = 72;
const TELEMETRY_RULE_IDS = new Set(TELEMETRY_RULES.map((r) => r.id));
const METRICS = encodeMetrics(sampleMetrics());

/** [rule, frame, message] of the telemetry rules' findings. */
async function judged(s: Scenario | Scenario[], opts: { maxTelemetryBytes?: number } = {}): Promise<[string, number | null, string][]> {
  const files = (Array.isArray(s) ? s : [s]).map((x) => x.file());
  const of = (report: Awaited<ReturnType<typeof analyzeFiles>>) =>
    report.findings.filter((f) => TELEMETRY_RULE_IDS.has(f.rule)).map((f): [string, number | null, string] => [f.rule, f.frame, f.message]);
  // What kcid telemetry and analyze --telemetry judge (every push decoded up front) is what plain
  // analyze judges (pushes decoded for the rules that read them, the decoder loaded at the first).
  const shown = of(await analyzeFiles(files, { decodeTelemetry: true, ...opts }));
  expect(of(await analyzeFiles(files, opts))).toEqual(shown);
  return shown;
}

/** A well-behaved client: subscribes, waits, pushes every second, ends with a Terminating push. */
async function clean(s: Scenario, t = new TelemetryClient(s)): Promise<TelemetryClient> {
  t.subscribe();
  s.wait(0.9);
  await t.push();
  s.wait(1);
  await t.push();
  s.wait(0.2);
  await t.push({ terminating: true });
  return t;
}

describe('a KIP-714 client that follows the conversation', () => {
  it('raises nothing, in every codec', async () => {
    for (const type of [0, 1, 2, 3, 4]) {
      const s = new Scenario();
      const t = new TelemetryClient(s);
      t.subscribe({ acceptedCompressionTypes: [4, 3, 2, 1] });
      s.wait(0.6); // the first push may come from half the interval on
      await t.push({ compressionType: type });
      s.wait(1.001);
      await t.push({ compressionType: type, terminating: true });
      expect(await judged(s)).toEqual([]);
    }
  });

  it('is one instance pushing through two brokers: judged together, in one capture or as two merged summaries', async () => {
    // Both brokers' traffic in one capture: the push to broker 2 comes 0.3 s after the one to broker 1.
    const s = new Scenario();
    const a = new TelemetryClient(s, '10.0.0.2:9092', '10.0.0.1:50000');
    const b = new TelemetryClient(s, '10.0.0.3:9092', '10.0.0.1:50001');
    a.subscribe();
    s.wait(1);
    await a.push();
    s.wait(0.3);
    await b.push();
    expect(await judged(s)).toEqual([
      ['broker-accepted-early-push', 11, 'the broker answered NONE (0) to a push 300.2 ms after the previous one (PushIntervalMs 1000), not THROTTLING_QUOTA_EXCEEDED (89)'],
      ['telemetry-push-too-soon', 11, 'PushTelemetry 300.2 ms after the previous push (frame 9); PushIntervalMs is 1000; the broker answered NONE (0)'],
    ]);
    // The same traffic captured at each broker, analysed apart and merged.
    const one = new Scenario();
    const two = new Scenario();
    const a1 = new TelemetryClient(one, '10.0.0.2:9092', '10.0.0.1:50000');
    a1.subscribe();
    one.wait(1);
    await a1.push();
    two.wait(1.3 + 0.0008);
    await new TelemetryClient(two, '10.0.0.3:9092', '10.0.0.1:50001').push();
    // Each capture written once: a finding's show command names its file.
    const files = [one.file(), two.file()];
    const parts = await Promise.all(
      files.map(async (f, i) => tmpFile(`part${i}.json`, (await runKcid(['analyze', f, '--telemetry', '--format', 'summary-json', '--fail-on', 'none'])).stdout)),
    );
    const merged = JSON.parse((await runKcid(['merge', ...parts, '--format', 'json'])).stdout) as { findings: { rule: string; input: number; frame: number }[] };
    expect(merged.findings.filter((f) => TELEMETRY_RULE_IDS.has(f.rule)).map((f) => [f.rule, f.input, f.frame])).toEqual([
      // The second input, numbered from 1 as the tables number it.
      ['broker-accepted-early-push', 2, 4],
      ['telemetry-push-too-soon', 2, 4],
    ]);
    // Summaries of plain analyze (no --telemetry) keep the same conversation, and merge judges it the same.
    const plain = await Promise.all(
      files.map(async (f, i) => tmpFile(`plain${i}.json`, (await runKcid(['analyze', f, '--format', 'summary-json', '--fail-on', 'none'])).stdout)),
    );
    const mergedPlain = JSON.parse((await runKcid(['merge', ...plain, '--format', 'json'])).stdout) as typeof merged & { telemetry?: unknown };
    expect(mergedPlain.findings).toEqual(merged.findings);
    expect(mergedPlain.telemetry).toBeUndefined();
    expect((JSON.parse((await runKcid(['merge', ...plain, '--format', 'json', '--telemetry'])).stdout) as { telemetry: { pushes: unknown[] }[] }).telemetry.map((c) => c.pushes.length)).toEqual([2]);
    // Apart, broker 2 alone sees a push without a subscription.
    const alone = JSON.parse((await runKcid(['merge', parts[1]!, '--format', 'json'])).stdout) as { findings: { rule: string }[] };
    expect(alone.findings.map((f) => f.rule)).toEqual(['telemetry-push-without-subscription']);
  });
});

describe('request header v3 (--kip-1313 accepted): the ID on the first request only', () => {
  /** Two v3 clients on one host with one ClientId, each subscribing then pushing every second, half a second apart. */
  async function twoV3Clients(): Promise<Scenario> {
    const s = new Scenario();
    const a = new TelemetryClient(s, '10.0.0.2:9092', '10.0.0.1:50000', ID_A, true);
    const b = new TelemetryClient(s, '10.0.0.2:9092', '10.0.0.1:50001', ID_B, true);
    a.subscribe();
    s.wait(0.5);
    b.subscribe({ subscriptionId: 8 });
    s.wait(0.5);
    await a.push();
    s.wait(0.5);
    await b.push({ subscriptionId: 8 });
    s.wait(0.5);
    await a.push();
    s.wait(0.5);
    await b.push({ subscriptionId: 8 });
    return s;
  }

  it("every telemetry request belongs to its connection's ID, and two instances are two conversations", async () => {
    const file = (await twoV3Clients()).file();
    const report = await analyzeFiles([file], { kip1313: 'accepted', decodeTelemetry: true });
    expect(report.telemetry.map((c) => [c.instanceId, c.clientIp, c.clientId, c.events.map((e) => [e.kind, e.frame])])).toEqual([
      [ID_A_B64, '10.0.0.1', 'orders', [['subscription', 7], ['push', 11], ['push', 15]]],
      [ID_B_B64, '10.0.0.1', 'orders', [['subscription', 9], ['push', 13], ['push', 17]]],
    ]);
    expect(report.findings.map((f) => f.rule)).toEqual([]);
    expect(report.instances.map((i) => [i.clientInstanceId, i.connections.length])).toEqual([
      [ID_A_B64, 1],
      [ID_B_B64, 1],
    ]);
  });

  it('the voting revision judges the same traffic by header v2 (tag 0 missing on each push), still one conversation per ID', async () => {
    const file = (await twoV3Clients()).file();
    const report = await analyzeFiles([file], { decodeTelemetry: true });
    expect(report.telemetry.map((c) => c.instanceId)).toEqual([ID_A_B64, ID_B_B64]);
    const missing = (id: string) => [
      ['client-instance-id-missing', id],
      ['telemetry-v1-without-instance-id', id],
    ];
    expect(report.findings.map((f) => [f.rule, f.clientInstanceId])).toEqual([...missing(ID_A_B64), ...missing(ID_B_B64), ...missing(ID_A_B64), ...missing(ID_B_B64)]);
  });
});

describe('telemetry-push-without-subscription and telemetry-subscription-id-mismatch', () => {
  it('fire on a push before any successful subscription, and on a stale SubscriptionId', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    await t.push();
    t.subscribe({ errorCode: 42 });
    s.wait(1);
    await t.push();
    t.subscribe({ subscriptionId: 8 });
    s.wait(1);
    await t.push({ subscriptionId: 7 }, 117);
    expect(await judged(s)).toEqual([
      ['telemetry-push-without-subscription', 4, 'PushTelemetry (SubscriptionId 7) with no successful GetTelemetrySubscriptions answered before it'],
      ['telemetry-push-without-subscription', 8, 'PushTelemetry (SubscriptionId 7) with no successful GetTelemetrySubscriptions answered before it'],
      ['telemetry-subscription-id-mismatch', 12, 'PushTelemetry with SubscriptionId 7, but the latest subscription (frame 11) is 8; the broker answered UNKNOWN_SUBSCRIPTION_ID (117)'],
    ]);
  });

  it('do not fire on a connection whose start the capture missed (the subscription may be before it)', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', handshake: false });
    c.respond(c.request({ apiKey: PUSH, apiVersion: 1, clientId: null, clientInstanceId: ID_A, body: pushTelemetryRequestBody(1, { subscriptionId: 7, terminating: false, compressionType: 1, metrics: gzipSync(METRICS) }) }), pushTelemetryResponseBody({ throttleTimeMs: 0, errorCode: 0 }));
    expect(await judged(s)).toEqual([]);
  });
});

describe('telemetry-push-too-soon and broker-accepted-early-push', () => {
  it('fire on a push sooner than the interval (and on a first push before half of it); not on a Terminating push', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe();
    s.wait(0.4);
    await t.push();
    s.wait(0.5);
    await t.push({}, 89);
    s.wait(0.05);
    await t.push({ terminating: true });
    expect(await judged(s)).toEqual([
      ['telemetry-push-too-soon', 6, 'PushTelemetry 400.1 ms after the subscription was answered (frame 5); PushIntervalMs is 1000 (the first push may come from half of it); the broker answered NONE (0)'],
      ['telemetry-push-too-soon', 8, 'PushTelemetry 500.2 ms after the previous push (frame 6); PushIntervalMs is 1000; the broker answered THROTTLING_QUOTA_EXCEEDED (89)'],
    ]);
  });

  it('the first push from half the interval on is fine; the broker accepting an early non-first push is flagged', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe();
    s.wait(0.5);
    await t.push();
    s.wait(0.999);
    await t.push();
    expect((await judged(s)).map((f) => f[0])).toEqual(['broker-accepted-early-push', 'telemetry-push-too-soon']);
  });
});

describe('telemetry-compression-not-accepted and telemetry-too-large', () => {
  it('fire on a codec the subscription does not accept (uncompressed always is), and on a blob above TelemetryMaxBytes', async () => {
    const zstdBytes = (await compress(4, METRICS)).length;
    expect(METRICS.length).toBeGreaterThan(zstdBytes);
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe({ acceptedCompressionTypes: [4] });
    s.wait(1);
    await t.push({ compressionType: 1 }, 76);
    t.subscribe({ acceptedCompressionTypes: [4], telemetryMaxBytes: zstdBytes });
    s.wait(1);
    await t.push({ compressionType: 0 }, 118);
    s.wait(1);
    await t.push({ compressionType: 4 });
    expect(await judged(s)).toEqual([
      ['telemetry-compression-not-accepted', 6, 'PushTelemetry compressed with gzip (1); the subscription (frame 5) accepts zstd; the broker answered UNSUPPORTED_COMPRESSION_TYPE (76)'],
      ['telemetry-too-large', 10, `Metrics of ${METRICS.length} bytes exceed the subscription's TelemetryMaxBytes of ${zstdBytes} (frame 9); the broker answered TELEMETRY_TOO_LARGE (118)`],
    ]);
  });
});

describe('telemetry-metrics-not-requested and telemetry-temporality-mismatch', () => {
  it('fire on metrics matching no requested prefix, on any metric when none is requested, and on cumulative when delta is asked', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe({ requestedMetrics: ['org.apache.kafka.producer.node.', 'org.apache.kafka.producer.request.'] });
    s.wait(1);
    await t.push();
    t.subscribe({ requestedMetrics: [] });
    s.wait(1);
    await t.push();
    t.subscribe({ requestedMetrics: [''], deltaTemporality: true });
    s.wait(1);
    await t.push({ metrics: encodeMetrics(sampleMetrics(AggregationTemporality.CUMULATIVE)) });
    t.subscribe({ requestedMetrics: ['org.apache.kafka.'], deltaTemporality: false });
    s.wait(1);
    await t.push();
    expect(await judged(s)).toEqual([
      ['telemetry-metrics-not-requested', 6, '2 of 4 metrics pushed match no requested prefix (the subscription of frame 5 asks for "org.apache.kafka.producer.node.", "org.apache.kafka.producer.request."): "org.apache.kafka.producer.record.send.total", "org.apache.kafka.producer.batch.size"'],
      ['telemetry-metrics-not-requested', 10, '4 of 4 metrics pushed match no requested prefix (the subscription of frame 9 asks for no metrics): "org.apache.kafka.producer.record.send.total", "org.apache.kafka.producer.node.request.latency.avg", "org.apache.kafka.producer.request.size", and 1 more'],
      ['telemetry-temporality-mismatch', 14, '3 metrics pushed with cumulative temporality, e.g. "org.apache.kafka.producer.record.send.total" (sum); the subscription (frame 13) asks for delta (DeltaTemporality true)'],
      ['telemetry-temporality-mismatch', 18, '3 metrics pushed with delta temporality, e.g. "org.apache.kafka.producer.record.send.total" (sum); the subscription (frame 17) asks for cumulative (DeltaTemporality false)'],
    ]);
  });
});

describe('telemetry-error-ignored', () => {
  it('UNKNOWN_SUBSCRIPTION_ID and UNSUPPORTED_COMPRESSION_TYPE: a push before fetching the subscription again', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe();
    s.wait(1);
    await t.push({}, 117);
    s.wait(1);
    await t.push({}, 76);
    t.subscribe();
    s.wait(1);
    await t.push({}, 76);
    t.subscribe(); // what KIP-714 asks: no finding after this one
    s.wait(1);
    await t.push();
    expect(await judged(s)).toEqual([
      ['telemetry-error-ignored', 8, 'PushTelemetry after UNKNOWN_SUBSCRIPTION_ID (117) to the push of frame 6, without the GetTelemetrySubscriptions KIP-714 asks for first'],
    ]);
  });

  it('THROTTLING_QUOTA_EXCEEDED and TELEMETRY_TOO_LARGE: a push sooner than the interval after it; waiting is fine', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe();
    s.wait(1);
    await t.push({}, 89);
    s.wait(0.2);
    await t.push({}, 118);
    s.wait(1);
    await t.push({}, 89);
    s.wait(1);
    await t.push();
    expect(await judged(s)).toEqual([
      ['telemetry-error-ignored', 8, 'PushTelemetry 200.2 ms after THROTTLING_QUOTA_EXCEEDED (89) to the push of frame 6; KIP-714 asks to wait PushIntervalMs (1000)'],
    ]);
  });

  it('a push 2 s after THROTTLING_QUOTA_EXCEEDED with a 20 s interval: telemetry-error-ignored only, and telemetry-push-too-soon says why', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe({ pushIntervalMs: 20_000 });
    s.wait(20);
    await t.push({}, 89);
    s.wait(2);
    await t.push();
    expect(await judged(s)).toEqual([
      ['telemetry-error-ignored', 8, 'PushTelemetry 2000.2 ms after THROTTLING_QUOTA_EXCEEDED (89) to the push of frame 6; KIP-714 asks to wait PushIntervalMs (20000)'],
    ]);
    // The exemption is the rule's documented behaviour, not a source comment only.
    const rule = TELEMETRY_RULES.find((r) => r.id === 'telemetry-push-too-soon')!;
    expect(rule.explanation).toContain('A push after a THROTTLING_QUOTA_EXCEEDED or TELEMETRY_TOO_LARGE answer is not judged here');
    expect(rule.explanation).toContain('reported once as telemetry-error-ignored');
  });

  it('INVALID_REQUEST and INVALID_RECORD: any later push of the instance, even after a new subscription', async () => {
    for (const code of [42, 87]) {
      const s = new Scenario();
      const t = new TelemetryClient(s);
      t.subscribe();
      s.wait(1);
      await t.push({}, code);
      t.subscribe();
      s.wait(1);
      await t.push();
      const name = code === 42 ? 'INVALID_REQUEST' : 'INVALID_RECORD';
      expect(await judged(s)).toEqual([['telemetry-error-ignored', 10, `PushTelemetry after ${name} (${code}) to the push of frame 6; KIP-714 asks the client to stop pushing metrics`]]);
    }
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe();
    s.wait(1);
    await t.push({}, 87);
    expect(await judged(s)).toEqual([]);
  });
});

describe('telemetry-push-after-terminating', () => {
  it('fires on a push after the Terminating one, on any connection; not on the Terminating push itself', async () => {
    const s = new Scenario();
    await clean(s);
    expect(await judged(s)).toEqual([]);
    const b = new TelemetryClient(s, '10.0.0.3:9092', '10.0.0.1:50001');
    s.wait(1);
    await b.push();
    expect(await judged(s)).toEqual([['telemetry-push-after-terminating', 15, 'PushTelemetry after the Terminating push of frame 10']]);
  });
});

describe('telemetry-payload-invalid and telemetry-payload-not-decoded', () => {
  it('invalid: a codec that does not match, bytes that are not OTLP, an unknown codec', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe({ acceptedCompressionTypes: [4, 3, 2, 1, 7] });
    s.wait(1);
    await t.push({ compressionType: 3, blob: gzipSync(METRICS) }, 87);
    s.wait(1);
    await t.push({ compressionType: 0, blob: Buffer.from('{"metrics": "as JSON"}') }, 87);
    s.wait(1);
    await t.push({ compressionType: 7, blob: METRICS }, 76);
    const findings = (await judged(s)).filter((f) => f[0] === 'telemetry-payload-invalid');
    expect(findings.map((f) => [f[1], f[2].replace(/does not parse: .*;/, 'does not parse: …;')])).toEqual([
      [6, `Metrics (${gzipSync(METRICS).length} bytes, lz4) do not decode: not an LZ4 frame (starts with 1f 8b 08 00); the broker answered INVALID_RECORD (87)`],
      [8, 'Metrics (22 bytes, none) do not decode: OTLP MetricsData does not parse: …; the broker answered INVALID_RECORD (87)'],
      [10, `Metrics (${METRICS.length} bytes, unknown(7)) do not decode: CompressionType 7 is not one Kafka defines (0-4); the broker answered UNSUPPORTED_COMPRESSION_TYPE (76)`],
    ]);
  });

  it('not decoded: a compression bomb, a frame above --max-telemetry-bytes, a frame the capture cut', async () => {
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe({ telemetryMaxBytes: 100_000_000 });
    s.wait(1);
    await t.push({ compressionType: 1, blob: gzipSync(new Uint8Array(2 * 1024 * 1024)) });
    s.wait(1);
    await t.push({ compressionType: 0, blob: new Uint8Array(1_200_000) });
    const findings = await judged(s, { maxTelemetryBytes: 1024 * 1024 });
    expect(findings).toEqual([
      ['telemetry-payload-not-decoded', expect.any(Number), `Metrics (${gzipSync(new Uint8Array(2 * 1024 * 1024)).length} bytes, gzip) not decoded: gzip output exceeds --max-telemetry-bytes (1048576 bytes)`],
      ['telemetry-payload-not-decoded', expect.any(Number), 'Metrics (1200000 bytes, none) not decoded: the frame (1200039 bytes) is larger than --max-telemetry-bytes (1048576 bytes)'],
    ]);
    // Cut by a snapshot length: the frame never arrives whole.
    const cut = new Scenario();
    const c = new TelemetryClient(cut);
    c.subscribe();
    cut.wait(1);
    await c.push();
    const file = tmpFile('cut.pcap', cut.pcap({ snaplen: 150 }));
    const report = await analyzeFiles([file], { decodeTelemetry: true });
    expect(report.findings.filter((f) => f.rule === 'telemetry-payload-not-decoded').map((f) => f.message)).toEqual([
      `Metrics (${(await compress(4, METRICS)).length} bytes, zstd) not decoded: the capture misses part of the frame`,
    ]);
  });
});
