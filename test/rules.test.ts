/**
 * Every rule, firing and not firing, on whole captures built byte by byte: Ethernet/IPv4/TCP
 * conversations carrying Kafka frames from test/builder/kafka.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  apiVersionsRequestBody,
  concat,
  consumerGroupHeartbeatRequestBody,
  errorCodeResponseBody,
  getTelemetrySubscriptionsRequestBody,
  getTelemetrySubscriptionsResponseBody,
  int16,
  pushTelemetryRequestBody,
  taggedFields,
  uuid,
} from './builder/kafka.js';
import { Scenario, type KafkaConn } from './builder/scenario.js';
import { analyzeFiles, analyzeScenario, brief, ID_A, ID_A_B64, ID_B, ID_B_B64, ID_C, ID_C_B64, ZERO } from './helpers.js';
import { RULES } from '../src/analysis/rules/index.js';
import { encodeMetrics, sampleMetrics } from './telemetry/otlp.js';

const K = { ApiVersions: 18, Metadata: 3, Produce: 0, GTS: 71, Push: 72, CGH: 68, Heartbeat: 12 } as const;

/** A Metadata v12 request body: Topics null, AllowAutoTopicCreation, IncludeTopicAuthorizedOperations, tags. */
const metadataV12 = concat(new Uint8Array([0x00, 0x01, 0x00]), taggedFields());
/** Metadata v8 (not flexible): Topics null (-1), AllowAutoTopicCreation, two bools. */
const metadataV8 = concat(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00]));

function gtsResponse(version: number, errorCode: number, clientInstanceId?: Uint8Array): Uint8Array {
  return getTelemetrySubscriptionsResponseBody(version, {
    throttleTimeMs: 0,
    errorCode,
    ...(clientInstanceId === undefined ? {} : { clientInstanceId }),
    subscriptionId: 7,
    acceptedCompressionTypes: [4, 3],
    pushIntervalMs: 30000,
    telemetryMaxBytes: 1048576,
    deltaTemporality: true,
    requestedMetrics: ['org.apache.kafka.'],
  });
}

/** A KIP-1313 client's opening: ApiVersions v4 with ClientId and tag 0, answered. */
function open(c: KafkaConn, id: Uint8Array | null, clientId = 'orders'): void {
  const corr = c.request({
    apiKey: K.ApiVersions,
    apiVersion: 4,
    clientId,
    clientInstanceId: id,
    body: apiVersionsRequestBody({ softwareName: 'apache-kafka-java', softwareVersion: '4.3.0' }),
  });
  c.respond(corr, errorCodeResponseBody({ errorCode: 0, flexible: false }));
}

describe('rule registry', () => {
  it('has every rule the issue names, with a severity, a summary, an explanation and its spec', () => {
    expect(RULES.map((r) => [r.id, r.severity])).toEqual([
      ['zero-client-instance-id', 'error'],
      ['client-instance-id-changed', 'error'],
      ['client-instance-id-missing', 'error'],
      ['client-id-after-first', 'error'],
      ['instance-id-missing-on-first', 'error'],
      ['instance-id-after-first', 'error'],
      ['telemetry-zero-id-with-header', 'error'],
      ['telemetry-id-mismatch', 'error'],
      ['telemetry-v1-without-instance-id', 'error'],
      ['broker-accepted-invalid', 'error'],
      ['broker-assigned-instance-id', 'error'],
      ['member-id-mismatch', 'warning'],
      ['instance-id-multiple-hosts', 'warning'],
      ['instance-id-multiple-client-ids', 'warning'],
      ['malformed-request-header', 'error'],
      ['stream-desync', 'warning'],
      ['capture-gap', 'info'],
      ['tls-on-kafka-port', 'info'],
      ['tls-record-auth-failed', 'warning'],
      ['tls-record-unreadable', 'warning'],
      ['tls-alert', 'warning'],
      ['tls-keylog-unmatched', 'warning'],
      ['unknown-api-key', 'info'],
      ['removed-api-version', 'info'],
      ['unknown-error-code', 'info'],
      ['malformed-body', 'warning'],
      ['short-response-tolerated', 'info'],
      ['capture-truncated', 'info'],
      ['client-id-changed', 'info'],
      ['telemetry-push-without-subscription', 'error'],
      ['telemetry-subscription-id-mismatch', 'error'],
      ['telemetry-push-too-soon', 'warning'],
      ['broker-accepted-early-push', 'warning'],
      ['telemetry-compression-not-accepted', 'error'],
      ['telemetry-too-large', 'error'],
      ['telemetry-metrics-not-requested', 'warning'],
      ['telemetry-temporality-mismatch', 'warning'],
      ['telemetry-error-ignored', 'error'],
      ['telemetry-push-after-terminating', 'error'],
      ['telemetry-payload-invalid', 'error'],
      ['telemetry-payload-not-decoded', 'info'],
    ]);
    // Every KIP-1313 rule names the revision it comes from.
    expect(RULES.filter((r) => r.revision !== undefined).map((r) => [r.id, r.revision])).toEqual([
      ['zero-client-instance-id', 'both'],
      ['client-instance-id-changed', 'both'],
      ['client-instance-id-missing', 'voting'],
      ['client-id-after-first', 'both'],
      ['instance-id-missing-on-first', 'accepted'],
      ['instance-id-after-first', 'accepted'],
      ['telemetry-zero-id-with-header', 'both'],
      ['telemetry-id-mismatch', 'both'],
      ['telemetry-v1-without-instance-id', 'both'],
      ['broker-accepted-invalid', 'both'],
      ['broker-assigned-instance-id', 'both'],
      ['member-id-mismatch', 'both'],
      ['instance-id-multiple-hosts', 'both'],
      ['instance-id-multiple-client-ids', 'both'],
    ]);
    for (const r of RULES) {
      expect(r.summary.length).toBeGreaterThan(20);
      expect(r.explanation.length).toBeGreaterThan(150);
      expect(r.spec.length).toBeGreaterThan(20);
    }
  });
});

describe('a clean KIP-1313 client', () => {
  it('raises nothing: ID in every v2 header, ClientId only first, telemetry v1, member ID = instance ID', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    c.respond(c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 }));
    c.respond(c.request({ apiKey: K.GTS, apiVersion: 1, clientInstanceId: ID_A, body: getTelemetrySubscriptionsRequestBody(1) }), gtsResponse(1, 0));
    // The first push from half the PushIntervalMs (30 s) on, OTLP metrics as OpenTelemetry encodes them.
    s.wait(15);
    c.respond(
      c.request({
        apiKey: K.Push,
        apiVersion: 1,
        clientInstanceId: ID_A,
        body: pushTelemetryRequestBody(1, { subscriptionId: 7, terminating: false, compressionType: 0, metrics: encodeMetrics(sampleMetrics()) }),
      }),
      errorCodeResponseBody({ throttleTimeMs: 0, errorCode: 0, flexible: true }),
    );
    c.request({
      apiKey: K.CGH,
      apiVersion: 0,
      clientInstanceId: ID_A,
      body: consumerGroupHeartbeatRequestBody(0, { groupId: 'g', memberId: ID_A_B64, memberEpoch: 3 }),
    });
    // Telemetry v0 whose body ID equals the header's is allowed.
    c.request({ apiKey: K.GTS, apiVersion: 0, clientInstanceId: ID_A, body: getTelemetrySubscriptionsRequestBody(0, ID_A) });
    c.close();
    const report = await analyzeScenario(s);
    expect(report.findings).toEqual([]);
    expect(report.counts).toEqual({ connections: 1, requests: 6, responses: 4, instances: 1, findings: { error: 0, warning: 0, info: 0 } });
    expect(report.instances[0]!.clientInstanceId).toBe(ID_A_B64);
    expect(report.instances[0]!.source).toBe('header');
    expect(report.instances[0]!.software).toEqual([{ name: 'apache-kafka-java', version: '4.3.0' }]);
  });

  it('a legacy client that sends ClientId on every request and no tag 0 is not in violation', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, null, 'legacy');
    c.respond(c.request({ apiKey: K.Metadata, apiVersion: 12, clientId: 'legacy', body: metadataV12 }));
    c.respond(c.request({ apiKey: K.Metadata, apiVersion: 8, clientId: 'legacy', body: metadataV8 }));
    const report = await analyzeScenario(s);
    expect(report.findings).toEqual([]);
    expect(report.instances.map((i) => [i.clientInstanceId, i.source, i.clientIds])).toEqual([[null, 'none', ['legacy']]]);
  });
});

describe('zero-client-instance-id', () => {
  it('fires on a zero tag 0, not on a non-zero one', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ZERO); // frame 4
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ZERO, body: metadataV12 }); // frame 6
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([
      ['zero-client-instance-id', 4, 'request header ClientInstanceId is the zero UUID'],
      ['zero-client-instance-id', 6, 'request header ClientInstanceId is the zero UUID'],
    ]);
    expect(report.findings[0]!.clientInstanceId).toBe('AAAAAAAAAAAAAAAAAAAAAA');
  });
});

describe('client-instance-id-changed and client-instance-id-missing', () => {
  it('fire on a changed ID and on a v2 header without tag 0 after one with it', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A); // 4, 5
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_B, body: metadataV12 }); // 6
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: null, body: metadataV12 }); // 7
    c.request({ apiKey: K.Metadata, apiVersion: 8, body: metadataV8 }); // 8: v1 header cannot carry it
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_B, body: metadataV12 }); // 9: same as last
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([
      ['client-instance-id-changed', 6, `header ClientInstanceId changed from ${ID_A_B64} to ${ID_B_B64} on this connection`],
      ['client-instance-id-missing', 7, 'request header v2 without ClientInstanceId (tag 0) on a connection that sent it before'],
    ]);
  });

  it('do not fire when a connection never sent tag 0', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, null);
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: null, body: metadataV12 });
    expect((await analyzeScenario(s)).findings).toEqual([]);
  });
});

describe('client-id-after-first', () => {
  it('fires on a later request with a ClientId, also on v1 headers and before tag 0 first appears', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.request({ apiKey: K.Metadata, apiVersion: 8, clientId: 'orders', body: metadataV8 }); // 4: first
    c.request({ apiKey: K.Metadata, apiVersion: 8, clientId: 'orders', body: metadataV8 }); // 5: held
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientId: '', clientInstanceId: ID_A, body: metadataV12 }); // 6
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientId: null, clientInstanceId: ID_A, body: metadataV12 }); // 7: fine
    const report = await analyzeScenario(s);
    expect(brief(report.findings.filter((f) => f.rule === 'client-id-after-first'))).toEqual([
      ['client-id-after-first', 5, 'ClientId "orders" sent on a request other than the first of the connection'],
      ['client-id-after-first', 6, 'ClientId "" sent on a request other than the first of the connection'],
    ]);
    // The held finding is about frame 5's request: its connection context gives it the instance ID.
    const held = report.findings.find((f) => f.rule === 'client-id-after-first')!;
    expect(held.clientInstanceId).toBe(ID_A_B64);
    expect(held.correlationId).toBe(2);
    // The connection is named by its first request: "" later is a finding, not a second name (issue 13).
    expect(report.findings.map((f) => f.rule)).not.toContain('instance-id-multiple-client-ids');
    expect(report.connections.map((x) => x.clientIds)).toEqual([['orders']]);
  });

  it('counts an ApiVersions retried after UNSUPPORTED_VERSION as the first request', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const first = c.request({ apiKey: K.ApiVersions, apiVersion: 4, clientId: 'orders', clientInstanceId: ID_A, body: apiVersionsRequestBody({ softwareName: 'x', softwareVersion: '1' }) });
    c.respond(first, errorCodeResponseBody({ errorCode: 35, flexible: false }));
    const retry = c.request({ apiKey: K.ApiVersions, apiVersion: 0, clientId: 'orders' });
    c.respond(retry, errorCodeResponseBody({ errorCode: 0, flexible: false }));
    c.request({ apiKey: K.ApiVersions, apiVersion: 0, clientId: 'orders' }); // frame 8: not a retry any more
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([['client-id-after-first', 8, 'ClientId "orders" sent on a request other than the first of the connection']]);
  });

  it('does not judge a connection whose start the capture missed, nor a legacy connection', async () => {
    const s = new Scenario();
    const mid = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', handshake: false });
    mid.request({ apiKey: K.Metadata, apiVersion: 12, clientId: 'orders', clientInstanceId: ID_A, body: metadataV12 });
    mid.request({ apiKey: K.Metadata, apiVersion: 12, clientId: 'orders', clientInstanceId: ID_A, body: metadataV12 });
    const legacy = s.connect({ client: '10.0.0.3:50000', broker: '10.0.0.2:9092' });
    legacy.request({ apiKey: K.Metadata, apiVersion: 12, clientId: 'legacy', body: metadataV12 });
    legacy.request({ apiKey: K.Metadata, apiVersion: 12, clientId: 'legacy', body: metadataV12 });
    expect((await analyzeScenario(s)).findings).toEqual([]);
  });
});

describe('telemetry rules', () => {
  it('telemetry-zero-id-with-header, broker-accepted-invalid and broker-assigned-instance-id', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A); // 4, 5
    const q = c.request({ apiKey: K.GTS, apiVersion: 0, clientInstanceId: ID_A, body: getTelemetrySubscriptionsRequestBody(0, ZERO) }); // 6
    c.respond(q, gtsResponse(0, 0, ID_C)); // 7
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([
      ['telemetry-zero-id-with-header', 6, 'GetTelemetrySubscriptions v0 asks for a new ID (zero body ClientInstanceId) although its header carries one'],
      ['broker-accepted-invalid', 7, 'broker answered GetTelemetrySubscriptions v0 with a zero body ClientInstanceId with a header ID (frame 6) with error code 0, not INVALID_REQUEST (42)'],
      ['broker-assigned-instance-id', 7, `broker assigned ClientInstanceId ${ID_C_B64} although the request header carried ${ID_A_B64}`],
    ]);
    expect(report.findings[1]!.apiKey).toBe(71);
  });

  it('a broker answering INVALID_REQUEST is right; a legacy client asking for an ID is fine', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    const q = c.request({ apiKey: K.GTS, apiVersion: 0, clientInstanceId: ID_A, body: getTelemetrySubscriptionsRequestBody(0, ZERO) });
    c.respond(q, gtsResponse(0, 42, ZERO));
    const legacy = s.connect({ client: '10.0.0.3:50000', broker: '10.0.0.2:9092' });
    open(legacy, null, 'legacy');
    const lq = legacy.request({ apiKey: K.GTS, apiVersion: 0, body: getTelemetrySubscriptionsRequestBody(0, ZERO) });
    legacy.respond(lq, gtsResponse(0, 0, ID_C));
    const report = await analyzeScenario(s);
    expect(report.findings.map((f) => f.rule)).toEqual(['telemetry-zero-id-with-header']);
    // The legacy client is grouped by the telemetry ID the broker assigned it (KIP-714).
    expect(report.instances.map((i) => [i.clientInstanceId, i.source])).toEqual([
      [ID_A_B64, 'header'],
      [ID_C_B64, 'telemetry'],
    ]);
  });

  it('telemetry-id-mismatch for GetTelemetrySubscriptions v0 and PushTelemetry v0, with broker-accepted-invalid', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A); // 4, 5
    const q = c.request({ apiKey: K.GTS, apiVersion: 0, clientInstanceId: ID_A, body: getTelemetrySubscriptionsRequestBody(0, ID_B) }); // 6
    c.respond(q, gtsResponse(0, 0, ZERO)); // 7
    c.request({
      apiKey: K.Push,
      apiVersion: 0,
      clientInstanceId: ID_A,
      body: pushTelemetryRequestBody(0, { clientInstanceId: ID_B, subscriptionId: 7, terminating: false, compressionType: 0, metrics: null }),
    }); // 8
    c.request({
      apiKey: K.Push,
      apiVersion: 0,
      clientInstanceId: ID_A,
      body: pushTelemetryRequestBody(0, { clientInstanceId: ID_A, subscriptionId: 7, terminating: true, compressionType: 0, metrics: null }),
    }); // 9: fine
    const report = await analyzeScenario(s);
    const mismatch = `body ClientInstanceId ${ID_B_B64} differs from header ClientInstanceId ${ID_A_B64}`;
    expect(brief(report.findings)).toEqual([
      ['telemetry-id-mismatch', 6, mismatch],
      ['broker-accepted-invalid', 7, 'broker answered GetTelemetrySubscriptions v0 with a body ClientInstanceId that differs from the header ID (frame 6) with error code 0, not INVALID_REQUEST (42)'],
      ['telemetry-id-mismatch', 8, mismatch],
      // The KIP-714 conversation is judged too: that push came at once after the subscription.
      ['telemetry-push-too-soon', 8, 'PushTelemetry 0.1 ms after the subscription was answered (frame 7); PushIntervalMs is 30000 (the first push may come from half of it); no answer in the capture'],
    ]);
  });

  it('telemetry-v1-without-instance-id fires on v1 without tag 0, not on v1 with it', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, null); // 4, 5
    c.request({ apiKey: K.GTS, apiVersion: 1, body: getTelemetrySubscriptionsRequestBody(1) }); // 6
    c.request({ apiKey: K.Push, apiVersion: 1, body: pushTelemetryRequestBody(1, { subscriptionId: 1, terminating: false, compressionType: 0, metrics: null }) }); // 7
    c.request({ apiKey: K.GTS, apiVersion: 1, clientInstanceId: ID_A, body: getTelemetrySubscriptionsRequestBody(1) }); // 8
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([
      ['telemetry-v1-without-instance-id', 6, 'GetTelemetrySubscriptions v1 without a ClientInstanceId in its request header'],
      // The subscription at frame 6 was never answered (the KIP-714 conversation is judged too).
      ['telemetry-push-without-subscription', 7, 'PushTelemetry (SubscriptionId 1) with no successful GetTelemetrySubscriptions answered before it'],
      ['telemetry-v1-without-instance-id', 7, 'PushTelemetry v1 without a ClientInstanceId in its request header'],
    ]);
  });
});

describe('member-id-mismatch', () => {
  it('fires when MemberId is not the base64 instance ID; not for an empty MemberId or a matching one', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A); // 4, 5
    const hb = (memberId: string) =>
      c.request({ apiKey: K.CGH, apiVersion: 0, clientInstanceId: ID_A, body: consumerGroupHeartbeatRequestBody(0, { groupId: 'g', memberId, memberEpoch: 0 }) });
    hb(''); // 6
    hb('0123456789abcdef0123456789abcdef'); // 7: hex is not Kafka's form
    hb(ID_A_B64); // 8
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([
      ['member-id-mismatch', 7, `MemberId "0123456789abcdef0123456789abcdef" is not the client instance ID ${ID_A_B64}`],
    ]);
    expect(report.findings[0]!.severity).toBe('warning');
  });
});

describe('cross-connection rules', () => {
  it('instance-id-multiple-hosts and instance-id-multiple-client-ids look across connections and captures', async () => {
    const s1 = new Scenario();
    open(s1.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' }), ID_A, 'orders');
    const s2 = new Scenario();
    s2.wait(1);
    open(s2.connect({ client: '10.0.0.9:41000', broker: '10.0.0.3:9092' }), ID_A, 'billing');
    const single = await analyzeScenario(s1);
    expect(single.findings).toEqual([]);
    const report = await analyzeFiles([s1.file('broker1.pcap'), s2.file('broker2.pcap')]);
    expect(report.findings.map((f) => [f.rule, f.input, f.frame, f.client, f.broker, f.message])).toEqual([
      ['instance-id-multiple-client-ids', 1, 4, '10.0.0.9:41000', '10.0.0.3:9092', `client instance ID ${ID_A_B64} names 2 ClientIds: "orders", "billing"`],
      ['instance-id-multiple-hosts', 1, 4, '10.0.0.9:41000', '10.0.0.3:9092', `client instance ID ${ID_A_B64} is used from 2 hosts: 10.0.0.1, 10.0.0.9`],
    ]);
    expect(report.instances).toHaveLength(1);
    expect(report.instances[0]!.brokers).toEqual(['10.0.0.2:9092', '10.0.0.3:9092']);
  });

  it('the zero UUID is nobody\'s ID: clients on two hosts that both send it are two instances, not a shared ID', async () => {
    const s = new Scenario();
    open(s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' }), ZERO, 'orders'); // 4, 5
    open(s.connect({ client: '10.0.0.9:41000', broker: '10.0.0.2:9092' }), ZERO, 'billing'); // 9, 10
    open(s.connect({ client: '10.0.0.1:50001', broker: '10.0.0.2:9092' }), ZERO, 'orders'); // 14, 15
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([
      ['zero-client-instance-id', 4, 'request header ClientInstanceId is the zero UUID'],
      ['zero-client-instance-id', 9, 'request header ClientInstanceId is the zero UUID'],
      ['zero-client-instance-id', 14, 'request header ClientInstanceId is the zero UUID'],
    ]);
    expect(report.instances.map((i) => [i.clientInstanceId, i.clientAddresses, i.clientIds, i.connections.length])).toEqual([
      ['AAAAAAAAAAAAAAAAAAAAAA', ['10.0.0.1'], ['orders'], 2],
      ['AAAAAAAAAAAAAAAAAAAAAA', ['10.0.0.9'], ['billing'], 1],
    ]);
  });
});

describe('malformed-request-header', () => {
  it('fires on a tag 0 that is not 16 bytes and on tags out of order', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A); // 4, 5
    c.request({ apiKey: K.Metadata, apiVersion: 12, tags: [{ tag: 0, bytes: new Uint8Array(8) }], body: metadataV12 }); // 6
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_A, tags: [{ tag: 5, bytes: new Uint8Array(1) }, { tag: 2, bytes: new Uint8Array(1) }], body: metadataV12 }); // 7
    const report = await analyzeScenario(s);
    expect(report.findings.filter((f) => f.rule === 'malformed-request-header').map((f) => f.frame)).toEqual([6, 7]);
  });
});

describe('stream notes', () => {
  it('stream-desync when bytes cannot be framed, and decoding carries on after them', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A); // 4, 5
    c.clientBytes(concat(new Uint8Array([0x7f, 0xff, 0xff, 0xff]), new Uint8Array(10).fill(0xaa))); // 6
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_B, body: metadataV12 }); // 7
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([
      ['stream-desync', 6, '14 bytes from the client could not be framed as Kafka (frame size 2147483647 exceeds the maximum of 104857600 bytes)'],
      ['client-instance-id-changed', 7, `header ClientInstanceId changed from ${ID_A_B64} to ${ID_B_B64} on this connection`],
    ]);
  });

  it('tls-on-kafka-port for a TLS ClientHello on 9092', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.clientBytes(new Uint8Array([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00])); // 4
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([['tls-on-kafka-port', 4, 'TLS connection: its ClientHello does not parse (message cut short); its Kafka contents cannot be analysed']]);
  });

  it('unknown-api-key for a key kcid does not know, decoded as far as the header allows', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A);
    c.request({ apiKey: 999, apiVersion: 0, headerVersion: 1, clientId: 'orders', body: int16(0) }); // 6
    const report = await analyzeScenario(s);
    expect(report.findings.map((f) => [f.rule, f.frame, f.apiKey, f.correlationId, f.message])).toEqual([
      ['client-id-after-first', 6, 999, 2, 'ClientId "orders" sent on a request other than the first of the connection'],
      ['unknown-api-key', 6, 999, 2, 'request with API key 999 unknown to kcid (version 0)'],
    ]);
  });

  it('capture-gap when segments are missing', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    open(c, ID_A); // 4, 5
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 }); // 6 (dropped below)
    c.request({ apiKey: K.Metadata, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 }); // 7
    c.tcp.ack('server'); // acknowledges both
    s.frames.splice(5, 1);
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([['capture-gap', 6, '37 bytes from the client are missing from the capture']]);
    expect(report.counts.requests).toBe(2);
  });
});

describe('UUID bytes in findings', () => {
  it('uuid() of the builder writes the 16 bytes as they are', () => {
    expect(Buffer.from(uuid(ID_A)).toString('base64url')).toBe(ID_A_B64);
  });
});
