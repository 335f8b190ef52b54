/**
 * The real librdkafka 2.15.1 pushes in fixtures/ckjs-mock-telemetry.pcap (6 PushTelemetry v0, zstd):
 * their metric names and point counts decoded exactly. Cross-checked when this test was written by an
 * independent decode: each blob cut from tshark's tcp.payload, decompressed by libzstd (@bokuweb/zstd-wasm)
 * and decoded with protobufjs from opentelemetry-proto's own metrics.proto: the same sizes (538, 499,
 * 503 compressed, 2,041 decompressed; 775, 738, 759 and 2,978), 14 and 19 metrics, 14 and 19 points.
 */
import { describe, expect, it } from 'vitest';
import { tmpFile } from './builder/capture.js';
import { analyzeFiles, runKcid } from './helpers.js';
import { TELEMETRY_RULES } from '../src/analysis/rules/index.js';

const FIXTURE = 'fixtures/ckjs-mock-telemetry.pcap';

const PRODUCER = [
  'org.apache.kafka.producer.connection.creation.rate',
  'org.apache.kafka.producer.connection.creation.total',
  'org.apache.kafka.producer.node.request.latency.avg',
  'org.apache.kafka.producer.node.request.latency.avg',
  'org.apache.kafka.producer.node.request.latency.avg',
  'org.apache.kafka.producer.node.request.latency.max',
  'org.apache.kafka.producer.node.request.latency.max',
  'org.apache.kafka.producer.node.request.latency.max',
  'org.apache.kafka.producer.produce.throttle.time.avg',
  'org.apache.kafka.producer.produce.throttle.time.max',
  'org.apache.kafka.producer.record.queue.time.avg',
  'org.apache.kafka.producer.record.queue.time.max',
  'org.apache.kafka.producer.request.latency.avg',
  'org.apache.kafka.producer.request.latency.max',
];
const CONSUMER = [
  'org.apache.kafka.consumer.connection.creation.rate',
  'org.apache.kafka.consumer.connection.creation.total',
  ...Array<string>(4).fill('org.apache.kafka.consumer.node.request.latency.avg'),
  ...Array<string>(4).fill('org.apache.kafka.consumer.node.request.latency.max'),
  'org.apache.kafka.consumer.coordinator.assigned.partitions',
  'org.apache.kafka.consumer.coordinator.rebalance.latency.avg',
  'org.apache.kafka.consumer.coordinator.rebalance.latency.max',
  'org.apache.kafka.consumer.coordinator.rebalance.latency.total',
  'org.apache.kafka.consumer.fetch.manager.fetch.latency.avg',
  'org.apache.kafka.consumer.fetch.manager.fetch.latency.max',
  'org.apache.kafka.consumer.poll.idle.ratio.avg',
  'org.apache.kafka.consumer.coordinator.commit.latency.avg',
  'org.apache.kafka.consumer.coordinator.commit.latency.max',
];
const SUMS = new Set(['org.apache.kafka.producer.connection.creation.total', 'org.apache.kafka.consumer.connection.creation.total', 'org.apache.kafka.consumer.coordinator.rebalance.latency.total']);

describe('librdkafka 2.15.1 pushes (ckjs-mock-telemetry.pcap)', () => {
  it('decodes every push: codec, sizes, metric names, types and point counts', async () => {
    const report = await analyzeFiles([FIXTURE], { decodeTelemetry: true });
    expect(report.telemetry.map((c) => [c.instanceId, c.clientId, c.clientIp, c.events.length])).toEqual([
      ['AAAAAAAAASoAAAAAAAAAgQ', 'kcid-modern-producer', '127.0.0.1', 4],
      ['AAAAAAAAASoAAAAAAAAAgQ', 'kcid-modern-consumer', '127.0.0.1', 4],
    ]);
    const [producer, consumer] = report.telemetry;
    const pushes = (c: typeof producer) =>
      c!.pushes.map(({ push: p }) => [p.frame, p.responseFrame, p.compressionType, p.metricsBytes, p.payload?.decompressedBytes, p.payload?.metricCount, p.payload?.points, p.terminating, p.errorCode]);
    expect(pushes(producer)).toEqual([
      [147, 148, 4, 538, 2041, 14, 14, false, 0],
      [165, 166, 4, 499, 2041, 14, 14, false, 0],
      [198, 199, 4, 503, 2041, 14, 14, true, 0],
    ]);
    expect(pushes(consumer)).toEqual([
      [138, 139, 4, 775, 2978, 19, 19, false, 0],
      [156, 157, 4, 738, 2978, 19, 19, false, 0],
      [184, 187, 4, 759, 2978, 19, 19, true, 0],
    ]);
    const scopeAndResource = {
      'kcid-modern-producer': [['kcid-modern-producer#producer-2 2.15.1'], []],
      // librdkafka puts the KIP-848 group and member in the resource.
      'kcid-modern-consumer': [['kcid-modern-consumer#consumer-3 2.15.1'], [['group_id', 'kcid-group'], ['member_id', 'B5ZrjW/FRP6zPpIdPwWFMw']]],
    };
    for (const [c, names] of [[producer!, PRODUCER], [consumer!, CONSUMER]] as const) {
      for (const { push } of c.pushes) {
        const metrics = push.payload!.metrics;
        expect(metrics.map((m) => m.name)).toEqual(names);
        expect(metrics.map((m) => [m.type, m.temporality, m.monotonic, m.points])).toEqual(
          names.map((n) => (SUMS.has(n) ? ['sum', 'delta', true, 1] : ['gauge', null, null, 1])),
        );
        expect(metrics.filter((m) => m.attributes.length > 0).every((m) => m.name.includes('.node.') && m.attributes.join() === 'node.id')).toBe(true);
        expect([push.payload!.scopes, push.payload!.resource]).toEqual(scopeAndResource[c.clientId as keyof typeof scopeAndResource]);
      }
    }
    // Points carry their collection interval: the first producer push spans 02:43:23.077698 to 02:43:24.278764.
    const first = producer!.pushes[0]!.push.payload!.metrics[0]!;
    expect([first.startUs, first.endUs]).toEqual([1796093003077698, 1796093004278764]);
    // The subscription librdkafka's mock hands out: every push follows it exactly.
    const sub = producer!.pushes[0]!.subscription!;
    expect([sub.responseFrame, sub.subscriptionId, sub.pushIntervalMs, sub.telemetryMaxBytes, sub.acceptedCompressionTypes, sub.deltaTemporality, sub.requestedMetrics]).toEqual([
      29, 0, 1000, 10000, [4, 3, 1, 2], true, ['org.apache.kafka.'],
    ]);
    const telemetryRules = new Set(TELEMETRY_RULES.map((r) => r.id));
    expect(report.findings.filter((f) => telemetryRules.has(f.rule)).map((f) => f.message)).toEqual([]);
  });

  it('plain analyze judges the same conversation: pushes decoded for the rules that read them, or only sized when those are off', async () => {
    const pushes = (report: Awaited<ReturnType<typeof analyzeFiles>>) =>
      report.telemetry.map((c) => c.pushes.map(({ push: p }) => [p.frame, p.metricsBytes, p.payload?.metricCount ?? null, p.payloadError]));
    const decoded = [
      [[147, 538, 14, null], [165, 499, 14, null], [198, 503, 14, null]],
      [[138, 775, 19, null], [156, 738, 19, null], [184, 759, 19, null]],
    ];
    expect(pushes(await analyzeFiles([FIXTURE]))).toEqual(decoded);
    expect(pushes(await analyzeFiles([FIXTURE], { telemetry: 'rules' }))).toEqual(decoded);
    expect(pushes(await analyzeFiles([FIXTURE], { telemetry: 'sizes' }))).toEqual(decoded.map((c) => c.map(([frame, bytes]) => [frame, bytes, null, null])));
    expect((await analyzeFiles([FIXTURE], { telemetry: 'off' })).telemetry).toEqual([]);
  });

  it('kcid telemetry: the table and the JSON, byte-stable', async () => {
    const table = await runKcid(['telemetry', FIXTURE]);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toBe('2 client instances with telemetry, 6 pushes (6 decoded): 0 errors, 0 warnings, 0 notes');
    expect(lines).toContain('Client instance AAAAAAAAASoAAAAAAAAAgQ  kcid-modern-producer  127.0.0.1');
    // Error codes by name and number, as everywhere; times follow -t as in every table: dated UTC by default, the time of day with -t a.
    expect(table.stdout).toContain('│ 165   │ 2026-12-01T02:43:25.280Z │ 127.0.0.1:40797 │ 0     │ zstd  │ 499   │ 2,041        │ 14      │ 14     │ 1,000.723   │ NONE (0) │             │');
    expect((await runKcid(['telemetry', FIXTURE, '-t', 'a'])).stdout).toContain('│ 165   │ 02:43:25.280 │ 127.0.0.1:40797 │ 0     │ zstd  │ 499   │ 2,041        │ 14      │ 14     │ 1,000.723   │ NONE (0) │             │');
    // Several inputs: numbered from 1 as the legend says, frames as input:frame.
    const two = (await runKcid(['telemetry', FIXTURE, 'fixtures/kip1313-mix.pcapng'])).stdout.split('\n');
    expect(two.slice(1, 3)).toEqual([`[1] ${FIXTURE}`, '[2] fixtures/kip1313-mix.pcapng']);
    expect(two.some((l) => l.startsWith('│ 1:165 '))).toBe(true);
    expect(two.some((l) => /^│ 2:\d+ /.test(l))).toBe(true);
    // JSON counts the inputs from 1 too, as the legend and every other JSON format do.
    const twoJson = JSON.parse((await runKcid(['telemetry', FIXTURE, 'fixtures/kip1313-mix.pcapng', '--format', 'json'])).stdout);
    const producer = twoJson.instances.find((i: { clientId: string }) => i.clientId === 'kcid-modern-producer');
    expect(producer.pushes[1]).toMatchObject({ input: 1, frame: 165 });
    expect(producer.subscriptions[0]).toMatchObject({ input: 1 });
    expect(new Set(twoJson.instances.flatMap((i: { pushes: { input: number }[] }) => i.pushes.map((p) => p.input)))).toEqual(new Set([1, 2]));
    expect(new Set(twoJson.findings.map((f: { input: number }) => f.input))).toEqual(new Set([2]));
    expect(table.stdout).toContain('│ org.apache.kafka.producer.node.request.latency.avg  │ gauge           │ -           │ 3      │ 9      │ node.id    │');
    expect(table.stdout).toContain('│ org.apache.kafka.consumer.coordinator.rebalance.latency.total │ sum (monotonic) │ delta       │ 3      │ 3      │ -          │');
    const json = await runKcid(['telemetry', FIXTURE, '--format', 'json']);
    expect((await runKcid(['telemetry', FIXTURE, '--format', 'json'])).stdout).toBe(json.stdout);
    const doc = JSON.parse(json.stdout);
    expect(Object.keys(doc)).toEqual(['version', 'inputs', 'summary', 'instances', 'findings']);
    expect(doc.summary).toEqual({ instances: 2, subscriptions: 2, pushes: 6, decoded: 6, findings: { error: 0, warning: 0, info: 0 } });
    expect(Object.keys(doc.instances[0])).toEqual(['clientInstanceId', 'clientAddress', 'clientId', 'subscriptions', 'pushes', 'metrics']);
    expect(doc.instances[0].pushes[1]).toMatchObject({
      frame: 165,
      responseFrame: 166,
      time: '2026-12-01T02:43:25.280117Z',
      broker: '127.0.0.1:40797',
      compression: 'zstd',
      compressedBytes: 499,
      decompressedBytes: 2041,
      metrics: 14,
      points: 14,
      intervalMs: 1000.723,
      errorCode: 0,
      terminating: false,
    });
    expect(doc.instances[0].subscriptions[0]).toMatchObject({ acceptedCompressionTypes: ['zstd', 'lz4', 'gzip', 'snappy'], requestedMetrics: ['org.apache.kafka.'] });
    expect(doc.instances[1].metrics).toHaveLength(13);
  });

  it('analyze --telemetry puts the conversation in the JSON report and the summary, and merge judges it', async () => {
    const json = JSON.parse((await runKcid(['analyze', FIXTURE, '--telemetry', '--format', 'json'])).stdout);
    expect(json.telemetry.map((c: { clientId: string; pushes: unknown[] }) => [c.clientId, c.pushes.length])).toEqual([
      ['kcid-modern-producer', 3],
      ['kcid-modern-consumer', 3],
    ]);
    expect(Object.keys(JSON.parse((await runKcid(['analyze', FIXTURE, '--format', 'json'])).stdout))).toEqual(['version', 'inputs', 'summary', 'instances', 'connections', 'findings']);
    const summary = tmpFile('ckjs.summary.json', (await runKcid(['analyze', FIXTURE, '--telemetry', '--format', 'summary-json'])).stdout);
    const merged = JSON.parse((await runKcid(['merge', summary, '--format', 'json', '--telemetry'])).stdout);
    expect(merged.telemetry).toEqual(json.telemetry);
    // A summary of plain analyze holds the same conversation as the rules read it: every push, metric,
    // type and point count, without the points' attribute keys and times (which no rule reads).
    const plain = tmpFile('ckjs.plain.summary.json', (await runKcid(['analyze', FIXTURE, '--format', 'summary-json'])).stdout);
    const asRulesRead = JSON.parse(JSON.stringify(json.telemetry, (k, v: unknown) => (k === 'attributes' ? [] : k === 'startUs' || k === 'endUs' ? null : v)));
    expect(JSON.parse((await runKcid(['merge', plain, '--format', 'json', '--telemetry'])).stdout).telemetry).toEqual(asRulesRead);
    expect(Object.keys(JSON.parse((await runKcid(['merge', plain, '--format', 'json'])).stdout))).not.toContain('telemetry');
  });

  it('kcid clients --instance ends with a telemetry summary, and its JSON has the conversations', async () => {
    const r = await runKcid(['clients', FIXTURE, '--instance', 'AAAAAAAAASo']);
    expect(r.stdout.slice(r.stdout.indexOf('Telemetry (KIP-714)'))).toBe(
      [
        'Telemetry (KIP-714)',
        '  kcid-modern-producer at 127.0.0.1',
        '  subscription 0 (frame 29): push every 1,000 ms, at most 10,000 bytes, codecs zstd, lz4, gzip, snappy, delta, metrics org.apache.kafka.',
        '  3 pushes (frames 147-198, zstd): 1,540 bytes sent, 6,123 decompressed, 10 metrics, 42 points; the last one Terminating',
        '  kcid-modern-consumer at 127.0.0.1',
        '  subscription 0 (frame 77): push every 1,000 ms, at most 10,000 bytes, codecs zstd, lz4, gzip, snappy, delta, metrics org.apache.kafka.',
        '  3 pushes (frames 138-184, zstd): 2,272 bytes sent, 8,934 decompressed, 13 metrics, 57 points; the last one Terminating',
        '',
      ].join('\n'),
    );
    const doc = JSON.parse((await runKcid(['clients', FIXTURE, '--instance', 'AAAAAAAAASo', '--format', 'json'])).stdout);
    expect(Object.keys(doc)).toEqual(['instance', 'requests', 'telemetry']);
    expect(doc.telemetry.map((c: { pushes: unknown[] }) => c.pushes.length)).toEqual([3, 3]);
  });
});
