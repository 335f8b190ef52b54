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
