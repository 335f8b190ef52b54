/**
 * The fuzzer's seed corpus: the real captures in fixtures/ and a few built captures that reach
 * what the real ones do not (KIP-1313 tag 0, telemetry bodies, ConsumerGroupHeartbeat, SASL's
 * headerless tokens, unknown APIs, hostile ClientIds, IPv6, port detection, pcapng, gzip). Built
 * with the test builders, so every byte is explained there. The order is fixed: a case's seed
 * is chosen by index.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  apiVersionsRequestBody,
  concat,
  consumerGroupHeartbeatRequestBody,
  consumerGroupHeartbeatResponseBody,
  errorCodeResponseBody,
  getTelemetrySubscriptionsRequestBody,
  getTelemetrySubscriptionsResponseBody,
  int16,
  int32,
  pushTelemetryRequestBody,
  requestFrame,
  responseFrame,
  saslHandshakeRequestBody,
  saslHandshakeResponseBody,
  sizePrefixed,
  taggedFields,
  utf8,
} from '../../test/builder/kafka.js';
import { Scenario } from '../../test/builder/scenario.js';
import { pcapngFile } from '../../test/builder/capture.js';
import { CONTENT, Tls13Session } from '../../test/builder/tls.js';
import { LinkType, SECRETS_TLS_KEY_LOG } from '../../src/capture/types.js';
import { seedOf, type Seed } from './mutate.js';

const ID = Uint8Array.from(Buffer.from('0123456789abcdef0123456789abcdef', 'hex'));
const OTHER_ID = Uint8Array.from(Buffer.from('f0e1d2c3b4a5968778695a4b3c2d1e0f', 'hex'));
/** A ClientId that tries every trick on a terminal: SGR, an OSC title, C1 CSI, a bidi override, a NUL. */
export const HOSTILE_CLIENT_ID = 'evil\u001b[31mred\u001b]0;pwned\u0007\u009b2J\u202egnp.exe\u0000end';

const metadataV12 = concat(Uint8Array.of(0x00, 0x01, 0x00), taggedFields());

function gtsResponse(version: number, clientInstanceId?: Uint8Array): Uint8Array {
  return getTelemetrySubscriptionsResponseBody(version, {
    throttleTimeMs: 0,
    errorCode: 0,
    ...(clientInstanceId === undefined ? {} : { clientInstanceId }),
    subscriptionId: 7,
    acceptedCompressionTypes: [4, 3],
    pushIntervalMs: 30000,
    telemetryMaxBytes: 1048576,
    deltaTemporality: true,
    requestedMetrics: ['org.apache.kafka.'],
  });
}

/** A KIP-1313 client doing a bit of everything on one connection, and a legacy one on another. */
function kip1313Scenario(): Scenario {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 200 });
  c.respond(
    c.request({
      apiKey: 18,
      apiVersion: 4,
      clientId: 'orders',
      clientInstanceId: ID,
      tags: [{ tag: 5, bytes: Uint8Array.of(1, 2, 3) }],
      body: apiVersionsRequestBody({ softwareName: 'apache-kafka-java', softwareVersion: '4.3.0' }),
    }),
    errorCodeResponseBody({ errorCode: 0, flexible: false }),
  );
  c.respond(c.request({ apiKey: 3, apiVersion: 12, clientInstanceId: ID, body: metadataV12 }));
  c.respond(c.request({ apiKey: 71, apiVersion: 1, clientInstanceId: ID, body: getTelemetrySubscriptionsRequestBody(1) }), gtsResponse(1));
  c.respond(
    c.request({
      apiKey: 72,
      apiVersion: 1,
      clientInstanceId: ID,
      body: pushTelemetryRequestBody(1, { subscriptionId: 7, terminating: false, compressionType: 4, metrics: new Uint8Array(300) }),
    }),
    errorCodeResponseBody({ throttleTimeMs: 0, errorCode: 0, flexible: true }),
  );
  c.respond(
    c.request({
      apiKey: 68,
      apiVersion: 0,
      clientInstanceId: ID,
      body: consumerGroupHeartbeatRequestBody(0, { groupId: 'g\u001b[2Jroup', memberId: 'not-the-id', memberEpoch: 0 }),
    }),
    consumerGroupHeartbeatResponseBody({ throttleTimeMs: 0, errorCode: 0, memberId: 'm', memberEpoch: 1, heartbeatIntervalMs: 5000 }),
  );
  c.respond(c.request({ apiKey: 71, apiVersion: 0, clientInstanceId: OTHER_ID, clientId: 'again', body: getTelemetrySubscriptionsRequestBody(0, ID) }), gtsResponse(0, OTHER_ID));
  c.request({ apiKey: 200, apiVersion: 3, headerVersion: 1, clientId: 'future' });
  c.close();

  const legacy = s.connect({ client: '10.0.0.3:40000', broker: '10.0.0.2:9092' });
  legacy.respond(legacy.request({ apiKey: 18, apiVersion: 3, clientId: HOSTILE_CLIENT_ID, body: apiVersionsRequestBody({ softwareName: 'x\u001b]0;t\u0007', softwareVersion: '\u202e1' }) }));
  legacy.respond(legacy.request({ apiKey: 71, apiVersion: 0, clientId: '__proto__', body: getTelemetrySubscriptionsRequestBody(0) }), gtsResponse(0, OTHER_ID));
  legacy.respond(legacy.request({ apiKey: 3, apiVersion: 8, clientId: 'constructor', body: Uint8Array.of(0xff, 0xff, 0xff, 0xff, 1, 0, 0) }));
  legacy.close();
  return s;
}

/** SASL with SaslHandshake v0 (KIP-43): headerless tokens, then requests again. No handshake in the capture. */
function saslScenario(): Scenario {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.0.5:51000', broker: '10.0.0.6:9092' });
  c.respond(c.request({ apiKey: 17, apiVersion: 0, clientId: 'sasl', body: saslHandshakeRequestBody('PLAIN') }), saslHandshakeResponseBody({ errorCode: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-512'] }));
  c.clientBytes(sizePrefixed(utf8('\u0000user\u0000secret')));
  c.serverBytes(int32(0));
  c.respond(c.request({ apiKey: 3, apiVersion: 8, clientId: 'sasl', body: Uint8Array.of(0xff, 0xff, 0xff, 0xff, 1, 0, 0) }));
  c.close();
  return s;
}

/** Mid-stream IPv6 on a port kcid must detect, segmented small, with a lost segment. */
function detectScenario(): Scenario {
  const s = new Scenario();
  const c = s.connect({ client: '[2001:db8::1]:40001', broker: '[2001:db8::2]:19092', handshake: false, mss: 37 });
  c.respond(c.request({ apiKey: 18, apiVersion: 3, clientId: 'v6', clientInstanceId: ID, body: apiVersionsRequestBody({ softwareName: 'librdkafka', softwareVersion: '2.15.1' }) }));
  c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: null, clientInstanceId: ID, body: metadataV12 }));
  c.request({ apiKey: 12, apiVersion: 4, clientId: null, clientInstanceId: ID, body: concat(Uint8Array.of(2, 0x67), int32(1), Uint8Array.of(1, 0), taggedFields()) });
  c.close();
  // A segment lost from the middle: a gap the framer must step over.
  s.frames.splice(6, 1);
  return s;
}

/**
 * TLS 1.3 with its key log inside the pcapng (a Decryption Secrets Block): handshake, requests
 * across records and segments, a KeyUpdate, an alert; so mutants reach the record layer and decryption.
 */
function tlsWithSecrets(): Buffer {
  const t = new Tls13Session();
  const s = new Scenario();
  const c = s.connect({ client: '10.0.0.7:52000', broker: '10.0.0.8:9093', mss: 120 });
  c.clientBytes(t.clientFirst());
  c.serverBytes(t.serverFlight());
  c.clientBytes(t.clientFinished());
  const request = (correlationId: number, clientInstanceId: Uint8Array | null): Buffer =>
    Buffer.from(requestFrame({ apiKey: 18, apiVersion: 4, correlationId, clientId: 'tls', clientInstanceId, body: apiVersionsRequestBody({ softwareName: 'k', softwareVersion: '1' }) }));
  c.clientBytes(t.client.seal(CONTENT.APPLICATION_DATA, request(1, ID)));
  c.serverBytes(t.server.seal(CONTENT.APPLICATION_DATA, Buffer.from(responseFrame({ correlationId: 1, headerVersion: 0, body: errorCodeResponseBody({ errorCode: 0, flexible: false }) }))));
  c.clientBytes(t.client.keyUpdate());
  c.clientBytes(Buffer.concat([t.client.seal(CONTENT.APPLICATION_DATA, request(2, OTHER_ID)), t.client.seal(CONTENT.ALERT, Buffer.of(2, 80))]));
  c.close();
  const keylog = Buffer.from(t.keylog);
  const body = Buffer.alloc(8 + Math.ceil(keylog.length / 4) * 4);
  body.writeUInt32LE(SECRETS_TLS_KEY_LOG, 0);
  body.writeUInt32LE(keylog.length, 4);
  keylog.copy(body, 8);
  return pcapngFile({
    sections: [
      {
        interfaces: [{ linkType: LinkType.ETHERNET, tsresol: 9 }],
        blocks: [
          { type: 'raw', blockType: 0x0a, body },
          ...s.frames.map((f) => ({ type: 'epb' as const, interfaceId: 0, tsSec: f.tsSec, tsNsec: f.tsNsec, data: f.data })),
        ],
      },
    ],
  });
}

/** SASL by mechanism (issue 13): PLAIN with a token that reads as a request, SCRAM, OAUTHBEARER's error round, GSSAPI. */
function saslMechanismsScenario(): Scenario {
  const s = new Scenario();
  // authzid '', user "\x03", password 0x08 "AAAA" 0xff 0xff ...: reads as a Metadata v8 header.
  const phantom = sizePrefixed(concat(Uint8Array.of(0, 3, 0, 8), utf8('AAAA'), Uint8Array.of(0xff, 0xff), utf8('secret')));
  const mechanisms: [string, (c: ReturnType<Scenario['connect']>) => void][] = [
    ['PLAIN', (c) => { c.clientBytes(phantom); c.serverBytes(int32(0)); }],
    ['SCRAM-SHA-256', (c) => {
      c.clientBytes(sizePrefixed(utf8('n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL')));
      c.serverBytes(sizePrefixed(utf8('r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096')));
      c.clientBytes(phantom);
      c.serverBytes(sizePrefixed(utf8('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')));
    }],
    ['OAUTHBEARER', (c) => {
      c.clientBytes(sizePrefixed(utf8('n,,\u0001auth=Bearer eyJ\u0001\u0001')));
      c.serverBytes(sizePrefixed(utf8('{"status":"invalid_token"}')));
      c.clientBytes(sizePrefixed(Uint8Array.of(1)));
      c.serverBytes(int32(0));
    }],
    ['GSSAPI', (c) => { c.clientBytes(phantom); c.serverBytes(sizePrefixed(new Uint8Array(40).fill(0x60))); c.clientBytes(int32(0)); }],
  ];
  for (const [i, [mechanism, exchange]] of mechanisms.entries()) {
    const c = s.connect({ client: `10.0.1.${i + 1}:51000`, broker: '10.0.0.6:9092', mss: 60 });
    c.respond(c.request({ apiKey: 17, apiVersion: 0, clientId: 'sasl', body: saslHandshakeRequestBody(mechanism) }), saslHandshakeResponseBody({ errorCode: 0, mechanisms: [mechanism] }));
    exchange(c);
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 2, clientInstanceId: ID, body: metadataV12 }));
    c.close();
  }
  return s;
}

/** TCP at the edges (issue 13): RSTs outside and inside the window, window scaling, keep-alives, a zero-window probe. */
function tcpEdgesScenario(): Scenario {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.2.1:52000', broker: '10.0.0.6:9092', handshake: false });
  const t = c.tcp;
  s.add([t.raw('client', { flags: 'S', seq: t.clientSeq - 1, ack: 0, window: 64240, options: [2, 4, 5, 0xb4, 1, 3, 3, 7] })]);
  s.add([t.raw('server', { flags: 'SA', seq: t.serverSeq - 1, window: 65160, options: [2, 4, 5, 0xb4, 1, 3, 3, 7] })]);
  s.add([t.raw('client', { flags: 'A', window: 502 })]);
  c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'tcp', clientInstanceId: ID, body: metadataV12 }));
  s.add([t.raw('server', { flags: 'R', seq: t.serverSeq + 100_000_000 }), t.raw('client', { flags: 'RA', seq: t.clientSeq - 70_000 })]);
  s.add([t.raw('client', { flags: 'A', seq: t.clientSeq - 1, payload: Uint8Array.of(0) }), t.raw('server', { flags: 'A', window: 0 })]);
  s.add([t.raw('client', { flags: 'A', payload: Uint8Array.of(0) }), t.raw('server', { flags: 'A', window: 509 })]);
  c.respond(c.request({ apiKey: 3, apiVersion: 12, clientInstanceId: ID, body: metadataV12 }));
  s.add([t.raw('server', { flags: 'RA', seq: t.serverSeq + 1000 })]);
  // Mid-connection: the broker speaks first, then a keep-alive below its acknowledgement.
  const m = s.connect({ client: '10.0.2.2:52001', broker: '10.0.0.6:9092', handshake: false });
  m.serverBytes(concat(int32(8), int32(41), int32(0)));
  s.add([m.tcp.raw('client', { flags: 'A', seq: m.tcp.clientSeq - 1, payload: Uint8Array.of(0) })]);
  m.respond(m.request({ apiKey: 3, apiVersion: 12, correlationId: 42, clientId: 'mid', clientInstanceId: ID, body: metadataV12 }));
  m.close();
  return s;
}

/** Who is the client and what it is called (issue 13): UTF-8 ClientIds on a port to detect, a broker speaking first after the SYN, ClientId changes. */
function namesScenario(): Scenario {
  const s = new Scenario();
  const d = s.connect({ client: '10.0.3.1:53000', broker: '10.0.0.7:29092' });
  d.serverBytes(sizePrefixed(concat(int16(3), int16(8), int32(9), int16(3), utf8('srv'), int32(-1))));
  d.respond(d.request({ apiKey: 18, apiVersion: 3, clientId: 'café-orders', body: apiVersionsRequestBody({ softwareName: '注文-service', softwareVersion: '1' }) }));
  d.respond(d.request({ apiKey: 3, apiVersion: 12, clientId: '', clientInstanceId: ID, body: metadataV12 }));
  const legacy = s.connect({ client: '10.0.3.2:53001', broker: '10.0.0.7:9092' });
  for (const id of ['注文-service', 'other']) legacy.respond(legacy.request({ apiKey: 3, apiVersion: 8, clientId: id, body: Uint8Array.of(0xff, 0xff, 0xff, 0xff, 1, 0, 0) }));
  return s;
}

/** Response resync (issue 13): a Fetch response's head lost, its payload holding a size and a pending correlation ID mid-segment. */
function resyncScenario(): Scenario {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.4.1:54000', broker: '10.0.0.8:9092', mss: 1000 });
  const fetch = c.request({ apiKey: 1, apiVersion: 11, clientId: 'resync', body: new Uint8Array(40) });
  const versions = c.request({ apiKey: 18, apiVersion: 3, clientId: null, body: concat(Uint8Array.of(2, 0x78, 2, 0x31), taggedFields()) });
  const payload = new Uint8Array(2990).fill(0x33);
  payload.set(concat(int32(12), int32(versions), int16(0x7f7f)), 1500);
  payload.set(concat(int32(12), int32(versions), int16(0)), 2200);
  const before = s.frames.length;
  c.respond(fetch, concat(int32(0), int16(0), int32(0), payload));
  s.frames.splice(before, 1);
  c.respond(versions, concat(int16(0), Uint8Array.of(1), int32(0), taggedFields()));
  c.close();
  return s;
}

/** An idle pause (issue 13): past --idle-timeout, a keep-alive, then the same connection going on with a ClientId. */
function idleScenario(): Scenario {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.5.1:55000', broker: '10.0.0.9:9092' });
  c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'idle', clientInstanceId: ID, body: metadataV12 }));
  s.wait(700);
  s.add([c.tcp.raw('client', { flags: 'A', seq: c.tcp.clientSeq - 1, payload: Uint8Array.of(0) }), c.tcp.raw('server', { flags: 'A' })]);
  c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'idle', clientInstanceId: ID, body: metadataV12 }));
  c.close();
  return s;
}

function built(): Seed[] {
  const kip = kip1313Scenario();
  const sasl = saslScenario();
  const detect = detectScenario();
  return [
    seedOf('built:kip1313.pcap', kip.pcap()),
    seedOf('built:kip1313-be-ns.pcap', kip.pcap({ bigEndian: true, nanosecond: true })),
    seedOf('built:kip1313.pcapng', kip.pcapng()),
    seedOf('built:sasl.pcap', sasl.pcap()),
    seedOf('built:detect-v6.pcap', detect.pcap()),
    seedOf('built:sasl.pcap.gz', gzipSync(sasl.pcap())),
    seedOf('built:tls13-secrets.pcapng', tlsWithSecrets()),
    seedOf('built:sasl-mechanisms.pcap', saslMechanismsScenario().pcap()),
    seedOf('built:tcp-edges.pcap', tcpEdgesScenario().pcap()),
    seedOf('built:names.pcapng', namesScenario().pcapng()),
    seedOf('built:resync.pcap', resyncScenario().pcap()),
    seedOf('built:idle.pcap', idleScenario().pcap()),
  ];
}

/** Every seed: the fixtures (sorted by name, at most 64 KiB each) then the built ones. */
export function loadSeeds(fixturesDir: string): Seed[] {
  const fixtures = readdirSync(fixturesDir)
    // Small plain captures only: a case must run in milliseconds, and mutated gzip mostly tests zlib.
    .filter((f) => /\.(pcap|pcapng)$/.test(f) && statSync(join(fixturesDir, f)).size <= 64 * 1024)
    .sort()
    .map((f) => seedOf(`fixtures/${f}`, readFileSync(join(fixturesDir, f))));
  return [...fixtures, ...built()];
}

/** A small built capture, for sweeps over every truncation offset. */
export function smallSeed(): Seed {
  const s = new Scenario();
  const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
  c.respond(c.request({ apiKey: 18, apiVersion: 4, clientId: 'tiny', clientInstanceId: ID, body: apiVersionsRequestBody({ softwareName: 'k', softwareVersion: '1' }) }), errorCodeResponseBody({ errorCode: 0, flexible: false }));
  c.request({ apiKey: 3, apiVersion: 12, clientId: null, clientInstanceId: ID, body: metadataV12 });
  return seedOf('built:tiny.pcap', s.pcap());
}
