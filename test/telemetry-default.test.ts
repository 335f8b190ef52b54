/**
 * The telemetry rules run in every analysis, and PushTelemetry's metrics are decoded only where a
 * rule or an output needs them: a capture without pushes never loads the decoder (protobufjs and
 * the decompressors), and with the rules that read metrics off, pushes are only sized.
 */
import { describe, expect, it, vi } from 'vitest';
import { Scenario } from './builder/scenario.js';
import { pushTelemetryRequestBody, pushTelemetryResponseBody, requestFrame } from './builder/kafka.js';
import { analyzeFiles, ID_A, runKcid } from './helpers.js';

// Which decoder calls were made: the module's factory runs when it is first imported.
const state = vi.hoisted(() => ({ imported: false, decoded: 0 }));
vi.mock('../src/telemetry/index.js', async (importOriginal) => {
  state.imported = true;
  const actual = await importOriginal<typeof import('../src/telemetry/index.js')>();
  return {
    ...actual,
    readPushMetrics: (...args: Parameters<typeof actual.readPushMetrics>) => {
      state.decoded++;
      return actual.readPushMetrics(...args);
    },
  };
});

const PAYLOAD_RULES_OFF = ['telemetry-payload-invalid', 'telemetry-payload-not-decoded', 'telemetry-metrics-not-requested', 'telemetry-temporality-mismatch'].flatMap((r) => ['--rule', `${r}=off`]);

/** One push of bytes that are no OTLP, answered NONE, without a subscription before it. */
function junkPush(): string {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
  const blob = new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
  const corr = c.request({
    apiKey: 72,
    apiVersion: 1,
    clientId: 'orders',
    clientInstanceId: ID_A,
    body: pushTelemetryRequestBody(1, { subscriptionId: 7, terminating: false, compressionType: 0, metrics: blob }),
  });
  c.respond(corr, pushTelemetryResponseBody({ throttleTimeMs: 0, errorCode: 0 }));
  return s.file();
}

const rules = async (args: string[]) => (JSON.parse((await runKcid(['analyze', ...args, '--format', 'json', '--fail-on', 'none'])).stdout) as { findings: { rule: string }[] }).findings.map((f) => f.rule);

describe('telemetry in plain kcid analyze', () => {
  // In this order: the first two must run before anything has loaded the decoder.
  it('a capture without PushTelemetry never loads the decoder', async () => {
    await analyzeFiles(['fixtures/kcat-mock-produce.pcap', 'fixtures/kcat-mock-consumer-group.pcapng', 'fixtures/kafkajs-mock-group.pcap']);
    expect(state).toEqual({ imported: false, decoded: 0 });
  });

  it('with the rules that read metrics off, pushes are judged by the others and only sized', async () => {
    expect(await rules([junkPush(), ...PAYLOAD_RULES_OFF])).toEqual(['telemetry-push-without-subscription']);
    expect(await rules(['fixtures/ckjs-mock-telemetry.pcap', ...PAYLOAD_RULES_OFF])).not.toContain('telemetry-payload-invalid');
    expect(state).toEqual({ imported: false, decoded: 0 });
  });

  it('pushes load the decoder, and each is decoded once, for the rules', async () => {
    expect(await rules([junkPush()])).toEqual(['telemetry-payload-invalid', 'telemetry-push-without-subscription']);
    expect(state).toEqual({ imported: true, decoded: 1 });
    await analyzeFiles(['fixtures/ckjs-mock-telemetry.pcap']);
    expect(state.decoded).toBe(1 + 6);
  });

  it('a CI gate sees the telemetry findings without --telemetry: exit 1 at --fail-on error', async () => {
    const r = await runKcid(['analyze', junkPush(), '--format', 'ndjson']);
    expect(r.code).toBe(1);
    expect(r.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { rule: string }).rule)).toEqual(['telemetry-payload-invalid', 'telemetry-push-without-subscription']);
  });

  it('a push the capture ends in the middle of is still a request, its metrics not decoded, in requests and analyze alike', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const body = pushTelemetryRequestBody(1, { subscriptionId: 7, terminating: false, compressionType: 4, metrics: new Uint8Array(4000).fill(7) });
    const frame = requestFrame({ apiKey: 72, apiVersion: 1, correlationId: 1, clientId: 'orders', clientInstanceId: ID_A, body });
    // Its size, header, fields and 1,000 of its 4,000 metrics bytes; then the capture ends.
    c.clientBytes(frame.subarray(0, frame.length - 3001));
    const file = s.file();
    const r = await runKcid(['analyze', file, '--format', 'json', '--fail-on', 'none']);
    const doc = JSON.parse(r.stdout) as { summary: { requests: number }; findings: { rule: string; message: string }[] };
    expect(doc.summary.requests).toBe(1);
    expect(doc.findings.map((f) => [f.rule, f.message])).toEqual([
      ['telemetry-payload-not-decoded', 'Metrics (4000 bytes, zstd) not decoded: the capture misses part of the frame'],
      ['telemetry-push-without-subscription', 'PushTelemetry (SubscriptionId 7) with no successful GetTelemetrySubscriptions answered before it'],
    ]);
    expect((await runKcid(['requests', file, '--format', 'ndjson'])).stdout.trimEnd().split('\n')).toHaveLength(1);
  });
});
