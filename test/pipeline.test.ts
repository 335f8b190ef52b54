/**
 * Whole-pipeline cases the stage tests cannot show alone: finding Kafka and its broker side,
 * SASL's headerless tokens, port reuse, acks=0, IPv6, and frames cut or packed by TCP.
 */
import { describe, expect, it } from 'vitest';
import { run, type Io } from '../src/cli/main.js';
import {
  apiVersionsRequestBody,
  compactString,
  concat,
  errorCodeResponseBody,
  int16,
  int32,
  saslHandshakeRequestBody,
  saslHandshakeResponseBody,
  string,
  taggedFields,
  uvarint,
} from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { analyzeScenario, ID_A, ID_A_B64 } from './helpers.js';

const metadataV12 = concat(new Uint8Array([0x00, 0x01, 0x00]), taggedFields());

async function requests(s: Scenario, extra: string[] = []): Promise<Record<string, unknown>[]> {
  let stdout = '';
  const io: Io = { stdout: { write: (x: string) => (stdout += x) }, stderr: { write: () => {} }, env: {} };
  await run(['requests', s.file(), '--format', 'ndjson', ...extra], io);
  return stdout === '' ? [] : stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('finding Kafka and the broker side', () => {
  it('detects Kafka on a port it was not told about; --no-detect does not', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:29092' });
    c.respond(c.request({ apiKey: 18, apiVersion: 3, clientId: 'app', body: apiVersionsRequestBody({ softwareName: 'x', softwareVersion: '1' }) }), errorCodeResponseBody({ errorCode: 0, flexible: false }));
    const report = await analyzeScenario(s);
    expect(report.inputs[0]!.kafkaPorts).toEqual([29092]);
    expect(report.connections.map((x) => [x.client, x.broker, x.requests, x.responses])).toEqual([['10.0.0.1:50000', '10.0.0.2:29092', 1, 1]]);
    expect((await analyzeScenario(s, { detect: false })).connections).toEqual([]);
  });

  it('without the SYN, on unknown ports, the side sending requests is the client even if the broker speaks first', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:40000', broker: '10.0.0.2:30000', handshake: false });
    // A response to a request sent before the capture started, then a request and its response.
    c.serverBytes(concat(int32(10), int32(77), new Uint8Array(6)));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 78, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const rows = await requests(s);
    // The response without its request is listed too (as tshark lists it), marked as such.
    expect(rows.map((r) => [r.client, r.broker, r.correlationId, r.clientInstanceId, r.responseFrame, r.requestCaptured])).toEqual([
      ['10.0.0.1:40000', '10.0.0.2:30000', 77, null, 1, false],
      ['10.0.0.1:40000', '10.0.0.2:30000', 78, ID_A_B64, 3, true],
    ]);
  });

  it('a port seen as a broker earlier settles a later connection whose start was missed', async () => {
    const s = new Scenario();
    const first = s.connect({ client: '127.0.0.1:40000', broker: '127.0.0.1:34127' });
    first.respond(first.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const mid = s.connect({ client: '127.0.0.1:54512', broker: '127.0.0.1:34127', handshake: false });
    // The broker speaks first: a response whose correlation id 5 reads as "Produce v5" and whose next
    // bytes read as an empty ClientId, a plausible request on its own.
    mid.serverBytes(concat(int32(16), int32(5), int16(0), new Uint8Array(10)));
    mid.respond(mid.request({ apiKey: 3, apiVersion: 12, correlationId: 6, clientInstanceId: ID_A, body: metadataV12 }));
    const rows = await requests(s);
    expect(rows.map((r) => [r.client, r.broker, r.apiName, r.correlationId])).toEqual([
      ['127.0.0.1:40000', '127.0.0.1:34127', 'Metadata', 1],
      ['127.0.0.1:54512', '127.0.0.1:34127', null, 5],
      ['127.0.0.1:54512', '127.0.0.1:34127', 'Metadata', 6],
    ]);
  });

  it('a TLS connection on an unknown port is not mistaken for Kafka', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:40000', broker: '10.0.0.2:443' });
    c.clientBytes(concat(new Uint8Array([0x16, 0x03, 0x01, 0x00, 0x40]), new Uint8Array(64).fill(1)));
    expect((await analyzeScenario(s)).connections).toEqual([]);
  });
});

describe('SASL', () => {
  it('after SaslHandshake v0, size-prefixed tokens are neither requests nor desync; requests resume after', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const hs = c.request({ apiKey: 17, apiVersion: 0, clientId: 'app', body: saslHandshakeRequestBody('PLAIN') });
    c.respond(hs, saslHandshakeResponseBody({ errorCode: 0, mechanisms: ['PLAIN'] }));
    // PLAIN token: authzid NUL user NUL password, with no Kafka header (KIP-43).
    c.clientBytes(concat(int32(16), new Uint8Array([0]), Buffer.from('alice'), new Uint8Array([0]), Buffer.from('secret123')));
    c.serverBytes(int32(0));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(report.findings).toEqual([]);
    expect(report.counts.requests).toBe(2);
    const rows = await requests(s);
    expect(rows.map((r) => r.apiName)).toEqual(['SaslHandshake', 'Metadata']);
    expect(JSON.stringify(rows)).not.toContain('alice');
  });
});

describe('TCP in the pipeline', () => {
  it('a request cut across segments and requests packed into one segment are each seen once, in their last byte\'s frame', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 20 });
    c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }); // 39 bytes in 2 segments: frames 4, 5
    const packed = s.connect({ client: '10.0.0.3:50000', broker: '10.0.0.2:9092' });
    // Metadata v8 headers with an empty body: 10 bytes each, both in one segment (frame 9).
    const req = (corr: number) => concat(int32(10), int16(3), int16(8), int32(corr), string(null));
    packed.clientBytes(concat(req(1), req(2)));
    const rows = await requests(s);
    expect(rows.map((r) => [r.frame, r.client, r.correlationId])).toEqual([
      [5, '10.0.0.1:50000', 1],
      [9, '10.0.0.3:50000', 1],
      [9, '10.0.0.3:50000', 2],
    ]);
  });

  it('a snapshot length that keeps each request header but cuts the rest: every request is still seen, framing stays in sync', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    // Ethernet (14) + IPv4 (20) + TCP (20) + size (4) + Metadata v12 header v2 with ClientId "app" and tag 0 (33).
    const snaplen = 14 + 20 + 20 + 4 + 33;
    const big = concat(metadataV12, new Uint8Array(400)); // a body the capture cuts (its bytes are not decoded)
    // A whole Metadata v12 response of 300 bytes: ThrottleTimeMs, no Brokers, a ClusterId of 287 bytes, ControllerId, no Topics, no tags.
    const metadataV12Response300 = concat(int32(0), uvarint(1), compactString('c'.repeat(287)), int32(0), uvarint(1), uvarint(0));
    expect(metadataV12Response300.length).toBe(300);
    for (let corr = 1; corr <= 3; corr++) {
      c.request({ apiKey: 3, apiVersion: 12, correlationId: corr, clientId: corr === 1 ? 'app' : null, clientInstanceId: ID_A, body: big });
      c.respond(corr, metadataV12Response300);
    }
    const full = new Scenario();
    full.frames.push(...s.frames);
    const rows = async (file: string) => {
      let stdout = '';
      const io: Io = { stdout: { write: (x: string) => (stdout += x) }, stderr: { write: () => {} }, env: {} };
      await run(['requests', file, '--format', 'ndjson'], io);
      return stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    };
    const cut = await rows(s.file('snaplen.pcap', { snaplen }));
    expect(cut.map((r) => [r.frame, r.apiName, r.correlationId, r.clientId, r.clientInstanceId, r.responseFrame])).toEqual([
      [4, 'Metadata', 1, 'app', ID_A_B64, 5],
      [6, 'Metadata', 2, null, ID_A_B64, 7],
      [8, 'Metadata', 3, null, ID_A_B64, 9],
    ]);
    expect(cut).toEqual(await rows(full.file('full.pcap')));
    const report = await analyzeScenario(s);
    expect(report.findings).toEqual([]);
  });

  it('port reuse: a new SYN after a close is a new connection', async () => {
    const s = new Scenario();
    for (let i = 0; i < 2; i++) {
      const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', clientIsn: 1000 + i * 1_000_000 });
      c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
      c.close();
    }
    const report = await analyzeScenario(s);
    expect(report.connections.map((c) => [c.client, c.firstFrame, c.requests])).toEqual([
      ['10.0.0.1:50000', 1, 1],
      ['10.0.0.1:50000', 9, 1],
    ]);
  });

  it('Produce with acks=0 expects no response', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    // Produce v3: TransactionalId null, Acks 0, TimeoutMs, no topics.
    c.request({ apiKey: 0, apiVersion: 3, clientId: 'app', body: concat(int16(-1), int16(0), int32(1000), int32(0)) });
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 }));
    const rows = await requests(s);
    expect(rows.map((r) => [r.apiName, r.correlationId, r.responseFrame])).toEqual([
      ['Produce', 1, null],
      ['Metadata', 2, 6],
    ]);
  });

  it('IPv6 endpoints print as [addr]:port', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '[2001:db8::10]:50000', broker: '[2001:db8::1]:9092' });
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(report.connections.map((x) => [x.client, x.broker, x.clientIp])).toEqual([['[2001:db8::10]:50000', '[2001:db8::1]:9092', '2001:db8::10']]);
  });
});
