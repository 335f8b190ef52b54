/**
 * One detector for "is this Kafka, which side is the client" on ports not given with --port
 * (src/kafka/detect.ts KafkaDetector), for plaintext connections and TLS sessions' plaintext alike.
 * Every capture is built with the builder: 10.9.0.2:19092 is a broker port kcid learns from a first
 * plaintext connection whose SYN it saw (the default --port is 9092 only).
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readCapture } from '../src/capture/read.js';
import { hexBytes, pcapFile, recordingSink, tmpFile } from './builder/capture.js';
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

/** Deterministic bytes that look random (SHA-256 in counter mode), for record data and non-Kafka binary. */
function noise(n: number, seed: string): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0, at = 0; at < n; i++) at += createHash('sha256').update(`${seed}:${i}`).digest().copy(out, at);
  return out;
}

describe('detection past a connection first bytes: captured mid-stream (issue 27 item 1)', () => {
  const MIDSTREAM = '10.9.0.3:29092'; // a port kcid has never seen as Kafka, on no connection whose SYN it holds
  const produce = Buffer.from(requestFrame({ apiKey: 0, apiVersion: 9, correlationId: 1, clientId: 'producer', body: noise(20_000, 'records') }));

  it('a capture starting inside a large Produce finds the client and the requests after it, the bytes before counted', async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50010', broker: MIDSTREAM, handshake: false });
    const before = s.frames.length;
    conn.clientBytes(produce);
    // The capture starts after the Produce's first segment: the first bytes kcid sees are record data.
    const firstSegment = s.frames.splice(before, 1)[0]!;
    const tcpPayload = firstSegment.data.length - 14 - 20 - 20;
    const later = laterRequests(4); // ApiVersions 2, 3, 4
    for (const r of later) conn.clientBytes(r);
    for (const r of later) conn.serverBytes(responseTo(r));
    conn.close();
    const report = await analyzeFiles([s.file('detect-midstream-produce.pcap')]);
    // Before: not found (the first bytes are not a request), and the connection was left out without a word.
    const c = report.connections.find((x) => x.client === '10.9.0.1:50010');
    expect(c === undefined ? null : [c.broker, c.requests, c.responses]).toEqual([MIDSTREAM, 3, 3]);
    // The Produce's tail, from the client, is skipped and said so: its 20,030 bytes less the segment not captured.
    expect(brief(report.findings).filter((f) => f[0] === 'stream-desync').map((f) => f[2])).toEqual([
      `${produce.length - tcpPayload} bytes from the client could not be framed as Kafka (captured mid-stream: before the first frame detection found)`,
    ]);
  });

  it('the client found from the other direction: the side whose stream has requests, whichever sent the first packet', async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50011', broker: MIDSTREAM, handshake: false });
    // The broker's tail of a large Fetch response comes first in the capture, then the client's requests.
    conn.serverBytes(noise(3000, 'fetch-tail'));
    conn.clientBytes(noise(700, 'produce-tail'));
    const later = laterRequests(3);
    for (const r of later) conn.clientBytes(r);
    for (const r of later) conn.serverBytes(responseTo(r));
    conn.close();
    const report = await analyzeFiles([s.file('detect-midstream-either.pcap')]);
    const c = report.connections.find((x) => x.client === '10.9.0.1:50011');
    expect(c === undefined ? null : [c.broker, c.requests, c.responses]).toEqual([MIDSTREAM, 2, 2]);
  });

  it('random and compressed binary TCP on an unknown port, captured mid-stream, is not called Kafka', async () => {
    const s = new Scenario();
    const rand = s.connect({ client: '10.9.0.1:50012', broker: '10.9.0.4:7000', handshake: false });
    for (let i = 0; i < 64; i++) {
      rand.clientBytes(noise(4000, `c${i}`));
      rand.serverBytes(noise(4000, `s${i}`));
    }
    rand.close();
    const zipped = s.connect({ client: '10.9.0.1:50013', broker: '10.9.0.4:7001', handshake: false });
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${i * 7919}\n`).join('');
    zipped.clientBytes(gzipSync(Buffer.from(text)));
    zipped.serverBytes(deflateRawSync(Buffer.from(text)));
    zipped.close();
    const report = await analyzeFiles([s.file('detect-midstream-binary.pcap')]);
    expect(report.connections).toEqual([]);
  });
});

describe('a real capture cut inside its 88 KiB Produce (fixtures/kcat-mock-large.pcap.gz, issue 27 item 1)', () => {
  /** The fixture from frame `from` on, written back as a pcap: the capture starts there. */
  async function cutFixture(from: number, name: string): Promise<string> {
    const { sink, packets } = recordingSink();
    await readCapture('fixtures/kcat-mock-large.pcap.gz', sink);
    const kept = packets.filter((p) => p.frame >= from);
    return tmpFile(name, pcapFile({ linkType: kept[0]!.linkType, nanosecond: true, packets: kept.map((p) => ({ tsSec: p.tsSec, tsNsec: p.tsNsec, data: hexBytes(p.data) })) }));
  }

  it('the producer connection, starting in its Produce (frames 22 and 24 of the 3) with only the Produce response after it, is not guessed: a capture note names its port', async () => {
    // tshark -d tcp.port==45853,kafka: frame 26 is the Produce v3 response (one topic, kcid-fixture), which
    // reads as a Produce v3 request header whose ClientId is the topic: one frame that cannot be confirmed.
    const file = await cutFixture(22, 'kcat-large-cut-produce.pcap');
    const report = await analyzeFiles([file]);
    expect(report.connections.map((c) => `${c.client} -> ${c.broker} ${c.requests}`)).toEqual(['127.0.0.1:58400 -> 127.0.0.1:36057 7', '127.0.0.1:35560 -> 127.0.0.1:45853 9']);
    // As tshark -d tcp.port==36057,kafka -d tcp.port==45853,kafka counts them. Before: no note; the connection vanished without a word.
    expect(report.inputs[0]!.notes).toEqual(['1 TCP connection not recognised as Kafka: port 45853 (1 connection, 149,259 bytes); if a port carries Kafka, list it with --port (for example --port 45853)']);
  });
});
