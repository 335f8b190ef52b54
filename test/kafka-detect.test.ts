/**
 * One detector for "is this Kafka, which side is the client" on ports not given with --port
 * (src/kafka/detect.ts KafkaDetector), for plaintext connections and TLS sessions' plaintext alike.
 * Every capture is built with the builder: 10.9.0.2:19092 is a broker port kcid learns from a first
 * plaintext connection whose SYN it saw (the default --port is 9092 only).
 */
import { describe, expect, it } from 'vitest';
import { tmpFile } from './builder/capture.js';
import { requestFrame } from './builder/kafka.js';
import { Scenario, type KafkaConn } from './builder/scenario.js';
import { CONTENT, Tls13Session } from './builder/tls.js';
import { analyzeFiles, brief } from './helpers.js';
import { responseTo } from './tls/record.js';

const BROKER = '10.9.0.2:19092';

/** ApiVersions v3 with ClientId "detected": 40 bytes with its size. */
const apiVersions = (correlationId: number): Buffer =>
  Buffer.from(requestFrame({ apiKey: 18, apiVersion: 3, correlationId, clientId: 'detected', body: Buffer.from('0a6b6369642d7465737405302e312e3000', 'hex') }));

/** A plaintext Kafka connection whose SYN the capture sees: kcid learns BROKER's port from it. */
function learnBrokerPort(s: Scenario): void {
  const plain = s.connect({ client: '10.9.0.7:40000', broker: BROKER });
  plain.clientBytes(apiVersions(1));
  plain.serverBytes(responseTo(apiVersions(1)));
  plain.close();
}

/** Requests 2..n: (n - 1) x 40 bytes from the client. */
function laterRequests(n: number): Buffer[] {
  return Array.from({ length: n - 1 }, (_, i) => apiVersions(i + 2));
}

/** The client's first request sent and lost from the capture (its segment removed): the stream starts with a gap. */
function lostFirst(s: Scenario, send: () => void): void {
  const before = s.frames.length;
  send();
  s.frames.splice(before, 1);
}

describe('the detector when the client stream starts with a gap (issue 27 item 4)', () => {
  // 150 requests: the 149 after the lost one are 5,960 bytes, more than the 4,096 the detector keeps.
  const N = 150;

  it('TLS with keys on a learned broker port: decided when the detector is full, no byte vanishes', async () => {
    const s = new Scenario();
    learnBrokerPort(s);
    const tls = new Tls13Session();
    const conn: KafkaConn = s.connect({ client: '10.9.0.1:50001', broker: BROKER });
    conn.clientBytes(tls.clientFirst());
    conn.serverBytes(tls.serverFlight());
    conn.clientBytes(tls.clientFinished());
    lostFirst(s, () => conn.clientBytes(tls.client.seal(CONTENT.APPLICATION_DATA, apiVersions(1))));
    for (const r of laterRequests(N)) conn.clientBytes(tls.client.seal(CONTENT.APPLICATION_DATA, r));
    for (const r of laterRequests(N)) conn.serverBytes(tls.server.seal(CONTENT.APPLICATION_DATA, responseTo(r)));
    conn.close();
    const report = await analyzeFiles([s.file('detect-tls-gap-first.pcap')], { tlsKeylogs: [tmpFile('detect-tls-gap-first.keys', tls.keylog)] });
    // Before: the link kept 4,096 bytes, decided by the port at the end and replayed them: 102 of the 149 requests.
    const tlsConn = report.connections.find((c) => c.client === '10.9.0.1:50001')!;
    expect([tlsConn.requests, tlsConn.responses]).toEqual([N - 1, N - 1]);
    // The lost record: a 5-byte header, 40 bytes of plaintext, its content type and a 16-byte tag. Before, undecided, it went unreported.
    expect(brief(report.findings).filter((f) => f[0] === 'capture-gap').map((f) => f[2])).toEqual(['62 bytes from the client are missing from the capture']);
  });

  it('plaintext on a learned broker port: the same rule, so the connection is Kafka and every later request is read', async () => {
    const s = new Scenario();
    learnBrokerPort(s);
    const conn = s.connect({ client: '10.9.0.1:50002', broker: BROKER });
    lostFirst(s, () => conn.clientBytes(apiVersions(1)));
    for (const r of laterRequests(N)) conn.clientBytes(r);
    for (const r of laterRequests(N)) conn.serverBytes(responseTo(r));
    conn.close();
    const report = await analyzeFiles([s.file('detect-plain-gap-first.pcap')]);
    // Before: the probe filled with bytes that could not tell, said "not Kafka", and the connection was not listed.
    const c = report.connections.find((x) => x.client === '10.9.0.1:50002');
    expect(c === undefined ? null : [c.requests, c.responses]).toEqual([N - 1, N - 1]);
  });

  it('on a port never seen as Kafka, bytes that cannot tell leave the connection out, as before', async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50003', broker: '10.9.0.2:19999' });
    lostFirst(s, () => conn.clientBytes(apiVersions(1)));
    for (const r of laterRequests(N)) conn.clientBytes(r);
    conn.close();
    const report = await analyzeFiles([s.file('detect-unknown-gap-first.pcap')]);
    expect(report.connections).toEqual([]);
  });
});
