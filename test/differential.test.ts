/**
 * kcid against another dissector on other people's traffic: every recorded capture in fixtures/,
 * every public capture under ../shared/captures/ (when present) and, where kcat, tcpdump and root
 * are at hand, traffic recorded afresh by test/real/record.sh (kcat and kafkajs; the modern client
 * too when CKJS_DIR is set) are run through tshark (Kafka ports given) and `kcid requests` (ports
 * detected), request by request. See test/real/differential.ts for what is compared and for the
 * documented tshark limitations; any other difference fails. Skipped without tshark.
 */
import { execFile, spawnSync } from 'node:child_process';
import { NO_SHARED, NO_TSHARK, onPath, skipUnless } from './helpers.js';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTmpFiles, tmpDir, tmpFile } from './builder/capture.js';
import { concat, int16, int32, requestFrame, responseFrame, string } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { fixtureCaptures, HAVE_SHARED, portsIn, sharedCaptures, type Capture } from './real/captures.js';
import {
  compare,
  differential,
  formatDifference,
  kcidRequests,
  LIMITATIONS,
  REPO,
  TSHARK_4_0_MAX_VERSION,
  tsharkRequests,
  type Comparison,
  type Request,
  type TsharkFlag,
} from './real/differential.js';

const HAVE_TSHARK = onPath('tshark');
/** "4.0.17", from the first line of `tshark --version`: "TShark (Wireshark) 4.0.17 (Git v4.0.17 ...)". */
const TSHARK_VERSION = HAVE_TSHARK ? (/TShark \(Wireshark\) (\d+\.\d+\.\d+)/.exec(spawnSync('tshark', ['--version']).stdout.toString())?.[1] ?? '') : '';
const CAN_RECORD = HAVE_TSHARK && onPath('kcat') && onPath('tcpdump') && onPath('capinfos') && process.getuid?.() === 0;
const RECORD_SH = join(REPO, 'test', 'real', 'record.sh');
const RECORD_TIMEOUT_MS = 120_000;

const results: { capture: Capture; c: Comparison }[] = [];

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function summary(capture: Capture, c: Comparison): string {
  const explained = new Map<string, number>();
  for (const d of c.differences) if (d.limitation !== null) explained.set(d.limitation.id, (explained.get(d.limitation.id) ?? 0) + 1);
  const why = [...explained].map(([id, n]) => `${n} ${id}`).join(', ');
  const clients = c.clientIds.map((id) => (id === '' ? '""' : id)).join(' ');
  return (
    `${capture.name} (${capture.origin}): ${count(c.compared, 'request')} compared (tshark ${c.tsharkRequests}, ` +
    `kcid ${c.kcidRequests}) on ${count(c.kcidConnections.length, 'connection')}, ClientIds ${clients}; ` +
    count(c.differences.length, 'difference') +
    (why === '' ? '' : ` (${why})`) +
    (c.unexplained.length === 0 ? '' : `, ${c.unexplained.length} UNEXPLAINED`)
  );
}

async function check(capture: Capture): Promise<void> {
  const c = await differential(capture.file, capture.ports);
  const name = capture.name;
  results.push({ capture, c });
  console.log(summary(capture, c));
  expect(c.tsharkRequests, `tshark decoded no request in ${name}: are the ports ${c.ports.join(',')} right?`).toBeGreaterThan(0);
  // kcid found, without --port, exactly the connections tshark decoded with the ports given.
  expect(c.kcidConnections).toEqual(c.tsharkConnections);
  expect(c.unexplained.map(formatDifference)).toEqual([]);
}

function percent(n: number, of: number): string {
  return `${((100 * n) / Math.max(of, 1)).toFixed(1)}%`;
}

describe('kcid agrees with tshark', skipUnless(HAVE_TSHARK, NO_TSHARK), () => {
  afterAll(() => {
    removeTmpFiles();
    if (results.length === 0) return;
    const sum = (f: (c: Comparison) => number): number => results.reduce((n, r) => n + f(r.c), 0);
    const compared = sum((c) => c.compared);
    const differences = sum((c) => c.differences.length);
    const unexplained = sum((c) => c.unexplained.length);
    const agreeing = sum((c) => c.agreeing);
    const total = sum((c) => c.total);
    const verdict =
      unexplained === 0
        ? `${differences} differences all explained by documented tshark limitations`
        : `${differences} differences, ${unexplained} NOT explained by documented tshark limitations`;
    const byOrigin = new Map<string, { captures: number; requests: number }>();
    for (const { capture, c } of results) {
      const o = byOrigin.get(capture.origin) ?? { captures: 0, requests: 0 };
      o.captures++;
      o.requests += c.compared;
      byOrigin.set(capture.origin, o);
    }
    console.log(
      `${compared} requests compared across ${results.length} captures, ${verdict} ` +
        `(agreement ${percent(agreeing, total)}: ${agreeing} of ${total} requests agree in every field)\n` +
        [...byOrigin].map(([origin, o]) => `  ${origin}: ${count(o.requests, 'request')} in ${count(o.captures, 'capture')}`).join('\n'),
    );
  });

  // How tshark numbers PDUs that span segments or share one, checked on a capture whose every byte
  // is known: a PDU belongs to the frame holding its last byte, several PDUs in one segment all
  // belong to it (in stream order), and a response names its request's frame. kcid does the same.
  it('numbers reassembled and coalesced PDUs as tshark does', async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '10.0.0.1:40000', broker: '10.0.0.2:9092' }); // frames 1-3: handshake
    const heartbeatV0 = concat(string('group'), int32(1), string('member-1'));
    const req = [1, 2, 3, 4, 5].map((i) =>
      requestFrame({ apiKey: 12, apiVersion: 0, correlationId: i, clientId: `client-${i}`, body: heartbeatV0 }),
    );
    const res = [1, 2, 3, 4, 5].map((i) => responseFrame({ correlationId: i, headerVersion: 0, body: int16(0) }));
    conn.clientBytes(concat(req[0]!, req[1]!)); // frame 4: requests 1 and 2 whole
    conn.clientBytes(req[2]!.subarray(0, 20)); // frame 5: the start of request 3
    conn.clientBytes(concat(req[2]!.subarray(20), req[3]!.subarray(0, 30))); // frame 6: its end, the start of 4
    conn.clientBytes(concat(req[3]!.subarray(30), req[4]!)); // frame 7: the end of 4, request 5 whole
    conn.serverBytes(concat(res[0]!, res[1]!, res[2]!)); // frame 8
    conn.serverBytes(concat(res[3]!, res[4]!.subarray(0, 3))); // frame 9
    conn.serverBytes(res[4]!.subarray(3)); // frame 10
    const file = tmpFile('split.pcap', s.pcap());

    const expected = [
      [4, 1, 8],
      [4, 2, 8],
      [6, 3, 8],
      [7, 4, 9],
      [7, 5, 10],
    ];
    const tshark = await tsharkRequests(file, [9092]);
    const kcid = await kcidRequests(file);
    expect(tshark.map((r) => [r.frame, r.correlationId, r.responseFrame])).toEqual(expected);
    expect(kcid.map((r) => [r.frame, r.correlationId, r.responseFrame])).toEqual(expected);
    expect(compare(file, [9092], tshark, kcid).differences).toEqual([]);
  });

  // RFC 5952 §4.2.3: of two equal runs of zero groups, the first becomes '::'.
  it('writes IPv6 endpoints as tshark does', async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '[2001:db8::1]:40000', broker: '[2001:db8:0:0:1::2]:9092' });
    conn.clientBytes(requestFrame({ apiKey: 18, apiVersion: 0, correlationId: 7, clientId: 'v6-client' }));
    conn.serverBytes(responseFrame({ correlationId: 7, headerVersion: 0, body: concat(int16(0), int32(0)) }));
    const file = tmpFile('v6.pcap', s.pcap());

    const tshark = await tsharkRequests(file, [9092]);
    const kcid = await kcidRequests(file);
    expect(tshark.map((r) => [r.client, r.broker, r.frame, r.responseFrame])).toEqual([
      ['[2001:db8::1]:40000', '[2001:db8::1:0:0:2]:9092', 4, 5],
    ]);
    expect(compare(file, [9092], tshark, kcid).differences).toEqual([]);
  });

  // The documented table of what tshark 4.0 knows, measured again: one request header (v1, no body)
  // for every key 0..80 and version 0..20. Only for tshark 4.0.x; the limitations themselves rely
  // on tshark's own flags, not on this table.
  it('tshark 4.0 knows the API keys and versions documented', skipUnless(TSHARK_VERSION.startsWith('4.0.'), `tshark is ${TSHARK_VERSION || 'absent'}, not 4.0 (the table is 4.0's)`), async () => {
    const s = new Scenario();
    const conn = s.connect({ client: '10.0.0.1:40000', broker: '10.0.0.2:9092' });
    const expected: [number, number, TsharkFlag | null][] = [];
    for (let key = 0; key <= 80; key++) {
      for (let version = 0; version <= 20; version++) {
        // ControlledShutdown v0 is the one request with header v0: no ClientId (RequestHeader.json).
        const headerVersion = key === 7 && version === 0 ? 0 : 1;
        const correlationId = key * 100 + version;
        conn.clientBytes(requestFrame({ apiKey: key, apiVersion: version, correlationId, headerVersion, clientId: 'x' }));
        const max = TSHARK_4_0_MAX_VERSION.get(key);
        expected.push([key, version, max === undefined ? 'unknown-api-key' : version > max ? 'unsupported-api-version' : null]);
      }
    }
    const file = tmpFile('versions.pcap', s.pcap());
    const tshark = await tsharkRequests(file, [9092]);
    expect(tshark.map((r) => [r.apiKey, r.apiVersion, r.flag])).toEqual(expected);
    // Flagged or not, tshark reads the whole header.
    const headerRead = (r: Request): boolean =>
      r.correlationId === r.apiKey * 100 + r.apiVersion && r.clientId === (r.apiKey === 7 && r.apiVersion === 0 ? null : 'x');
    expect(tshark.filter((r) => !headerRead(r))).toEqual([]);
    // And kcid reads the same headers, keys it knows or not.
    expect(compare(file, [9092], tshark, await kcidRequests(file)).differences.map(formatDifference)).toEqual([]);
    console.log(`tshark ${TSHARK_VERSION}; documented limitations: ${LIMITATIONS.map((l) => `${l.id}: ${l.reason}`).join('; ')}`);
  });

  describe('recorded fixtures', () => {
    // The -dsb pcapng carries its TLS key log: kcid decrypts its TLS leg (found by detection), which
    // tshark told only the Kafka ports cannot; test/tls-recorded.test.ts compares that leg with tshark.
    it.each(fixtureCaptures().filter((c) => !c.name.endsWith('-dsb.pcapng')).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      await check(c);
    });
  });

  // tcpdump -s 128, a common way to keep captures small: every packet's first 128 bytes only. kcid
  // must read every header those bytes hold, and keep framing across what they do not.
  describe('recorded fixtures cut to a 128-byte snapshot length', skipUnless(onPath('editcap'), 'editcap is not on the PATH (Debian: wireshark-common, which tshark brings)'), () => {
    // Wireshark 4.0's editcap cannot rewrite a pcapng holding a Decryption Secrets Block ("can't be
    // written as a pcapng file"): the -dsb fixture is left out here (its traffic is checked whole above).
    it.each(fixtureCaptures().filter((c) => !c.name.endsWith('-dsb.pcapng')).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      const file = join(tmpDir(), `snap128-${basename(c.file).replace(/\.gz$/, '')}`);
      const r = spawnSync('editcap', ['-s', '128', c.file, file], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      await check({ ...c, name: `${c.name} (snaplen 128)`, file });
    });
  });

  const shared = sharedCaptures();
  describe('public captures in ../shared/captures', skipUnless(HAVE_SHARED, NO_SHARED), () => {
    it.each(shared.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      await check(c);
    });
  });

  describe('traffic recorded now (record.sh)', skipUnless(CAN_RECORD, 'recording needs root and tshark, kcat, tcpdump and capinfos on the PATH (.ci/run installs them)'), () => {
    const kinds = ['produce', 'metadata-any', 'metadata-sll2', 'nano', 'large', 'kafkajs'];
    if (onPath('dumpcap')) kinds.push('consumer-group');
    if (process.env['CKJS_DIR'] !== undefined) kinds.push('modern');
    let recorded: Capture[] = [];

    // Real clients on a real clock: a run can fail now and then (a consumer giving up early on a busy
    // machine). One failed run is retried, and said so; two fail the test.
    beforeAll(async () => {
      const record = () =>
        promisify(execFile)('bash', [RECORD_SH, tmpDir(), ...kinds], { timeout: RECORD_TIMEOUT_MS, maxBuffer: 16 << 20 });
      let stdout: string;
      let stderr: string;
      try {
        ({ stdout, stderr } = await record());
      } catch (err) {
        console.warn(`record.sh failed once, recording again: ${(err as Error).message}`);
        ({ stdout, stderr } = await record());
      }
      // On a loaded machine the kernel may drop a packet of the capture (record.sh says so): tshark and
      // kcid then disagree about a request neither saw whole. Such a run is recorded once more.
      if (/warning: the capture missed segments/.test(stderr)) {
        console.warn(`record.sh: a capture missed segments, recording again: ${stderr.trim()}`);
        ({ stdout, stderr } = await record());
      }
      recorded = recordedCaptures(stdout);
    }, 2 * RECORD_TIMEOUT_MS + 10_000);

    it(`records ${kinds.join(', ')}`, () => {
      const expected = kinds.filter((k) => k !== 'modern' || recorded.some((c) => c.name.startsWith('ckjs-')));
      expect(recorded.length).toBe(expected.length);
      for (const c of recorded) expect(existsSync(c.file)).toBe(true);
    });

    it('agrees on every recorded capture', async () => {
      for (const c of recorded) await check(c);
    });
  });
});

/** record.sh prints per file: "== /path/file.pcap" then "   size N bytes; mock broker ports A,B,C". */
function recordedCaptures(stdout: string): Capture[] {
  const captures: Capture[] = [];
  let file: string | null = null;
  for (const line of stdout.split('\n')) {
    if (line.startsWith('== ')) file = line.slice(3).trim();
    const ports = /mock broker ports ([\d,]+)/.exec(line);
    if (file !== null && ports !== null) {
      captures.push({ file, name: basename(file), ports: portsIn(ports[1]!), origin: 'recorded now' });
      file = null;
    }
  }
  return captures;
}
