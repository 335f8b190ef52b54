/**
 * Real TLS recorded by tcpdump (test/real/record.sh, kind `tls`): kafkajs producers with `ssl` to Node
 * TLS servers on loopback that relay the plaintext to kcat's mock cluster, the key log from Node's
 * 'keylog' event. Each capture holds both legs of every connection, so the requests kcid decrypts on
 * the TLS leg must be, request by request, those of the plaintext leg (API, version, correlation id,
 * ClientId, ClientInstanceId, sizes of request and response), and agree with tshark given the same key
 * log. The committed fixtures are checked always (tshark where installed); a fresh recording of every
 * variant runs when we are root with tcpdump, kcat, tshark and openssl.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { analyzeInput, DEFAULT_MAX_FRAME_BYTES } from '../src/analysis/run.js';
import type { ConnState } from '../src/analysis/connection-state.js';
import type { KafkaRequest, KafkaResponse } from '../src/kafka/events.js';
import { REPO } from './real/differential.js';
import { skipUnless } from './helpers.js';

const runAsync = promisify(execFile);

const has = (cmd: string, args: string[]): boolean => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const haveTshark = has('tshark', ['-v']);
const isRoot = process.getuid?.() === 0;
const missing = [
  ...(isRoot ? [] : ['root (to capture on lo)']),
  ...[
    ['tcpdump', '--version'],
    ['kcat', '-V'],
    ['tshark', '-v'],
    ['editcap', '-v'],
    ['openssl', 'version'],
  ]
    .filter(([cmd, arg]) => !has(cmd!, [arg!]))
    .map(([cmd]) => cmd!),
];

/** One request as both legs show it: connection-relative, so the TLS and the plaintext leg compare. */
type Row = [apiKey: number, apiVersion: number, correlationId: number, clientId: string | null, instanceId: string | null, size: number, responseSize: number | null];

interface Legs {
  /** Per connection (by broker port, then client port), its requests in order. */
  tls: Row[][];
  plain: Row[][];
  /** Requests of the TLS leg by frame, as tshark sees them: [frame, apiKey, apiVersion, correlationId, clientId, size]. */
  tlsFrames: [number, number, number, number, string | null, number][];
  /** TLS details of the TLS leg's connections. */
  tlsInfo: { version: string | null; cipher: string | null; decrypted: boolean }[];
  findings: string[];
  notes: string[];
}

/** kcid in process: every request with its response, split into the two legs by broker port. */
async function kcidLegs(file: string, tlsPorts: readonly number[], o: { keys?: string; ports?: readonly number[] } = {}): Promise<Legs> {
  const rows = new Map<ConnState, { row: Row; frame: number; req: KafkaRequest }[]>();
  const add = (s: ConnState, req: KafkaRequest, res: KafkaResponse | null): void => {
    const h = req.header;
    const id = h.clientInstanceId === null ? null : Buffer.from(h.clientInstanceId).toString('base64url');
    let list = rows.get(s);
    if (list === undefined) rows.set(s, (list = []));
    list.push({ row: [h.apiKey, h.apiVersion, h.correlationId, h.clientId, id, req.size, res?.size ?? null], frame: req.frame, req });
  };
  const result = await analyzeInput(
    file,
    0,
    {
      kafkaPorts: new Set(o.ports ?? []),
      detect: true,
      maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
      ...(o.keys === undefined ? {} : { tlsKeylogs: [o.keys] }),
    },
    () => {},
    {
      response: (s, r) => {
        if (r.request !== null) add(s, r.request, r);
      },
      unanswered: (s, r) => add(s, r, null),
    },
  );
  const port = (addr: string): number => Number(addr.slice(addr.lastIndexOf(':') + 1));
  const legs: Legs = { tls: [], plain: [], tlsFrames: [], tlsInfo: [], findings: result.findings.map((f) => `${f.rule}: ${f.message}`), notes: result.input.notes };
  const conns = [...rows].sort(([a], [b]) => port(a.broker) - port(b.broker) || port(a.client) - port(b.client));
  for (const [s, list] of conns) {
    list.sort((a, b) => a.frame - b.frame || a.row[2] - b.row[2]);
    const isTls = tlsPorts.includes(port(s.broker));
    (isTls ? legs.tls : legs.plain).push(list.map((x) => x.row));
    if (isTls) for (const x of list) legs.tlsFrames.push([x.frame, x.row[0], x.row[1], x.row[2], x.row[3], x.row[5]]);
  }
  legs.tlsFrames.sort((a, b) => a[0] - b[0] || a[3] - b[3]);
  for (const c of result.connections) {
    if (c.tls !== null && c.tls !== undefined) legs.tlsInfo.push({ version: c.tls.version, cipher: c.tls.cipher, decrypted: c.tls.decrypted });
  }
  return legs;
}

/** The two legs carry the same connections; their order may differ (the relay connects upstream as each client arrives). */
const sameConnections = (a: Row[][], b: Row[][]): void => {
  const key = (c: Row[]): string => JSON.stringify(c);
  expect([...a].sort((x, y) => (key(x) < key(y) ? -1 : 1))).toEqual([...b].sort((x, y) => (key(x) < key(y) ? -1 : 1)));
};

/** tshark's requests on the TLS leg, decrypted with the key log (or the capture's own secrets). */
async function tsharkRequests(file: string, tlsPorts: readonly number[], keys: string | null): Promise<Legs['tlsFrames']> {
  const args = ['-r', file, '-n'];
  if (keys !== null) args.push('-o', `tls.keylog_file:${keys}`);
  // tshark 4.0 offers TLS application data to its heuristic dissectors first: RDP multi-transport's claims some Produce requests.
  args.push('--disable-protocol', 'rdpmt');
  for (const p of tlsPorts) args.push('-d', `tcp.port==${p},tls`, '-d', `tls.port==${p},kafka`);
  args.push('-Y', `kafka && tcp.dstport in {${tlsPorts.join(',')}}`, '-T', 'fields', '-E', 'separator=;', '-E', 'occurrence=a', '-E', 'aggregator=|');
  for (const f of ['frame.number', 'kafka.api_key', 'kafka.api_version', 'kafka.correlation_id', 'kafka.client_id', 'kafka.len']) args.push('-e', f);
  const { stdout } = await runAsync('tshark', args, { maxBuffer: 64 << 20 });
  const out: Legs['tlsFrames'] = [];
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    const [frame, keys2, versions, correlations, clientIds, lens] = line.split(';').map((f) => f.split('|'));
    keys2!.forEach((k, i) => {
      const id = clientIds![i];
      out.push([Number(frame![0]), Number(k), Number(versions![i]), Number(correlations![i]), id === undefined || id === '' ? null : id, Number(lens![i])]);
    });
  }
  return out;
}

/** The committed recordings (fixtures/README.md): TLS servers' ports and what each negotiated. */
const FIXTURES: { file: string; keys: string | null; tlsPorts: number[]; version: string; cipher: string }[] = [
  { file: 'kafkajs-tls-tls13-chacha20.pcap', keys: 'kafkajs-tls-tls13-chacha20.keys', tlsPorts: [35655, 42719, 34979], version: 'TLS 1.3', cipher: 'TLS_CHACHA20_POLY1305_SHA256' },
  { file: 'kafkajs-tls-tls12-ecdhe-aes128cbc-sha256.pcap', keys: 'kafkajs-tls-tls12-ecdhe-aes128cbc-sha256.keys', tlsPorts: [32803, 42189, 46267], version: 'TLS 1.2', cipher: 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256' },
  { file: 'kafkajs-tls-tls12-rsa-aes256gcm.pcap', keys: 'kafkajs-tls-tls12-rsa-aes256gcm.keys', tlsPorts: [38193, 42325, 46237], version: 'TLS 1.2', cipher: 'TLS_RSA_WITH_AES_256_GCM_SHA384' },
  // The key log inside the file (editcap --inject-secrets): no --tls-keylog.
  { file: 'kafkajs-tls-tls13-aes256gcm-dsb.pcapng', keys: null, tlsPorts: [37281, 38207, 38095], version: 'TLS 1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
];

const fixture = (name: string): string => join(REPO, 'fixtures', name);

describe('kafkajs over TLS, recorded by tcpdump: the committed fixtures', () => {
  it.each(FIXTURES)('$file: the decrypted requests are the plaintext leg\'s, request by request', async (f) => {
    const legs = await kcidLegs(fixture(f.file), f.tlsPorts, { ...(f.keys === null ? {} : { keys: fixture(f.keys) }), ports: f.tlsPorts });
    expect(legs.findings).toEqual([]);
    expect(legs.notes).toEqual([]);
    // kafkajs: ApiVersions v2, Metadata v2, Produce v7, each answered; header v1 (no ClientInstanceId).
    expect(legs.tls.flat().map((r) => [r[0], r[1], r[2], r[3], r[4], r[6] !== null])).toEqual([
      [18, 2, 0, `kcid-tls-${f.file.replace(/^kafkajs-tls-|(-dsb)?\.pcapn?g?$/g, '')}`, null, true],
      [3, 2, 1, `kcid-tls-${f.file.replace(/^kafkajs-tls-|(-dsb)?\.pcapn?g?$/g, '')}`, null, true],
      [0, 7, 2, `kcid-tls-${f.file.replace(/^kafkajs-tls-|(-dsb)?\.pcapn?g?$/g, '')}`, null, true],
    ]);
    sameConnections(legs.tls, legs.plain);
    expect(legs.tlsInfo.every((t) => t.decrypted && t.version === f.version && t.cipher === f.cipher)).toBe(true);
    if (haveTshark) expect(await tsharkRequests(fixture(f.file), f.tlsPorts, f.keys === null ? null : fixture(f.keys))).toEqual(legs.tlsFrames);
    // Without --port kcid finds both legs itself: Kafka detected in the clear, and inside the decrypted TLS.
    const found = await kcidLegs(fixture(f.file), f.tlsPorts, f.keys === null ? {} : { keys: fixture(f.keys) });
    expect([found.tls, found.plain, found.findings]).toEqual([legs.tls, legs.plain, []]);
  });
});

interface Recorded {
  name: string;
  file: string;
  keys: string;
  tlsPorts: number[];
  /** The capture missed packets (tshark's lost-segment flags, or the kernel's drops during the run). */
  lossy: boolean;
}

/**
 * record.sh's summary: "== DIR/kafkajs-tls-NAME.pcap (+ ...)", "   size N bytes; TLS ports A,B,C, ...",
 * then "   capture losses: L packets ...; D packets dropped by the kernel in this run".
 */
function recorded(stdout: string): Recorded[] {
  const out: Recorded[] = [];
  const re = /^== (\S+\/kafkajs-tls-(\S+)\.pcap) \(\+ \S+\)\n {3}size \d+ bytes; TLS ports ([\d,]+),.*\n.*\n {3}capture losses: (\d+) .*; (\d+) packets dropped/gm;
  for (let m = re.exec(stdout); m !== null; m = re.exec(stdout)) {
    out.push({ name: m[2]!, file: m[1]!, keys: m[1]!.replace(/\.pcap$/, '.keys'), tlsPorts: m[3]!.split(',').map(Number), lossy: m[4] !== '0' || m[5] !== '0' });
  }
  return out;
}

const EXPECTED: Record<string, [string, string]> = {
  'tls13-aes128gcm': ['TLS 1.3', 'TLS_AES_128_GCM_SHA256'],
  'tls13-aes256gcm': ['TLS 1.3', 'TLS_AES_256_GCM_SHA384'],
  'tls13-chacha20': ['TLS 1.3', 'TLS_CHACHA20_POLY1305_SHA256'],
  'tls12-ecdhe-aes128gcm': ['TLS 1.2', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
  'tls12-ecdhe-chacha20': ['TLS 1.2', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256'],
  'tls12-ecdhe-aes128cbc-sha1': ['TLS 1.2', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA'],
  'tls12-ecdhe-aes128cbc-sha256': ['TLS 1.2', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256'],
  'tls12-rsa-aes256gcm': ['TLS 1.2', 'TLS_RSA_WITH_AES_256_GCM_SHA384'],
};

describe('kafkajs over TLS, recorded by tcpdump now (record.sh tls)', skipUnless(missing.length === 0, `recording needs ${missing.join(', ')} (.ci/run installs the tools and runs as root)`), () => {
  it('every TLS 1.3 suite and TLS 1.2 family: kcid decrypts the plaintext leg\'s requests, as tshark does', async () => {
    const dirs: string[] = [];
    try {
      // A loaded machine may drop packets from the capture (the kernel's count, or tshark's lost
      // segments say so): such a variant is recorded again, up to three runs in all.
      const files = new Map<string, Recorded>();
      let dsb: { file: string; of: Recorded } | null = null;
      for (let run = 0; run < 3 && files.size < Object.keys(EXPECTED).length; run++) {
        const dir = mkdtempSync(join(tmpdir(), 'kcid-tls-record-'));
        dirs.push(dir);
        const { stdout } = await runAsync('bash', [join(REPO, 'test', 'real', 'record.sh'), dir, 'tls'], { maxBuffer: 16 << 20 });
        const got = recorded(stdout);
        expect(got.map((f) => f.name)).toEqual(Object.keys(EXPECTED));
        for (const f of got) {
          if (f.lossy || files.has(f.name)) continue;
          files.set(f.name, f);
          if (f.name === 'tls13-aes256gcm') dsb = { file: join(dir, 'kafkajs-tls-tls13-aes256gcm-dsb.pcapng'), of: f };
        }
      }
      expect([...files.keys()].sort(), 'variants recorded without capture loss in three runs').toEqual(Object.keys(EXPECTED).sort());
      for (const f of files.values()) {
        const legs = await kcidLegs(f.file, f.tlsPorts, { keys: f.keys, ports: f.tlsPorts });
        expect(legs.findings, f.name).toEqual([]);
        // kafkajs: ApiVersions and Metadata on the bootstrap connection, Produce on the leader's.
        expect(legs.tls.flat().map((r) => r[0]), f.name).toEqual(expect.arrayContaining([18, 3, 0]));
        sameConnections(legs.tls, legs.plain);
        expect(new Set(legs.tlsInfo.map((t) => JSON.stringify(t))), f.name).toEqual(new Set([JSON.stringify({ version: EXPECTED[f.name]![0], cipher: EXPECTED[f.name]![1], decrypted: true })]));
        expect(await tsharkRequests(f.file, f.tlsPorts, f.keys), f.name).toEqual(legs.tlsFrames);
      }
      // The same traffic with its key log inside the pcapng (editcap --inject-secrets), no --tls-keylog.
      const { file, of } = dsb!;
      const inside = await kcidLegs(file, of.tlsPorts, { ports: of.tlsPorts });
      expect(inside.findings).toEqual([]);
      expect(inside.tls).toEqual((await kcidLegs(of.file, of.tlsPorts, { keys: of.keys, ports: of.tlsPorts })).tls);
      expect(await tsharkRequests(file, of.tlsPorts, null)).toEqual(inside.tlsFrames);
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  }, 150_000);
});
