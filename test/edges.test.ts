/**
 * Issue 13, traffic at the edges: SASL tokens followed by mechanism, TCP resets and idle gaps,
 * keep-alives, which side is the client, a connection's ClientId, and response resync. Each class
 * has a case the old code got wrong and a case that shows the new rule does not overreach.
 */
import { describe, expect, it } from 'vitest';
import { run, type Io } from '../src/cli/main.js';
import { concat, int16, int32, minimalResponseBody, requestFrame, responseFrame, saslHandshakeRequestBody, saslHandshakeResponseBody, taggedFields } from './builder/kafka.js';
import { Scenario, type KafkaConn } from './builder/scenario.js';
import { analyzeScenario, brief, ID_A } from './helpers.js';

const metadataV12 = concat(new Uint8Array([0x00, 0x01, 0x00]), taggedFields());

async function requests(s: Scenario, extra: string[] = []): Promise<Record<string, unknown>[]> {
  let stdout = '';
  const io: Io = { stdout: { write: (x: string) => (stdout += x) }, stderr: { write: () => {} }, env: {} };
  await run(['requests', s.file(), '--format', 'ndjson', ...extra], io);
  // Requests only: responses whose request was not captured are rows too (requestCaptured: false).
  return stdout === '' ? [] : stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.requestCaptured !== false);
}

const text = (s: string): Uint8Array => Buffer.from(s, 'utf8');
/** A bare size-prefixed SASL token (KIP-43: no Kafka header). */
const token = (...parts: Uint8Array[]): Uint8Array => {
  const body = concat(...parts);
  return concat(int32(body.length), body);
};

/** SaslHandshake v0 for `mechanism`, answered with success: the tokens that follow are bare. */
function handshake(c: KafkaConn, mechanism: string): void {
  const hs = c.request({ apiKey: 17, apiVersion: 0, clientId: 'app', body: saslHandshakeRequestBody(mechanism) });
  c.respond(hs, saslHandshakeResponseBody({ errorCode: 0, mechanisms: [mechanism] }));
}

/**
 * A PLAIN token (RFC 4616: authzid NUL authcid NUL passwd) whose bytes read as a whole Metadata v8
 * request header (header v1): authzid empty, user U+0003 (API key 3), a password that starts 0x08
 * (version 8), "AAAA" (correlation ID 1094795585) and 0xff 0xff (a null ClientId: RFC 4616 asks for
 * UTF-8, but a broker passes the password's bytes on as they come), then the rest of the password.
 */
const phantomPlain = token(
  Uint8Array.of(0x00, 0x03, 0x00), // authzid '', NUL, user "\x03", NUL: key 3, version 0x00..
  Uint8Array.of(0x08), // ..08
  text('AAAA'), // correlation ID 1094795585
  Uint8Array.of(0xff, 0xff), // ClientId length -1: null
  text('secret'),
);

describe('SASL tokens follow the mechanism (KIP-43 after SaslHandshake v0)', () => {
  it('PLAIN: one client token and the answer, even when the token reads as a request header', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    handshake(c, 'PLAIN');
    c.clientBytes(phantomPlain);
    c.serverBytes(int32(0)); // success: an empty token
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 2, clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([]);
    expect(report.counts.requests).toBe(2);
    const rows = await requests(s);
    expect(rows.map((r) => [r.apiName, r.correlationId, r.responseFrame])).toEqual([
      ['SaslHandshake', 1, 5],
      ['Metadata', 2, 9],
    ]);
    expect(JSON.stringify(rows)).not.toContain('secret');
  });

  it("PLAIN: the broker's empty token after the client's next request is still a token, not a desync", async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    handshake(c, 'PLAIN');
    c.clientBytes(token(text('\0alice\0secret123')));
    const next = c.request({ apiKey: 3, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 });
    c.serverBytes(int32(0)); // the capture shows the empty token after the request (tcpdump -i any reorders)
    c.respond(next);
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([]);
    expect((await requests(s)).map((r) => [r.apiName, r.responseFrame])).toEqual([
      ['SaslHandshake', 5],
      ['Metadata', 9],
    ]);
  });

  it('SCRAM-SHA-256: two client messages and two server messages (RFC 5802), then requests', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    handshake(c, 'SCRAM-SHA-256');
    c.clientBytes(token(text('n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL')));
    c.serverBytes(token(text('r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096')));
    // client-final: bytes that read as a request header (a phantom to the old heuristic)
    c.clientBytes(phantomPlain);
    c.serverBytes(token(text('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 2, clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([]);
    expect((await requests(s)).map((r) => [r.apiName, r.correlationId, r.responseFrame])).toEqual([
      ['SaslHandshake', 1, 5],
      ['Metadata', 2, 11],
    ]);
  });

  it('OAUTHBEARER: an error answer adds one round (RFC 7628 §3.2.3); a success ends at once', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    handshake(c, 'OAUTHBEARER');
    c.clientBytes(token(text('n,,\x01auth=Bearer eyJhbGciOi\x01\x01')));
    c.serverBytes(token(text('{"status":"invalid_token"}')));
    c.clientBytes(phantomPlain); // stands for the client's %x01: still a token, whatever its bytes
    c.serverBytes(int32(0));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 2, clientInstanceId: ID_A, body: metadataV12 }));
    expect(brief((await analyzeScenario(s)).findings)).toEqual([]);
    expect((await requests(s)).map((r) => [r.apiName, r.correlationId])).toEqual([
      ['SaslHandshake', 1],
      ['Metadata', 2],
    ]);

    const ok = new Scenario();
    const d = ok.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    handshake(d, 'OAUTHBEARER');
    d.clientBytes(token(text('n,,\x01auth=Bearer eyJhbGciOi\x01\x01')));
    d.serverBytes(int32(0));
    // A request right after: not swallowed as the second round's token.
    d.respond(d.request({ apiKey: 3, apiVersion: 12, correlationId: 2, clientInstanceId: ID_A, body: metadataV12 }));
    expect((await requests(ok)).map((r) => [r.apiName, r.correlationId, r.responseFrame])).toEqual([
      ['SaslHandshake', 1, 5],
      ['Metadata', 2, 9],
    ]);
  });

  it('GSSAPI: tokens until a well-formed request whose correlation ID continues the sequence', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    handshake(c, 'GSSAPI');
    c.clientBytes(phantomPlain); // reads as Metadata v8 with correlation ID 1094795585: far from 1
    c.serverBytes(token(new Uint8Array(40).fill(0x60)));
    c.clientBytes(token(new Uint8Array(0)));
    c.serverBytes(token(new Uint8Array(8).fill(0x05)));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 2, clientInstanceId: ID_A, body: metadataV12 }));
    expect(brief((await analyzeScenario(s)).findings)).toEqual([]);
    expect((await requests(s)).map((r) => [r.apiName, r.correlationId, r.responseFrame])).toEqual([
      ['SaslHandshake', 1, 5],
      ['Metadata', 2, 11],
    ]);
  });

  it('an exchange the capture lost bytes of is no longer counted: it ends at the first plain request', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    handshake(c, 'SCRAM-SHA-512');
    const lost = s.frames.length;
    c.clientBytes(token(text('n,,n=user,r=rOprNGfwEbeRWgbNEkqO')));
    s.frames.splice(lost, 1); // client-first is lost: the count of the exchange is unknown
    c.serverBytes(token(text('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096')));
    c.clientBytes(token(text('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=')));
    c.serverBytes(token(text('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 2, clientInstanceId: ID_A, body: metadataV12 }));
    expect((await requests(s)).map((r) => [r.apiName, r.correlationId, r.responseFrame])).toEqual([
      ['SaslHandshake', 1, 5],
      ['Metadata', 2, 10],
    ]);
  });

  it('SaslHandshake v1 (KIP-152) starts no token mode: SaslAuthenticate is a request like any other', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const hs = c.request({ apiKey: 17, apiVersion: 1, clientId: 'app', body: saslHandshakeRequestBody('PLAIN') });
    c.respond(hs, saslHandshakeResponseBody({ errorCode: 0, mechanisms: ['PLAIN'] }));
    const auth = c.request({ apiKey: 36, apiVersion: 2, clientInstanceId: ID_A, body: concat(Uint8Array.of(17), text('\0alice\0secret1'), taggedFields()) });
    c.respond(auth, concat(int16(0), Uint8Array.of(0, 1), Uint8Array.of(0), int32(0), int32(0), taggedFields()));
    const rows = await requests(s);
    expect(rows.map((r) => [r.apiName, r.correlationId])).toEqual([
      ['SaslHandshake', 1],
      ['SaslAuthenticate', 2],
    ]);
    expect(JSON.stringify(rows)).not.toContain('alice');
  });
});

describe("a connection's ClientId is its first request's", () => {
  it('KIP-1313: an empty ClientId sent later is client-id-after-first, not a second name', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: '', clientInstanceId: ID_A, body: metadataV12 }));
    const d = s.connect({ client: '10.0.0.1:50001', broker: '10.0.0.2:9092' });
    d.respond(d.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([['client-id-after-first', 6, 'ClientId "" sent on a request other than the first of the connection']]);
    expect(report.connections.map((x) => x.clientIds)).toEqual([['app'], ['app']]);
    expect(report.instances.map((i) => i.clientIds)).toEqual([['app']]);
  });

  it('legacy: the same ClientId on every request is fine; a different one is a note, and the name stays', async () => {
    const s = new Scenario();
    const same = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    for (let i = 0; i < 2; i++) same.respond(same.request({ apiKey: 3, apiVersion: 8, clientId: 'app', headerVersion: 1, body: new Uint8Array(0) }));
    const changed = s.connect({ client: '10.0.0.1:50001', broker: '10.0.0.2:9092' });
    for (const id of ['app', 'other', 'third']) changed.respond(changed.request({ apiKey: 3, apiVersion: 8, clientId: id, headerVersion: 1, body: new Uint8Array(0) }));
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([['client-id-changed', 13, 'ClientId changed on one connection: "app" first, then "other"']]);
    expect(report.findings[0]!.severity).toBe('info');
    expect(report.connections.map((x) => x.clientIds)).toEqual([['app'], ['app']]);
  });

  it('a connection that turns out to send tag 0 gets client-id-after-first, not client-id-changed', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.respond(c.request({ apiKey: 3, apiVersion: 8, clientId: 'app', headerVersion: 1, body: new Uint8Array(0) }));
    c.respond(c.request({ apiKey: 3, apiVersion: 8, clientId: 'other', headerVersion: 1, body: new Uint8Array(0) }));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(report.findings.map((f) => f.rule)).toEqual(['client-id-after-first']);
  });
});

describe('which side is the client', () => {
  it('detection accepts any valid UTF-8 ClientId, and still rejects invalid UTF-8 and control characters', async () => {
    const detected = async (clientId: Uint8Array): Promise<string[]> => {
      const s = new Scenario();
      const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:29092' });
      // Metadata v8 (header v1) with this ClientId's bytes.
      c.clientBytes(token(int16(3), int16(8), int32(1), int16(clientId.length), clientId, int32(-1), Uint8Array.of(0, 0, 0)));
      return (await analyzeScenario(s)).connections.map((x) => `${x.client} ${x.clientIds.join()}`);
    };
    expect(await detected(text('café-orders'))).toEqual(['10.0.0.1:50000 café-orders']);
    expect(await detected(text('注文-service'))).toEqual(['10.0.0.1:50000 注文-service']);
    expect(await detected(text('emoji-🦊'))).toEqual(['10.0.0.1:50000 emoji-🦊']);
    expect(await detected(Uint8Array.of(0x61, 0xc3, 0x28))).toEqual([]); // a lead byte without its continuation
    expect(await detected(Uint8Array.of(0x61, 0xc0, 0xaf))).toEqual([]); // overlong '/'
    expect(await detected(Uint8Array.of(0x61, 0xed, 0xa0, 0x80))).toEqual([]); // a UTF-16 surrogate
    expect(await detected(Uint8Array.of(0x61, 0xc2, 0x85))).toEqual([]); // U+0085, a C1 control
    expect(await detected(Uint8Array.of(0x61, 0x1b, 0x5b))).toEqual([]); // ESC
    expect(await detected(Uint8Array.of(0x61, 0x7f))).toEqual([]); // DEL
  });

  it('the SYN decides before any heuristic: a broker that speaks first in request-like bytes is not the client', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:40000', broker: '10.0.0.2:30000' });
    // The server's first bytes read as a Metadata v8 request with ClientId "srv".
    c.serverBytes(token(int16(3), int16(8), int32(9), int16(3), text('srv'), int32(-1), Uint8Array.of(0, 0, 0)));
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 9, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const rows = await requests(s);
    expect(rows.map((r) => [r.client, r.broker, r.apiName, r.correlationId, r.responseFrame])).toEqual([
      ['10.0.0.1:40000', '10.0.0.2:30000', 'Metadata', 9, 6],
    ]);
  });

  it('the SYN+ACK decides as well: the side it answers is the client, even on a Kafka port', async () => {
    const s = new Scenario();
    // The client's port is 9092 too (--port lists both): the SYN+ACK's target is the client.
    const c = s.connect({ client: '10.0.0.1:9092', broker: '10.0.0.2:9093', handshake: false });
    s.add([c.tcp.raw('server', { flags: 'SA', seq: c.tcp.serverSeq - 1, ack: c.tcp.clientSeq })]);
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s, { kafkaPorts: new Set([9092, 9093]) });
    expect(report.connections.map((x) => [x.client, x.broker, x.requests, x.responses])).toEqual([['10.0.0.1:9092', '10.0.0.2:9093', 1, 1]]);
  });
});

describe('TCP: a RST ends a connection only inside the receiver window (RFC 9293 §3.10.7.4, RFC 5961 §3)', () => {
  const metadata = (c: KafkaConn): number => c.request({ apiKey: 3, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 });

  it('a RST outside the window is ignored by both peers, and by kcid: the requests after it are seen', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    // A blind RST from the broker's address, 1,000,000 past the next byte the client expects (window 65,535).
    s.add([c.tcp.raw('server', { flags: 'R', seq: c.tcp.serverSeq + 1_000_000, ack: 0 })]);
    // A late RST from an earlier connection's numbers, behind what the broker acknowledged.
    s.add([c.tcp.raw('client', { flags: 'RA', seq: c.tcp.clientSeq - 70_000 })]);
    c.respond(metadata(c));
    c.respond(metadata(c));
    c.close();
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([]);
    expect(report.connections.map((x) => [x.requests, x.responses])).toEqual([[3, 3]]);
  });

  it('a RST at the next sequence number, or inside the window, ends the connection', async () => {
    for (const ahead of [0, 60_000]) {
      const s = new Scenario();
      const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
      c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
      s.add([c.tcp.raw('server', { flags: 'RA', seq: c.tcp.serverSeq + ahead })]);
      metadata(c); // after the reset: no connection to carry it
      const report = await analyzeScenario(s);
      expect(report.connections.map((x) => [x.requests, x.responses])).toEqual([[1, 1]]);
    }
  });

  it('the window is scaled as both SYNs agreed (RFC 7323 §2.2), and unscaled when one SYN does not ask', async () => {
    const withScale = async (serverScale: boolean): Promise<number[][]> => {
      const s = new Scenario();
      const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', handshake: false });
      const t = c.tcp;
      s.add([t.raw('client', { flags: 'S', seq: t.clientSeq - 1, ack: 0, window: 64240, options: [3, 3, 7] })]);
      s.add([t.raw('server', { flags: 'SA', seq: t.serverSeq - 1, window: 65160, options: serverScale ? [3, 3, 7] : [] })]);
      s.add([t.raw('client', { flags: 'A', window: 502 })]);
      c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
      // The client advertised 502 << 7 = 64,256 bytes: 60,000 ahead is inside when scaled, outside when not.
      s.add([t.raw('client', { flags: 'A', window: 502 })]);
      s.add([t.raw('server', { flags: 'RA', seq: t.serverSeq + 60_000 })]);
      c.respond(metadata(c));
      return (await analyzeScenario(s)).connections.map((x) => [x.requests, x.responses]);
    };
    expect(await withScale(true)).toEqual([[1, 1]]);
    expect(await withScale(false)).toEqual([[2, 2]]);
  });
});

describe('TCP: keep-alive and zero-window probes are not data', () => {
  it("a keep-alive before the client's first captured request (capture started mid-connection) is not a byte of the stream", async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', handshake: false });
    // The broker's answer to a request sent before the capture: its ACK says the client's next byte.
    c.serverBytes(concat(int32(8), int32(41), int32(0)));
    // RFC 9293 §3.8.4: a keep-alive repeats the byte before SND.NXT (Linux sends one garbage byte).
    s.add([c.tcp.raw('client', { flags: 'A', seq: c.tcp.clientSeq - 1, payload: Uint8Array.of(0x00) })]);
    s.add([c.tcp.raw('client', { flags: 'A', seq: c.tcp.clientSeq - 1 })]); // and one with no byte at all
    c.respond(c.request({ apiKey: 3, apiVersion: 12, correlationId: 42, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([]);
    // The first response answers a request from before the capture: counted, unmatched.
    expect(report.connections.map((x) => [x.requests, x.responses, x.gaps])).toEqual([[1, 2, 0]]);
  });

  it('keep-alives and zero-window probes on an established connection: no gap, no desync, every request seen', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const t = c.tcp;
    s.add([t.raw('client', { flags: 'A', seq: t.clientSeq - 1, payload: Uint8Array.of(0x5a) }), t.raw('server', { flags: 'A' })]);
    s.add([t.raw('server', { flags: 'A', seq: t.serverSeq - 1 }), t.raw('client', { flags: 'A' })]);
    // The broker's window is closed: the client probes with the next request's first byte, which is
    // not taken (the ACK does not move), then sends the whole request when the window opens.
    s.add([t.raw('server', { flags: 'A', window: 0 })]);
    const next = requestFrame({ apiKey: 3, apiVersion: 12, correlationId: 2, clientId: null, clientInstanceId: ID_A, body: metadataV12 });
    s.add([t.raw('client', { flags: 'A', payload: next.subarray(0, 1) }), t.raw('server', { flags: 'A', window: 0 })]);
    s.add([t.raw('server', { flags: 'A', window: 65535 })]);
    c.clientBytes(next);
    c.serverBytes(responseFrame({ correlationId: 2, headerVersion: 1, body: minimalResponseBody(3, 12) }));
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([]);
    expect(report.connections.map((x) => [x.requests, x.responses, x.gaps])).toEqual([[2, 2, 0]]);
  });
});

describe('response resync prefers real boundaries', () => {
  /**
   * Fetch v11 (response header v0; body ThrottleTimeMs, ErrorCode, ...) and Metadata v8 in flight.
   * The Fetch response's first segment is lost: the framer resyncs in its payload, where 8 bytes
   * read as size 20 and correlation ID 2 (the pending Metadata's) in the middle of a segment.
   */
  function lostFetchHead(fake: Uint8Array): Scenario {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 1000 });
    const fetch = c.request({ apiKey: 1, apiVersion: 11, clientId: 'app', body: new Uint8Array(40) });
    const metadata = c.request({ apiKey: 3, apiVersion: 8, clientId: null, headerVersion: 1, body: new Uint8Array(6) });
    const payload = new Uint8Array(2990).fill(0x33);
    payload.set(fake, 1500); // frame offset 1,514: byte 510 of the second segment
    const before = s.frames.length;
    c.respond(fetch, concat(int32(0), int16(0), int32(0), payload)); // 3,004 bytes + size: 4 segments
    s.frames.splice(before, 1); // the capture lost the first
    c.respond(metadata, concat(int32(0), int32(-1), int32(0), int32(0))); // its own segment
    c.close();
    return s;
  }

  it('a mid-segment "response" whose body does not decode as the pending request\'s is not taken: the real one pairs', async () => {
    // Size 20, correlation ID 2, then bytes no Metadata v8 response starts with... Metadata has no
    // fixed ErrorCode to check, so mid-segment it cannot be placed at all; at a segment start it is.
    const s = lostFetchHead(concat(int32(20), int32(2), new Uint8Array(12).fill(0x7f)));
    const rows = await requests(s);
    expect(rows.map((r) => [r.apiName, r.correlationId, r.responseFrame])).toEqual([
      ['Fetch', 1, null],
      ['Metadata', 2, 9],
    ]);
    const report = await analyzeScenario(s);
    expect(report.connections.map((x) => [x.requests, x.responses])).toEqual([[2, 1]]);
  });

  it('a response packed mid-segment after the lost bytes is taken when its header and ErrorCode decode as the pending request\'s', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 1000 });
    const fetch = c.request({ apiKey: 1, apiVersion: 11, clientId: 'app', body: new Uint8Array(40) });
    const versions = c.request({ apiKey: 18, apiVersion: 3, clientId: null, body: concat(Uint8Array.of(2, 0x78, 2, 0x31), taggedFields()) });
    const fetchResponse = responseFrame({ correlationId: fetch, headerVersion: 0, body: concat(int32(0), int16(0), int32(0), new Uint8Array(1500).fill(0x33)) });
    // ApiVersions v3: response header v0 (KIP-511), ErrorCode 35 first, then an empty ApiKeys array.
    const versionsResponse = responseFrame({ correlationId: versions, headerVersion: 0, body: concat(int16(35), Uint8Array.of(1), int32(0), taggedFields()) });
    const before = s.frames.length;
    c.serverBytes(concat(fetchResponse, versionsResponse)); // the ApiVersions response starts mid-segment
    s.frames.splice(before, 1);
    c.close();
    const rows = await requests(s);
    expect(rows.map((r) => [r.apiName, r.correlationId, r.responseFrame, r.errorCode])).toEqual([
      ['Fetch', 1, null, null],
      ['ApiVersions', 2, 6, 35],
    ]);
  });

  it('a mid-segment candidate whose ErrorCode is no Kafka error is skipped; the next real boundary pairs', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 1000 });
    const fetch = c.request({ apiKey: 1, apiVersion: 11, clientId: 'app', body: new Uint8Array(40) });
    const versions = c.request({ apiKey: 18, apiVersion: 3, clientId: null, body: concat(Uint8Array.of(2, 0x78, 2, 0x31), taggedFields()) });
    const payload = new Uint8Array(2000).fill(0x33);
    payload.set(concat(int32(12), int32(versions), int16(0x7f7f)), 1200); // "ErrorCode" 32639
    const before = s.frames.length;
    c.respond(fetch, concat(int32(0), int16(0), int32(0), payload));
    s.frames.splice(before, 1);
    c.respond(versions, concat(int16(0), Uint8Array.of(1), int32(0), taggedFields()));
    c.close();
    const rows = await requests(s);
    expect(rows.map((r) => [r.apiName, r.correlationId, r.responseFrame, r.errorCode])).toEqual([
      ['Fetch', 1, null, null],
      ['ApiVersions', 2, 8, 0],
    ]);
  });
});

describe('TCP: a connection retired for idleness', () => {
  it('a keep-alive after the idle timeout starts no ghost connection; new bytes are the same connection going on', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    s.wait(700); // past --idle-timeout 600
    s.add([c.tcp.raw('client', { flags: 'A', seq: c.tcp.clientSeq - 1, payload: Uint8Array.of(0) }), c.tcp.raw('server', { flags: 'A' })]);
    const keepAliveOnly = await analyzeScenario(s);
    expect(brief(keepAliveOnly.findings)).toEqual([]);
    expect(keepAliveOnly.connections.map((x) => [x.client, x.requests, x.startSeen])).toEqual([['10.0.0.1:50000', 1, true]]);

    // The same connection: its SYN was seen, so a ClientId on this later request is still judged.
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(brief(report.findings)).toEqual([['client-id-after-first', 8, 'ClientId "app" sent on a request other than the first of the connection']]);
    expect(report.connections.map((x) => [x.client, x.requests, x.responses, x.startSeen, x.clientIds])).toEqual([['10.0.0.1:50000', 2, 2, true, ['app']]]);
    expect(report.counts.connections).toBe(1);
    expect(report.instances).toHaveLength(1);
  });

  it('a connection idle twice the timeout is over: later bytes are a connection whose start is unseen', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientId: 'app', clientInstanceId: ID_A, body: metadataV12 }));
    s.wait(700);
    const d = s.connect({ client: '10.0.0.9:50000', broker: '10.0.0.2:9092' }); // traffic that moves capture time on
    d.respond(d.request({ apiKey: 3, apiVersion: 12, clientId: 'other', clientInstanceId: ID_A, body: metadataV12 }));
    s.wait(700);
    c.respond(c.request({ apiKey: 3, apiVersion: 12, clientInstanceId: ID_A, body: metadataV12 }));
    const report = await analyzeScenario(s);
    expect(report.connections.map((x) => [x.client, x.requests, x.startSeen])).toEqual([
      ['10.0.0.1:50000', 1, true],
      ['10.0.0.9:50000', 1, true],
      ['10.0.0.1:50000', 1, false],
    ]);
  });
});

describe('SaslAuthenticate bodies are secrets', () => {
  it('bodyIsSecret names SaslAuthenticate (KIP-152 tokens) for any printer of bodies, and nothing else', async () => {
    const { bodyIsSecret } = await import('../src/kafka/sasl.js');
    expect([36, 17, 3, 18].map(bodyIsSecret)).toEqual([true, false, false, false]);
  });
});
