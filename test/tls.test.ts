/**
 * TLS: real OpenSSL traffic (Node's tls on both ends, recorded by test/tls/record.ts) for each TLS
 * 1.3 suite and each TLS 1.2 family, decrypted with the key log Node wrote, must give the requests
 * of the same conversation in plaintext; and made-up sessions (test/builder/tls.ts) for KeyUpdate
 * and for bad input: a wrong key, garbage key log lines, oversize and cut-off records, a gap, alerts.
 */
import { constants } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tmpFile } from './builder/capture.js';
import { requestFrame } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { CONTENT, Tls13Session, record, u8 } from './builder/tls.js';
import { analyzeFiles, brief, runKcid } from './helpers.js';
import { captureOf, recordTls, recordTlsConnections, testCertificate, type RecordOptions, type TlsRecording } from './tls/record.js';

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

describe.skipIf(!haveOpenssl)('TLS recorded from OpenSSL (Node tls), decrypted with its key log', () => {
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

describe.skipIf(!haveOpenssl)('TLS handshakes: HelloRetryRequest, resumption, no keys', () => {
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

describe.skipIf(!haveOpenssl || !hasTool('editcap'))('keys inside the capture: pcapng Decryption Secrets Blocks', () => {
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

describe.skipIf(!haveOpenssl || !hasTool('tshark'))('TLS: kcid agrees with tshark given the same key log', () => {
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
