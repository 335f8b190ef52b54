/**
 * TLS: real OpenSSL traffic (Node's tls on both ends, recorded by test/tls/record.ts) for each TLS
 * 1.3 suite and each TLS 1.2 family, decrypted with the key log Node wrote, must give the requests
 * of the same conversation in plaintext; and made-up sessions (test/builder/tls.ts) for KeyUpdate
 * and for bad input: a wrong key, garbage key log lines, oversize and cut-off records, a gap, alerts.
 */
import { constants, createHmac, hkdfSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { tmpFile } from './builder/capture.js';
import { requestFrame } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { CONTENT, expandLabel, handshake, Tls13Sender, Tls13Session, record, u8 } from './builder/tls.js';
import { hkdfExpandLabel } from '../src/tls/keys.js';
import { analyzeFiles, brief, ID_A, ID_A_B64, NO_OPENSSL, runKcid, skipUnless } from './helpers.js';
import { captureOf, closedBoth, recordTls, recordTlsConnections, responseTo, testCertificate, type Chunk, type RecordOptions, type TlsRecording } from './tls/record.js';

const haveOpenssl = testCertificate() !== null;

const REQUESTS: RecordOptions['requests'] = [
  { apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'tls-client', body: Buffer.from('0a6b6369642d7465737405302e312e3000', 'hex') },
  { apiKey: 3, apiVersion: 12, correlationId: 2, clientId: null, body: Buffer.alloc(3) },
  // 40 KB: three TLS records, each over several segments.
  { apiKey: 3, apiVersion: 12, correlationId: 3, clientId: null, body: Buffer.alloc(40_000, 7) },
  { apiKey: 18, apiVersion: 3, correlationId: 4, clientId: 'tls-client', body: Buffer.from('0a6b6369642d7465737405302e312e3000', 'hex') },
];

type Row = [number, number, number, string | null, boolean, number | null];

async function requestRows(file: string, args: string[] = []): Promise<Row[]> {
  const out = await runKcid(['requests', '--format', 'ndjson', ...args, file]);
  expect(out.stderr).toBe('');
  return out.stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    // Requests only: a response whose request was lost is a row too (requestCaptured: false).
    .filter((r) => r.requestCaptured !== false)
    .map((r) => [r.apiKey as number, r.apiVersion as number, r.correlationId as number, r.clientId as string | null, r.responseFrame !== null, r.errorCode as number | null]);
}

async function analyzeJson(file: string, args: string[] = []): Promise<{ code: number; doc: Record<string, any> }> {
  const out = await runKcid(['analyze', '--format', 'json', ...args, file]);
  return { code: out.code, doc: JSON.parse(out.stdout) as Record<string, any> };
}

/** The recording as a capture and its key log as a file. */
function files(r: TlsRecording, name: string): { capture: string; keys: string; plain: string } {
  return {
    capture: captureOf(r.chunks).file(`${name}.pcap`),
    keys: tmpFile(`${name}.keys`, r.keylog),
    plain: captureOf(r.plaintext).file(`${name}-plain.pcap`),
  };
}

const CASES: [string, RecordOptions['versions'], string, string][] = [
  ['TLS 1.3 AES-128-GCM', { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', ciphers: 'TLS_AES_128_GCM_SHA256' }, 'TLS 1.3', 'TLS_AES_128_GCM_SHA256'],
  ['TLS 1.3 AES-256-GCM', { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', ciphers: 'TLS_AES_256_GCM_SHA384' }, 'TLS 1.3', 'TLS_AES_256_GCM_SHA384'],
  ['TLS 1.3 ChaCha20-Poly1305', { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', ciphers: 'TLS_CHACHA20_POLY1305_SHA256' }, 'TLS 1.3', 'TLS_CHACHA20_POLY1305_SHA256'],
  ['TLS 1.2 ECDHE AES-128-GCM', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' }, 'TLS 1.2', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
  ['TLS 1.2 ECDHE AES-256-GCM', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES256-GCM-SHA384' }, 'TLS 1.2', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384'],
  ['TLS 1.2 ECDHE ChaCha20-Poly1305', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-CHACHA20-POLY1305' }, 'TLS 1.2', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256'],
  ['TLS 1.2 RSA AES-128-GCM', { maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256' }, 'TLS 1.2', 'TLS_RSA_WITH_AES_128_GCM_SHA256'],
  ['TLS 1.2 ECDHE AES-128-CBC HMAC-SHA1', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA' }, 'TLS 1.2', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA'],
  ['TLS 1.2 ECDHE AES-256-CBC HMAC-SHA384', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES256-SHA384' }, 'TLS 1.2', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384'],
  ['TLS 1.2 RSA AES-256-CBC HMAC-SHA256', { maxVersion: 'TLSv1.2', ciphers: 'AES256-SHA256' }, 'TLS 1.2', 'TLS_RSA_WITH_AES_256_CBC_SHA256'],
];


/**
 * RFC 8448 §3 (a simple 1-RTT handshake with TLS_AES_128_GCM_SHA256): traffic secrets and the
 * write key and IV each gives. The hand-built sessions' keys come from test/builder/tls.ts's own
 * HKDF, held to these and to node:crypto's hkdfSync; kcid's (src/tls/keys.ts) is held to them too.
 */
const RFC8448 = [
  { secret: 'b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38', key: '3fce516009c21727d0f2e4e86ee403bc', iv: '5d313eb2671276ee13000b30', what: 'server handshake' },
  { secret: 'b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21', key: 'dbfaa693d1762c5b666af5d950258d01', iv: '5bd3c71b836e0b76bb73265f', what: 'client handshake' },
  { secret: 'a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643', key: '9f02283b6c9c07efc26bb9f2ac92e356', iv: 'cf782b88dd83549aadf1e984', what: 'server application' },
];

/** HKDF-Expand-Label through node:crypto's hkdfSync: HKDF(salt, IKM) is Expand(HMAC(salt, IKM)), so an IKM and salt whose HMAC is known stand for any PRK. */
function viaHkdfSync(hash: 'sha256' | 'sha384', ikm: Buffer, salt: Buffer, label: string, length: number): { prk: Buffer; out: Buffer } {
  const name = Buffer.from(`tls13 ${label}`);
  const info = Buffer.concat([Buffer.of(length >> 8, length & 0xff, name.length), name, Buffer.of(0)]);
  return { prk: createHmac(hash, salt).update(ikm).digest(), out: Buffer.from(hkdfSync(hash, ikm, salt, info, length)) };
}

describe('TLS 1.3 key derivation against RFC 8448 and node:crypto', () => {
  it.each(RFC8448)('the test builder derives RFC 8448\'s $what key and IV', ({ secret, key, iv }) => {
    expect(expandLabel(Buffer.from(secret, 'hex'), 'key', 16).toString('hex')).toBe(key);
    expect(expandLabel(Buffer.from(secret, 'hex'), 'iv', 12).toString('hex')).toBe(iv);
  });

  it.each(RFC8448)('kcid (src/tls/keys.ts) derives RFC 8448\'s $what key and IV', ({ secret, key, iv }) => {
    expect(hkdfExpandLabel('sha256', Buffer.from(secret, 'hex'), 'key', Buffer.alloc(0), 16).toString('hex')).toBe(key);
    expect(hkdfExpandLabel('sha256', Buffer.from(secret, 'hex'), 'iv', Buffer.alloc(0), 12).toString('hex')).toBe(iv);
  });

  it('the next traffic secret of a KeyUpdate ("traffic upd", RFC 8446 §7.2) is what hkdfSync gives, in the builder and in kcid', () => {
    for (const [ikm, salt] of [[Buffer.alloc(32, 0x33), Buffer.alloc(32, 0x01)], [Buffer.from('kcid'), Buffer.alloc(0)]] as const) {
      const { prk, out } = viaHkdfSync('sha256', ikm, salt, 'traffic upd', 32);
      expect(expandLabel(prk, 'traffic upd', 32)).toEqual(out);
      expect(hkdfExpandLabel('sha256', prk, 'traffic upd', Buffer.alloc(0), 32)).toEqual(out);
    }
    // More than one HMAC block (RFC 5869's T(2)), which kcid's loop makes and the builder never needs.
    const long = viaHkdfSync('sha256', Buffer.alloc(32, 0x55), Buffer.alloc(32, 0x03), 'traffic upd', 80);
    expect(hkdfExpandLabel('sha256', long.prk, 'traffic upd', Buffer.alloc(0), 80)).toEqual(long.out);
    // SHA-384 (TLS_AES_256_GCM_SHA384): its 48-byte next secret and its 32-byte key.
    const { prk, out } = viaHkdfSync('sha384', Buffer.alloc(48, 0x44), Buffer.alloc(48, 0x02), 'traffic upd', 48);
    expect(hkdfExpandLabel('sha384', prk, 'traffic upd', Buffer.alloc(0), 48)).toEqual(out);
    const key = viaHkdfSync('sha384', Buffer.alloc(48, 0x44), Buffer.alloc(48, 0x02), 'key', 32);
    expect(hkdfExpandLabel('sha384', key.prk, 'key', Buffer.alloc(0), 32)).toEqual(key.out);
  });
});

describe('TLS recorded from OpenSSL (Node tls), decrypted with its key log', skipUnless(haveOpenssl, NO_OPENSSL), () => {
  for (const [name, versions, version, cipher] of CASES) {
    it(`${name}: the decrypted requests are the plaintext conversation's`, async () => {
      const r = await recordTls({ versions, requests: REQUESTS });
      const f = files(r, name.replace(/\W+/g, '-'));
      const plain = await requestRows(f.plain);
      expect(plain).toEqual([
        [18, 3, 1, 'tls-client', true, 0],
        [3, 12, 2, null, true, null],
        [3, 12, 3, null, true, null],
        [18, 3, 4, 'tls-client', true, 0],
      ]);
      expect(await requestRows(f.capture, ['--tls-keylog', f.keys])).toEqual(plain);
      const { code, doc } = await analyzeJson(f.capture, ['--tls-keylog', f.keys]);
      expect(code).toBe(0);
      expect(doc.findings).toEqual([]);
      expect(doc.connections[0].tls).toEqual({
        version,
        offered: version === 'TLS 1.3' ? 'TLS 1.3' : 'TLS 1.2',
        cipher,
        sni: 'broker1.kafka.test',
        alpn: ['kafka'],
        helloRetry: false,
        resumed: false,
        // TLS 1.2 sends it in the clear; TLS 1.3 in the decrypted handshake.
        certificate: { subject: 'O=kcid tests, CN=broker1.kafka.test', notBefore: expect.stringMatching(/^20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ$/), notAfter: expect.stringMatching(/^20\d\d-/) },
        clientRandom: expect.stringMatching(/^[0-9a-f]{16}$/),
        decrypted: true,
      });
    });
  }

  it('TLS 1.2 CBC with MAC-then-encrypt (encrypt_then_mac refused)', async () => {
    const r = await recordTls({
      versions: { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA256' },
      requests: REQUESTS,
      client: { secureOptions: constants.SSL_OP_NO_ENCRYPT_THEN_MAC },
    });
    const f = files(r, 'cbc-mte');
    expect(await requestRows(f.capture, ['--tls-keylog', f.keys])).toEqual(await requestRows(f.plain));
  });
});

const hasTool = (tool: string): boolean => {
  try {
    execFileSync(tool, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

describe('TLS handshakes: HelloRetryRequest, resumption, no keys', skipUnless(haveOpenssl, NO_OPENSSL), () => {
  it('TLS 1.3 after a HelloRetryRequest (the client guessed the wrong key share)', async () => {
    const r = await recordTls({
      versions: { minVersion: 'TLSv1.3' },
      requests: REQUESTS.slice(0, 2),
      client: { ecdhCurve: 'X25519:P-384' },
      server: { ecdhCurve: 'P-384' },
    });
    const f = files(r, 'hrr');
    expect(await requestRows(f.capture, ['--tls-keylog', f.keys])).toEqual(await requestRows(f.plain));
    const { doc } = await analyzeJson(f.capture, ['--tls-keylog', f.keys]);
    expect(doc.connections[0].tls).toMatchObject({ version: 'TLS 1.3', helloRetry: true, resumed: false, decrypted: true });
  });

  for (const [name, versions] of [
    ['TLS 1.3 (a PSK from a ticket)', { minVersion: 'TLSv1.3' }],
    ['TLS 1.2 (a session ticket)', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' }],
  ] as const) {
    it(`${name}: a resumed session is shown as resumed and still decrypted`, async () => {
      const [first, second] = await recordTlsConnections({ versions, requests: REQUESTS.slice(0, 2), connections: 2 });
      const s = captureOf(first!.chunks, { client: '10.9.0.1:50001' });
      captureOf(second!.chunks, { client: '10.9.0.1:50002', scenario: s });
      const capture = s.file('resumed.pcap');
      const keys = tmpFile('resumed.keys', first!.keylog);
      const { code, doc } = await analyzeJson(capture, ['--tls-keylog', keys]);
      expect(code).toBe(0);
      expect(doc.findings).toEqual([]);
      expect(doc.connections.map((c: any) => [c.client, c.requests, c.tls.resumed, c.tls.decrypted])).toEqual([
        ['10.9.0.1:50001', 2, false, true],
        ['10.9.0.1:50002', 2, true, true],
      ]);
      // A resumed TLS 1.2 session sends no certificate; TLS 1.3 with a PSK neither.
      expect(doc.connections[1].tls.certificate).toBeNull();
    });
  }

  it('without keys: the handshake in the clear, one note naming the client random, and the client counted', async () => {
    const r = await recordTls({ versions: { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' }, requests: REQUESTS.slice(0, 2) });
    const f = files(r, 'nokeys');
    const random = r.keylog.split(' ')[1]!.slice(0, 16);
    const { code, doc } = await analyzeJson(f.capture);
    expect(code).toBe(0);
    expect(doc.findings.map((x: any) => [x.rule, x.severity, x.message])).toEqual([
      ['tls-on-kafka-port', 'info', `TLS 1.2 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 connection, client random ${random}: no key log given (--tls-keylog); its Kafka contents cannot be analysed`],
    ]);
    expect(doc.connections[0].tls).toMatchObject({ version: 'TLS 1.2', sni: 'broker1.kafka.test', alpn: ['kafka'], clientRandom: random, decrypted: false });
    expect(doc.connections[0].tls.certificate.subject).toBe('O=kcid tests, CN=broker1.kafka.test');
    const clients = await runKcid(['clients', '--format', 'json', f.capture]);
    expect((JSON.parse(clients.stdout) as any[]).map((c) => [c.clientInstanceId, c.hosts ?? c.clientAddresses, c.connections])).toEqual([[null, ['10.9.0.1'], 1]]);
    // With a key log that lacks this connection: the same note says so, and the key log is reported unused.
    const other = tmpFile('other.keys', `CLIENT_RANDOM ${'ab'.repeat(32)} ${'cd'.repeat(48)}\n`);
    const withOther = await analyzeJson(f.capture, ['--tls-keylog', other]);
    expect(withOther.doc.findings.map((x: any) => [x.rule, x.message])).toEqual([
      ['tls-keylog-unmatched', `${other}: none of its 1 TLS secrets matches a TLS connection of this capture`],
      ['tls-on-kafka-port', `TLS 1.2 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 connection, client random ${random}: no key for it in the key logs; its Kafka contents cannot be analysed`],
    ]);
  });

  it('the key log is never printed, in any format', async () => {
    const r = await recordTls({ versions: { minVersion: 'TLSv1.3' }, requests: REQUESTS.slice(0, 1) });
    const f = files(r, 'secret');
    const secrets = r.keylog
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[2]!);
    for (const format of ['table', 'json', 'ndjson', 'summary-json', 'markdown', 'sarif', 'junit']) {
      const out = await runKcid(['analyze', '--format', format, '--tls-keylog', f.keys, f.capture]);
      for (const s of secrets) expect(out.stdout + out.stderr).not.toContain(s);
    }
  });
});

describe('keys inside the capture: pcapng Decryption Secrets Blocks', skipUnless(haveOpenssl && hasTool('editcap'), 'needs openssl and editcap on the PATH (.ci/run installs both)'), () => {
  it('editcap --inject-secrets: kcid decrypts with no --tls-keylog', async () => {
    const r = await recordTls({ versions: { minVersion: 'TLSv1.3' }, requests: REQUESTS });
    const f = files(r, 'dsb');
    const out = f.capture.replace(/\.pcap$/, '-dsb.pcapng');
    execFileSync('editcap', ['--inject-secrets', `tls,${f.keys}`, f.capture, out], { stdio: 'ignore' });
    expect(await requestRows(out)).toEqual(await requestRows(f.plain));
    const { doc } = await analyzeJson(out);
    expect(doc.findings).toEqual([]);
    expect(doc.connections[0].tls.decrypted).toBe(true);
  });
});

describe('TLS: kcid agrees with tshark given the same key log', skipUnless(haveOpenssl && hasTool('tshark'), 'needs openssl and tshark on the PATH (.ci/run installs both)'), () => {
  for (const [name, versions] of [CASES[0]!, CASES[5]!, CASES[7]!]) {
    it(`${name}: request by request`, async () => {
      const r = await recordTls({ versions, requests: REQUESTS });
      const f = files(r, `tshark-${name.replace(/\W+/g, '-')}`);
      const text = execFileSync(
        'tshark',
        ['-r', f.capture, '-o', `tls.keylog_file:${f.keys}`, '-d', 'tcp.port==9092,tls', '-d', 'tls.port==9092,kafka', '-Y', 'kafka && tcp.dstport == 9092', '-T', 'fields', '-e', 'frame.number', '-e', 'kafka.api_key', '-e', 'kafka.api_version', '-e', 'kafka.correlation_id'],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
      );
      const theirs = text
        .trim()
        .split('\n')
        .map((l) => l.split('\t').map(Number));
      const out = await runKcid(['requests', '--format', 'ndjson', '--tls-keylog', f.keys, f.capture]);
      const ours = out.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, number>)
        .map((q) => [q.frame, q.apiKey, q.apiVersion, q.correlationId]);
      expect(ours).toHaveLength(4);
      expect(ours).toEqual(theirs);
    });
  }
});

/** A made-up TLS 1.3 session (test/builder/tls.ts) on one connection, its key log written to a file. */
function madeUp(o: { mss?: number } = {}) {
  const tls = new Tls13Session();
  const s = new Scenario();
  const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092', mss: o.mss ?? 1460 });
  conn.clientBytes(tls.clientFirst());
  conn.serverBytes(tls.serverFlight());
  conn.clientBytes(tls.clientFinished());
  const request = (correlationId: number): Buffer =>
    tls.client.seal(CONTENT.APPLICATION_DATA, Buffer.from(requestFrame({ apiKey: 18, apiVersion: 3, correlationId, clientId: 'made-up', body: Buffer.from('0a6b6369642d7465737405302e312e3000', 'hex') })));
  const response = (correlationId: number): Buffer => tls.server.seal(CONTENT.APPLICATION_DATA, responseTo(Buffer.from(requestFrame({ apiKey: 18, apiVersion: 3, correlationId }))));
  return { tls, s, conn, request, response };
}

describe('TLS 1.3 made up byte by byte: KeyUpdate and bad input', () => {
  it('KeyUpdate: records after it decrypt with the next traffic secret', async () => {
    const m = madeUp();
    m.conn.clientBytes(m.request(1));
    m.conn.serverBytes(m.response(1));
    m.conn.clientBytes(m.tls.client.keyUpdate());
    m.conn.serverBytes(m.tls.server.keyUpdate());
    m.conn.clientBytes(Buffer.concat([m.request(2), m.request(3)])); // two records in one segment
    m.conn.serverBytes(m.response(2));
    m.conn.serverBytes(m.response(3));
    m.conn.close();
    const capture = m.s.file('key-update.pcap');
    const keys = tmpFile('key-update.keys', m.tls.keylog);
    expect(await requestRows(capture, ['--tls-keylog', keys])).toEqual([
      [18, 3, 1, 'made-up', true, 0],
      [18, 3, 2, 'made-up', true, 0],
      [18, 3, 3, 'made-up', true, 0],
    ]);
    const { doc } = await analyzeJson(capture, ['--tls-keylog', keys]);
    expect(doc.findings).toEqual([]);
    expect(doc.connections[0].tls).toEqual({
      version: 'TLS 1.3',
      offered: 'TLS 1.3',
      cipher: 'TLS_AES_128_GCM_SHA256',
      sni: 'broker1.kafka.test',
      alpn: ['kafka'],
      helloRetry: false,
      resumed: false,
      certificate: null,
      clientRandom: '0123456789abcdef',
      decrypted: true,
    });
  });

  it('kcid clients --instance lists the connection with its TLS handshake; the rules judge decrypted requests', async () => {
    const m = madeUp();
    const withId = (correlationId: number, clientId: string | null): Buffer =>
      m.tls.client.seal(CONTENT.APPLICATION_DATA, Buffer.from(requestFrame({ apiKey: 3, apiVersion: 12, correlationId, clientId, clientInstanceId: ID_A, body: Buffer.of(0, 1, 0) })));
    m.conn.clientBytes(withId(1, 'tls-app'));
    m.conn.clientBytes(withId(2, 'tls-app')); // a ClientId after the first request: a KIP-1313 violation
    m.conn.close();
    const capture = m.s.file('instance.pcap');
    const keys = tmpFile('instance.keys', m.tls.keylog);
    const out = await runKcid(['clients', '--instance', ID_A_B64.slice(0, 6), '--tls-keylog', keys, capture]);
    expect(out.stdout).toContain(
      '\nTLS\n10.9.0.1:50001 -> 10.9.0.2:9092: TLS 1.3, TLS_AES_128_GCM_SHA256, SNI "broker1.kafka.test", ALPN "kafka", decrypted\n',
    );
    const report = await analyzeFiles([capture], { tlsKeylogs: [keys] });
    expect(brief(report.findings)).toEqual([['client-id-after-first', 8, 'ClientId "tls-app" sent on a request other than the first of the connection']]);
  });

  it('a wrong key: the first record of each direction that fails is a finding, the rest are counted', async () => {
    const m = madeUp();
    for (const c of [1, 2, 3]) {
      m.conn.clientBytes(m.request(c));
      m.conn.serverBytes(m.response(c));
    }
    m.conn.close();
    const capture = m.s.file('wrong-key.pcap');
    const wrong = m.tls.keylog.replace(/^(CLIENT_TRAFFIC_SECRET_0 \S+ )33/m, '$134');
    const report = await analyzeFiles([capture], { tlsKeylogs: [tmpFile('wrong.keys', wrong)] });
    expect(brief(report.findings)).toEqual([
      ['tls-record-auth-failed', 7, 'a TLS record from the client failed authentication (frame 7): wrong key, or the capture is damaged; skipped'],
      ['tls-record-auth-failed', 12, '2 more TLS records from the client failed authentication'],
    ]);
    // The broker's side still decrypts: its responses are there, the requests they answer are not.
    expect(report.counts.requests).toBe(0);
    expect(report.counts.responses).toBe(3);
  });

  it('a key log with garbage lines: the lines are skipped with a count, the good ones used', async () => {
    const m = madeUp();
    m.conn.clientBytes(m.request(1));
    m.conn.close();
    const capture = m.s.file('garbage.pcap');
    const keys = tmpFile('garbage.keys', `# a comment\nnot a key log line\nCLIENT_RANDOM 1234 5678\n\n${m.tls.keylog}CLIENT_TRAFFIC_SECRET_0 ${'zz'.repeat(32)} ${'00'.repeat(32)}\n`);
    const report = await analyzeFiles([capture], { tlsKeylogs: [keys] });
    expect(report.inputs[0]!.notes).toEqual([`${keys}: 3 lines that are not NSS key log lines were skipped`]);
    expect(report.counts.requests).toBe(1);
  });

  it('a record larger than 2^14 + 256 bytes is skipped by its length, and the next record still decrypts', async () => {
    const m = madeUp();
    m.conn.clientBytes(m.tls.client.seal(CONTENT.APPLICATION_DATA, Buffer.alloc(20_000)));
    m.conn.clientBytes(m.request(1));
    m.conn.serverBytes(m.response(1));
    m.conn.close();
    const report = await analyzeFiles([m.s.file('oversize.pcap')], { tlsKeylogs: [tmpFile('oversize.keys', m.tls.keylog)] });
    expect(brief(report.findings)).toEqual([['tls-record-unreadable', 7, 'a TLS record from the client is 20017 bytes, more than the 16,640 TLS 1.3 allows: skipped']]);
    expect(report.counts.requests).toBe(1);
    expect(report.counts.responses).toBe(1);
  });

  it('an alert mid-stream is a finding; close_notify is not', async () => {
    const m = madeUp();
    m.conn.clientBytes(m.request(1));
    m.conn.serverBytes(Buffer.concat([m.response(1), m.tls.server.seal(CONTENT.ALERT, Buffer.of(2, 80))]));
    m.conn.clientBytes(m.tls.client.seal(CONTENT.ALERT, Buffer.of(1, 0)));
    m.conn.close();
    const report = await analyzeFiles([m.s.file('alert.pcap')], { tlsKeylogs: [tmpFile('alert.keys', m.tls.keylog)] });
    expect(brief(report.findings)).toEqual([['tls-alert', 8, 'TLS alert from the broker: fatal internal_error (80)']]);
  });

  it('an alert in the clear during the handshake', async () => {
    const tls = new Tls13Session();
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092' });
    conn.clientBytes(tls.clientFirst());
    conn.serverBytes(record(CONTENT.ALERT, Buffer.of(2, 40)));
    conn.close();
    const report = await analyzeFiles([s.file('hs-alert.pcap')]);
    expect(brief(report.findings)).toEqual([
      ['tls-alert', 5, 'TLS alert from the broker: fatal handshake_failure (40), in the clear'],
      ['tls-on-kafka-port', 5, 'TLS connection, client random 0123456789abcdef: the handshake is not complete in the capture; its Kafka contents cannot be analysed'],
    ]);
  });

  it('a record cut off when the connection ends', async () => {
    const m = madeUp();
    m.conn.clientBytes(m.request(1));
    m.conn.clientBytes(m.request(2).subarray(0, 30));
    m.conn.close();
    const report = await analyzeFiles([m.s.file('cut.pcap')], { tlsKeylogs: [tmpFile('cut.keys', m.tls.keylog)] });
    expect(brief(report.findings).filter((f) => f[0].startsWith('tls'))).toEqual([
      ['tls-record-unreadable', 8, 'a TLS record from the client is incomplete when the connection ends: 30 of its 61 bytes were seen'],
    ]);
    expect(report.counts.requests).toBe(1);
  });

  it('a capture gap inside a record: that record is reported, decryption carries on with the next', async () => {
    const m = madeUp({ mss: 40 });
    const before = m.s.frames.length;
    m.conn.clientBytes(m.request(1)); // 61 bytes: segments of 40 and 21
    m.s.frames.splice(before + 1, 1); // the capture loses the second one
    m.conn.clientBytes(m.request(2));
    m.conn.serverBytes(m.response(1));
    m.conn.serverBytes(m.response(2));
    m.conn.close();
    const capture = m.s.file('gap.pcap');
    const keys = tmpFile('gap.keys', m.tls.keylog);
    const report = await analyzeFiles([capture], { tlsKeylogs: [keys] });
    expect(brief(report.findings)).toEqual([
      ['capture-gap', 14, '21 bytes from the client are missing from the capture'],
      ['tls-record-unreadable', 14, 'a TLS record from the client lost 21 bytes to a capture gap and was skipped'],
    ]);
    // Request 1 is lost with its record; request 2, one sequence number on, decrypts and is answered.
    expect(await requestRows(capture, ['--tls-keylog', keys])).toEqual([[18, 3, 2, 'made-up', true, 0]]);
  });
});

describe('TLS bounds', () => {
  it('a 200 KB handshake message sent one byte per record is read in linear time', async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092', mss: 1460 });
    const message = Buffer.concat([Buffer.of(99, 0x03, 0x0d, 0x40), Buffer.alloc(200_000, 0x41)]); // type 99, length 200,000
    const records: Buffer[] = [];
    for (let i = 0; i < message.length; i++) records.push(record(CONTENT.HANDSHAKE, message.subarray(i, i + 1)));
    const flight = Buffer.concat(records);
    for (let at = 0; at < flight.length; at += 60_000) conn.clientBytes(flight.subarray(at, at + 60_000));
    conn.close();
    const t0 = performance.now();
    const report = await analyzeFiles([s.file('one-byte-records.pcap')]);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(brief(report.findings)).toEqual([['tls-on-kafka-port', 844, 'TLS connection: the handshake is not complete in the capture; its Kafka contents cannot be analysed']]);
  });

  it('a handshake message longer than 256 KiB is not kept', async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092' });
    conn.clientBytes(record(CONTENT.HANDSHAKE, Buffer.of(1, 0x10, 0x00, 0x00, 1, 2, 3)));
    conn.close();
    const report = await analyzeFiles([s.file('huge-hello.pcap')]);
    expect(brief(report.findings)).toEqual([
      ['tls-on-kafka-port', 4, 'TLS connection: the handshake is not complete in the capture; its Kafka contents cannot be analysed'],
      ['tls-record-unreadable', 4, 'a 1048576-byte TLS handshake message from the client is larger than kcid reads'],
    ]);
  });
});

describe('TLS 1.3: a capture gap over record boundaries', () => {
  it('kcid finds the next record that decrypts, one sequence number or more on, and carries on', async () => {
    const m = madeUp({ mss: 40 });
    const before = m.s.frames.length;
    // Three 61-byte records in segments [0,40) [40,80) [80,120) [120,160) [160,183): the second
    // segment holds the end of record 1 and the header of record 2, so both are lost.
    m.conn.clientBytes(Buffer.concat([m.request(1), m.request(2), m.request(3)]));
    m.s.frames.splice(before + 1, 1);
    m.conn.serverBytes(m.response(1));
    m.conn.serverBytes(m.response(2));
    m.conn.serverBytes(m.response(3));
    m.conn.clientBytes(m.request(4));
    m.conn.serverBytes(m.response(4));
    m.conn.close();
    const capture = m.s.file('gap-over-headers.pcap');
    const keys = tmpFile('gap-over-headers.keys', m.tls.keylog);
    const report = await analyzeFiles([capture], { tlsKeylogs: [keys] });
    expect(brief(report.findings).filter((f) => f[0].startsWith('tls') || f[0] === 'capture-gap')).toEqual([
      ['capture-gap', 14, '40 bytes from the client are missing from the capture'],
      ['tls-record-unreadable', 14, 'a capture gap of 40 bytes took TLS record boundaries from the client: kcid resumes at the next record that decrypts'],
      // Records 1 and 2 (2 x 61 bytes) lost: 2 x 39 bytes of plaintext.
      ['tls-record-unreadable', 16, "kcid found the client's TLS records again after the capture gap: 2 records (122 bytes, 78 of plaintext) lost"],
    ]);
    expect((await requestRows(capture, ['--tls-keylog', keys])).map((r) => r[2])).toEqual([3, 4]);
  });

  it('bytes after the gap that look like records everywhere: kcid tries a bounded number, then gives up', async () => {
    const m = madeUp();
    const before = m.s.frames.length;
    m.conn.clientBytes(m.request(1));
    // 100 KB that looks like a record header every 5 bytes (17 03 03 00 40: 64 bytes of application data).
    m.conn.clientBytes(Buffer.concat(Array.from({ length: 20_000 }, () => Buffer.of(0x17, 3, 3, 0, 0x40))));
    m.s.frames.splice(before, 1); // record 1 lost: its 61 bytes are a gap
    m.conn.clientBytes(m.request(2));
    m.conn.close();
    const t0 = performance.now();
    const report = await analyzeFiles([m.s.file('junk.pcap')], { tlsKeylogs: [tmpFile('junk.keys', m.tls.keylog)] });
    expect(performance.now() - t0).toBeLessThan(5000);
    // kcid gives up after a bounded number of trial decryptions, before request 2.
    expect(brief(report.findings).filter((f) => f[0] === 'tls-record-unreadable').map((f) => f[2])).toEqual([
      'a capture gap of 61 bytes took TLS record boundaries from the client: kcid resumes at the next record that decrypts',
      'no TLS record from the client decrypted after the capture gap: the rest of this direction is not read',
    ]);
    expect(report.counts.requests).toBe(0);
  });
});

/** A made-up TLS 1.3 connection to `broker` whose client sends `plaintext` (sealed) and the server answers `answer`. */
function madeUpOn(s: Scenario, client: string, broker: string, plaintext: Buffer[], answer: Buffer[] = []): Tls13Session {
  const tls = new Tls13Session();
  const conn = s.connect({ client, broker });
  conn.clientBytes(tls.clientFirst());
  conn.serverBytes(tls.serverFlight());
  conn.clientBytes(tls.clientFinished());
  for (const p of plaintext) conn.clientBytes(tls.client.seal(CONTENT.APPLICATION_DATA, p));
  for (const a of answer) conn.serverBytes(tls.server.seal(CONTENT.APPLICATION_DATA, a));
  conn.close();
  return tls;
}

const apiVersions = (correlationId: number): Buffer =>
  Buffer.from(requestFrame({ apiKey: 18, apiVersion: 3, correlationId, clientId: 'detected', body: Buffer.from('0a6b6369642d7465737405302e312e3000', 'hex') }));

describe('TLS on ports found only by detection (not --port)', () => {
  it('with keys: a TLS connection on any port is decrypted, and Kafka is detected in its plaintext', async () => {
    const s = new Scenario();
    const tls = madeUpOn(s, '10.9.0.1:50001', '10.9.0.2:19093', [apiVersions(1), apiVersions(2)], [responseTo(apiVersions(1)), responseTo(apiVersions(2))]);
    const capture = s.file('detect-tls.pcap');
    const keys = tmpFile('detect-tls.keys', tls.keylog);
    expect(await requestRows(capture, ['--tls-keylog', keys])).toEqual([
      [18, 3, 1, 'detected', true, 0],
      [18, 3, 2, 'detected', true, 0],
    ]);
    const { doc } = await analyzeJson(capture, ['--tls-keylog', keys]);
    expect(doc.findings).toEqual([]);
    expect(doc.inputs[0].kafkaPorts).toEqual([19093]);
    expect(doc.connections.map((c: any) => [c.client, c.broker, c.tls.decrypted, c.tls.sni])).toEqual([['10.9.0.1:50001', '10.9.0.2:19093', true, 'broker1.kafka.test']]);
    // --no-detect: only --port is Kafka.
    expect(await requestRows(capture, ['--tls-keylog', keys, '--no-detect', '--allow-empty'])).toEqual([]);
  });

  it('with keys, plaintext that is not Kafka (HTTP over TLS) is not a Kafka connection, and says nothing', async () => {
    const s = new Scenario();
    const tls = madeUpOn(s, '10.9.0.1:50001', '10.9.0.2:8443', [Buffer.from('GET / HTTP/1.1\r\nHost: example.test\r\n\r\n')], [Buffer.from('HTTP/1.1 200 OK\r\n\r\n')]);
    const capture = s.file('https.pcap');
    const keys = tmpFile('https.keys', tls.keylog);
    // No Kafka at all: exit 2 unless --allow-empty.
    expect((await runKcid(['analyze', '--format', 'json', '--tls-keylog', keys, capture])).code).toBe(2);
    const { code, doc } = await analyzeJson(capture, ['--tls-keylog', keys, '--allow-empty']);
    expect(code).toBe(0);
    expect(doc.findings).toEqual([]);
    expect(doc.connections).toEqual([]);
  });

  it('without keys on a port where plaintext Kafka was detected before the handshake: the handshake and one note', async () => {
    // Not when Kafka is seen on the port only after the TLS connection's ServerHello: kcid does not keep
    // reassembling every TLS connection it cannot read in case its port turns out to be Kafka later.
    for (const order of ['plaintext first', 'TLS first', 'TLS closed before any Kafka there'] as const) {
      const s = new Scenario();
      const plain = s.connect({ client: '10.9.0.7:40000', broker: '10.9.0.2:19092' });
      const tlsConn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:19092' });
      const tls = new Tls13Session();
      const plainRun = (): void => {
        plain.clientBytes(apiVersions(1));
        plain.serverBytes(responseTo(apiVersions(1)));
        plain.close();
      };
      if (order === 'plaintext first') plainRun();
      tlsConn.clientBytes(tls.clientFirst());
      tlsConn.serverBytes(tls.serverFlight());
      tlsConn.clientBytes(tls.clientFinished());
      tlsConn.clientBytes(tls.client.seal(CONTENT.APPLICATION_DATA, apiVersions(1)));
      if (order === 'TLS closed before any Kafka there') tlsConn.close();
      if (order !== 'plaintext first') plainRun();
      if (order !== 'TLS closed before any Kafka there') tlsConn.close();
      // Another port, never Kafka in the clear: a TLS connection there is not listed.
      madeUpOn(s, '10.9.0.1:50002', '10.9.0.2:443', [apiVersions(1)]);
      const capture = s.file(`detect-nokeys-${order.replace(/\W+/g, '-')}.pcap`);
      const { doc } = await analyzeJson(capture);
      const conns = doc.connections.map((c: any) => [c.client, c.broker, c.tls?.decrypted ?? null, c.tls?.clientRandom ?? null]);
      const listed = order === 'plaintext first' ? [['10.9.0.1:50001', '10.9.0.2:19092', false, '0123456789abcdef']] : [];
      expect(conns.sort((a: string[], b: string[]) => (a[0]! < b[0]! ? -1 : 1)), order).toEqual([...listed, ['10.9.0.7:40000', '10.9.0.2:19092', null, null]]);
      expect(doc.findings.map((x: any) => [x.rule, x.message]), order).toEqual(
        listed.length === 0
          ? []
          : [['tls-on-kafka-port', 'TLS 1.3 TLS_AES_128_GCM_SHA256 connection, client random 0123456789abcdef: no key log given (--tls-keylog); its Kafka contents cannot be analysed']],
      );
    }
  });

  it('the recorded fixtures need no --port: TLS and plaintext legs are both found', async () => {
    const out = await runKcid(['requests', '--format', 'ndjson', '--tls-keylog', 'fixtures/kafkajs-tls-tls12-rsa-aes256gcm.keys', 'fixtures/kafkajs-tls-tls12-rsa-aes256gcm.pcap']);
    expect(out.stdout.trim().split('\n').map((l) => { const r = JSON.parse(l); return [r.broker, r.apiName, r.correlationId]; })).toEqual([
      ['127.0.0.1:38193', 'ApiVersions', 0],
      ['127.0.0.1:43005', 'ApiVersions', 0],
      ['127.0.0.1:38193', 'Metadata', 1],
      ['127.0.0.1:43005', 'Metadata', 1],
      ['127.0.0.1:38193', 'Produce', 2],
      ['127.0.0.1:43005', 'Produce', 2],
    ]);
  });
});

/**
 * TLS 1.2 renegotiation, recorded from OpenSSL: request 1, then the client renegotiates
 * (`socket.renegotiate()`, a new ClientHello under the current keys), then request 2. The key log
 * holds both handshakes' CLIENT_RANDOM lines.
 */
async function recordRenegotiation(): Promise<{ chunks: Chunk[]; keylog: string[] }> {
  const c = testCertificate()!;
  const chunks: Chunk[] = [];
  const server = tls.createServer({ ...c, maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' }, (socket) => {
    let buf = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const n = 4 + buf.readInt32BE(0);
        socket.write(responseTo(buf.subarray(0, n)));
        buf = buf.subarray(n);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  let relayed: Promise<void> = Promise.resolve();
  const relay = net.createServer((down) => {
    const up = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    relayed = closedBoth(down, up);
    down.on('data', (d: Buffer) => (chunks.push({ fromClient: true, bytes: Buffer.from(d) }), up.write(d)));
    up.on('data', (d: Buffer) => (chunks.push({ fromClient: false, bytes: Buffer.from(d) }), down.write(d)));
    down.on('end', () => up.end());
    up.on('end', () => down.end());
    down.on('error', () => {});
    up.on('error', () => {});
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  const keylog: string[] = [];
  const client = tls.connect({ port: (relay.address() as net.AddressInfo).port, host: '127.0.0.1', rejectUnauthorized: false, maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' });
  client.on('keylog', (line: Buffer) => keylog.push(line.toString('latin1')));
  await new Promise<void>((resolve, reject) => (client.once('secureConnect', resolve), client.once('error', reject)));
  const ask = (correlationId: number): Promise<void> =>
    new Promise((resolve) => {
      client.once('data', () => resolve());
      client.write(apiVersions(correlationId));
    });
  await ask(1);
  await new Promise<void>((resolve, reject) => client.renegotiate({ rejectUnauthorized: false }, (err) => (err ? reject(err) : resolve())));
  await ask(2);
  await new Promise<void>((resolve) => (client.once('close', () => resolve()), client.end()));
  await relayed;
  relay.close();
  server.close();
  return { chunks, keylog };
}

describe('TLS that kcid cannot (or can only partly) decrypt says so', () => {
  it('TLS 1.3 0-RTT early data: one note with its size; the records after the handshake decrypt, no authentication failure', async () => {
    const tls13 = new Tls13Session({ earlyData: true, psk: true });
    const early = new Tls13Sender(Buffer.alloc(32, 0x77)); // client_early_traffic_secret, absent from the key log
    const s = new Scenario();
    const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092' });
    const first = early.seal(CONTENT.APPLICATION_DATA, apiVersions(1));
    conn.clientBytes(Buffer.concat([tls13.clientFirst(), first])); // 0-RTT: ClientHello and early data in one flight
    conn.serverBytes(tls13.serverFlight());
    const endOfEarlyData = early.seal(CONTENT.HANDSHAKE, handshake(5, Buffer.alloc(0)));
    conn.clientBytes(Buffer.concat([endOfEarlyData, tls13.clientFinished()]));
    conn.clientBytes(tls13.client.seal(CONTENT.APPLICATION_DATA, apiVersions(2)));
    conn.serverBytes(tls13.server.seal(CONTENT.APPLICATION_DATA, responseTo(apiVersions(1))));
    conn.serverBytes(tls13.server.seal(CONTENT.APPLICATION_DATA, responseTo(apiVersions(2))));
    conn.close();
    const capture = s.file('early-data.pcap');
    const keys = tmpFile('early-data.keys', tls13.keylog);
    const { doc } = await analyzeJson(capture, ['--tls-keylog', keys]);
    expect(doc.findings.map((f: any) => [f.rule, f.severity, f.message])).toEqual([
      [
        'tls-record-unreadable',
        'warning',
        `the client sent 2 TLS 1.3 0-RTT early data records (${first.length - 5 + endOfEarlyData.length - 5} bytes): kcid does not decrypt early data (CLIENT_EARLY_TRAFFIC_SECRET), so requests in it are not seen`,
      ],
    ]);
    expect(doc.connections[0].tls).toMatchObject({ version: 'TLS 1.3', resumed: true, decrypted: true });
    // Request 2 is read; request 1 went as early data, its response has no request.
    expect((await requestRows(capture, ['--tls-keylog', keys])).map((r) => r[2])).toEqual([2]);
  });

  it('TLS 1.2 renegotiation: followed with the new handshake\'s key; without it, one note and nothing bogus', skipUnless(haveOpenssl, NO_OPENSSL), async () => {
    const r = await recordRenegotiation();
    expect(r.keylog).toHaveLength(2);
    const capture = captureOf(r.chunks).file('renegotiation.pcap');
    const both = tmpFile('renegotiation.keys', r.keylog.join(''));
    expect(await requestRows(capture, ['--tls-keylog', both])).toEqual([
      [18, 3, 1, 'detected', true, 0],
      [18, 3, 2, 'detected', true, 0],
    ]);
    expect((await analyzeJson(capture, ['--tls-keylog', both])).doc.findings).toEqual([]);
    const firstOnly = tmpFile('renegotiation-first.keys', r.keylog[0]!);
    const random = r.keylog[1]!.split(' ')[1]!.slice(0, 16);
    expect(await requestRows(capture, ['--tls-keylog', firstOnly])).toEqual([[18, 3, 1, 'detected', true, 0]]);
    expect((await analyzeJson(capture, ['--tls-keylog', firstOnly])).doc.findings.map((f: any) => [f.rule, f.message])).toEqual([
      ['tls-record-unreadable', `the TLS session was renegotiated (client random ${random}): the key logs have no CLIENT_RANDOM line for it; the rest of the connection is not read`],
    ]);
  });

  it('TLS 1.0 and 1.1: the handshake is shown, one note says kcid does not decrypt them', skipUnless(haveOpenssl, NO_OPENSSL), async () => {
    for (const [v, name] of [['TLSv1', 'TLS 1.0'], ['TLSv1.1', 'TLS 1.1']] as const) {
      const rec = await recordTls({ versions: { minVersion: v, maxVersion: v, ciphers: 'ECDHE-RSA-AES128-SHA@SECLEVEL=0' }, requests: REQUESTS.slice(0, 1) });
      const f = files(rec, `old-${v}`);
      const { doc } = await analyzeJson(f.capture, ['--tls-keylog', f.keys]);
      expect(doc.findings.map((x: any) => [x.rule, x.message]), name).toEqual([
        ['tls-on-kafka-port', `${name} TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA connection, client random ${rec.keylog.split(' ')[1]!.slice(0, 16)}: kcid does not decrypt ${name} (only TLS 1.2 and 1.3); its Kafka contents cannot be analysed`],
      ]);
      expect(doc.connections[0].tls).toMatchObject({ version: name, decrypted: false });
    }
  });
});

describe('a capture gap in real TLS 1.2 (OpenSSL): the record that lost bytes is reported, decryption carries on', skipUnless(haveOpenssl, NO_OPENSSL), () => {
  for (const [name, ciphers] of [
    ['AES-128-GCM', 'ECDHE-RSA-AES128-GCM-SHA256'],
    ['ChaCha20-Poly1305', 'ECDHE-RSA-CHACHA20-POLY1305'],
    ['AES-128-CBC HMAC-SHA256', 'ECDHE-RSA-AES128-SHA256'],
  ] as const) {
    it(`TLS 1.2 ${name}`, async () => {
      const r = await recordTls({ versions: { maxVersion: 'TLSv1.2', ciphers }, requests: REQUESTS });
      const s = new Scenario();
      const conn = s.connect({ client: '10.9.0.1:50001', broker: '10.9.0.2:9092', mss: 1460 });
      // The 40 KB request (three TLS records of up to 16 KB): the capture loses its fifth segment, inside its first record.
      const big = r.chunks.reduce((a, c, i) => (c.fromClient && c.bytes.length > r.chunks[a]!.bytes.length ? i : a), 0);
      let lostFrame = 0;
      r.chunks.forEach((ch, i) => {
        const before = s.frames.length;
        if (ch.fromClient) conn.clientBytes(ch.bytes);
        else conn.serverBytes(ch.bytes);
        if (i === big) {
          s.frames.splice(before + 4, 1);
          lostFrame = before + 5; // frames count from 1: the next segment reveals the gap
        }
      });
      conn.close();
      const capture = s.file(`gap12-${name.replace(/\W+/g, '-')}.pcap`);
      const keys = tmpFile(`gap12-${name.replace(/\W+/g, '-')}.keys`, r.keylog);
      const report = await analyzeFiles([capture], { tlsKeylogs: [keys] });
      // The record's 16,384 bytes of plaintext are lost; the rest of request 3 (two more records) cannot be framed.
      expect(brief(report.findings)).toEqual([
        ['capture-gap', lostFrame, '1460 bytes from the client are missing from the capture'],
        ['stream-desync', lostFrame, '23631 bytes from the client could not be framed as Kafka (bytes missing from the capture)'],
        ['tls-record-unreadable', lostFrame, 'a TLS record from the client lost 1460 bytes to a capture gap and was skipped'],
      ]);
      // Requests 1 and 2 before the gap, and 4 after the damaged one, are read and answered.
      const rows = await requestRows(capture, ['--tls-keylog', keys]);
      expect(rows.filter((x) => x[2] !== 3)).toEqual([
        [18, 3, 1, 'tls-client', true, 0],
        [3, 12, 2, null, true, null],
        [18, 3, 4, 'tls-client', true, 0],
      ]);
    });
  }
});

describe('a wrong TLS 1.2 master secret (real OpenSSL): authentication failures, never garbage requests', skipUnless(haveOpenssl, NO_OPENSSL), () => {
  for (const [name, ciphers] of [
    ['AES-128-GCM', 'ECDHE-RSA-AES128-GCM-SHA256'],
    ['AES-128-CBC HMAC-SHA256', 'ECDHE-RSA-AES128-SHA256'],
  ] as const) {
    it(`TLS 1.2 ${name}`, async () => {
      const r = await recordTls({ versions: { maxVersion: 'TLSv1.2', ciphers }, requests: REQUESTS.slice(0, 2) });
      const f = files(r, `wrong12-${name.replace(/\W+/g, '-')}`);
      // The last byte of the 48-byte master secret changed.
      const wrong = r.keylog.replace(/^(CLIENT_RANDOM \S+ \S{94})(\S\S)$/m, (_m, head: string, last: string) => head + (last === '00' ? '01' : '00'));
      expect(wrong).not.toBe(r.keylog);
      const report = await analyzeFiles([f.capture], { tlsKeylogs: [tmpFile(`wrong12-${name.replace(/\W+/g, '-')}.keys`, wrong)] });
      // Each direction: its first protected record (the Finished) is reported, the rest (two requests
      // or responses, and the close_notify alert) counted at the end.
      expect(brief(report.findings).map(([rule, , message]) => [rule, message.replace(/\(frame \d+\)/, '(frame N)')])).toEqual([
        ['tls-record-auth-failed', 'a TLS record from the client failed authentication (frame N): wrong key, or the capture is damaged; skipped'],
        ['tls-record-auth-failed', 'a TLS record from the broker failed authentication (frame N): wrong key, or the capture is damaged; skipped'],
        ['tls-record-auth-failed', '3 more TLS records from the broker failed authentication'],
        ['tls-record-auth-failed', '3 more TLS records from the client failed authentication'],
      ]);
      expect([report.counts.requests, report.counts.responses]).toEqual([0, 0]);
    });
  }
});
