/**
 * Every resource bound kcid keeps against hostile input, tested at the number it enforces: frame
 * sizes, the prefix kept per frame, pending requests, live connections, out-of-order buffers, the
 * idle timeout, kept tags, pcap/pcapng record sizes, port-detection bytes and pieces; and floods
 * scaled down from the million-connection attacks of `npm run fuzz -- flood`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Table from 'cli-table3';
import { checkCapture, installAllocationHook } from '../scripts/fuzz/check.js';
import { floodCapture } from '../scripts/fuzz/flood.js';
import { mergeResults } from '../src/analysis/parallel.js';
import { DEFAULT_MAX_SUMMARIES } from '../src/analysis/analyzer.js';
import { analyzeInput, DEFAULT_MAX_FINDINGS, type InputResult } from '../src/analysis/run.js';
import type { Report } from '../src/analysis/report.js';
import type { Finding } from '../src/analysis/types.js';
import { MAX_PACKET_BYTES } from '../src/capture/parser.js';
import { run, type Io } from '../src/cli/main.js';
import { KafkaConversation } from '../src/kafka/conversation.js';
import type { KafkaListener } from '../src/kafka/events.js';
import { MAX_KEPT_TAGS } from '../src/kafka/headers.js';
import { newTcpSegment, type TcpSegment } from '../src/net/types.js';
import { makeStyle } from '../src/report/style.js';
import { renderFindings, renderInstances } from '../src/report/table.js';
import { Reassembler } from '../src/tcp/reassembly.js';
import type { ConnectionFactory, Direction, StreamHandler, TcpConnection } from '../src/tcp/types.js';
import { Bytes, pcapngBlock, pcapngFile, pcapFile, removeTmpFiles, shbBlock, idbBlock, tmpFile } from './builder/capture.js';
import { concat, int16, int32, sizePrefixed, taggedFields } from './builder/kafka.js';
import { Scenario } from './builder/scenario.js';
import { DEFAULTS } from './helpers.js';

afterAll(removeTmpFiles);

interface Cli {
  code: number;
  out: string;
  err: string;
}

async function kcid(args: string[]): Promise<Cli> {
  const r: Cli = { code: 0, out: '', err: '' };
  const io: Io = { stdout: { write: (s: string) => (r.out += s) }, stderr: { write: (s: string) => (r.err += s) }, env: { NO_COLOR: '1' } };
  r.code = await run(args, io);
  return r;
}

async function report(file: string, extra: string[] = []): Promise<{ findings: { rule: string; frame: number; message: string }[]; summary: { requests: number; connections: number }; inputs: { notes: string[]; packets: number }[] }> {
  const r = await kcid(['analyze', '--format', 'json', '--fail-on', 'none', '--allow-empty', ...extra, file]);
  expect(r.err).toBe('');
  return JSON.parse(r.out);
}

async function rows(file: string, extra: string[] = []): Promise<{ frame: number; correlationId: number; responseFrame: number | null; requestCaptured: boolean; otherTags: { tag: number; size: number }[] }[]> {
  const r = await kcid(['requests', '--format', 'ndjson', '--allow-empty', ...extra, file]);
  expect(r.err).toBe('');
  return r.out === '' ? [] : r.out.trimEnd().split('\n').map((l) => JSON.parse(l));
}

const desyncs = (findings: { rule: string; frame: number; message: string }[]): [number, string][] =>
  findings.filter((f) => f.rule === 'stream-desync').map((f) => [f.frame, f.message]);

/** Metadata v12 (header v2, flexible): Topics null, AllowAutoTopicCreation, IncludeTopicAuthorizedOperations, tags. */
const METADATA_V12 = concat(Uint8Array.of(0x00, 0x01, 0x00), taggedFields());

describe('Kafka frames', () => {
  it('a frame size over --max-frame-bytes (default 100 MiB = socket.request.max.bytes) is a desync, and the next request is still read', async () => {
    for (const [size, extra, max] of [
      [0x7fffffff, [], 104857600],
      [104857601, [], 104857600],
      [2000, ['--max-frame-bytes', '1KiB'], 1024],
    ] as const) {
      const s = new Scenario();
      const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
      // The size, then 10 bytes of 'K' (0x4b): no position inside them looks like a frame start either.
      c.clientBytes(concat(int32(size), new Uint8Array(10).fill(0x4b)));
      c.request({ apiKey: 18, apiVersion: 0, correlationId: 2, clientId: 'after' });
      const r = await report(s.file(), [...extra]);
      expect(desyncs(r.findings)).toEqual([[4, `14 bytes from the client could not be framed as Kafka (frame size ${size} exceeds the maximum of ${max} bytes)`]]);
      expect((await rows(s.file(), [...extra])).map((x) => x.correlationId)).toEqual([2]);
    }
  });

  it('a negative frame size (2 GiB and more as unsigned) is below the 8-byte minimum of a request', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    c.clientBytes(concat(int32(-2147483648), new Uint8Array(10).fill(0x4b)));
    c.request({ apiKey: 18, apiVersion: 0, correlationId: 2, clientId: 'after' });
    const r = await report(s.file());
    expect(desyncs(r.findings)).toEqual([[4, '14 bytes from the client could not be framed as Kafka (frame size -2147483648 is below the minimum of 8 bytes)']]);
  });

  it('a 100 MiB frame that never completes costs no memory proportional to its size', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092', mss: 8192 });
    c.clientBytes(concat(int32(100 * 1024 * 1024), int16(0), int16(9), int32(1), int16(-1), new Uint8Array(2 * 1024 * 1024)));
    const file = s.file();
    const uninstall = installAllocationHook();
    try {
      const o = await checkCapture(file);
      // The reader's two 4 MiB read buffers are the largest allocations: nothing sized by the frame.
      expect(o.failure).toBeNull();
    } finally {
      uninstall();
    }
    expect((await rows(file)).map((x) => [x.correlationId, x.responseFrame])).toEqual([[1, null]]);
  });

  it('a request header is read from at most the first 64 KiB of its frame: 65,536 bytes decode, 65,537 are a desync', async () => {
    for (const [headerBytes, decoded] of [
      [65536, true],
      [65537, false],
    ] as const) {
      // Header v2: key, version, correlation id (8), ClientId "x" (3), then one tag of N bytes:
      // count (1), tag (1), size as a 3-byte varint, the bytes. 16 + N = headerBytes.
      const tagBytes = headerBytes - 16;
      const s = new Scenario();
      const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
      c.request({ apiKey: 3, apiVersion: 12, clientId: 'x', tags: [{ tag: 5, bytes: new Uint8Array(tagBytes).fill(0x41) }], body: METADATA_V12 });
      c.request({ apiKey: 3, apiVersion: 12, clientId: null, body: METADATA_V12 });
      const listed = await rows(s.file());
      const r = await report(s.file());
      if (decoded) {
        expect(listed.map((x) => [x.correlationId, x.otherTags])).toEqual([[1, [{ tag: 5, size: 65520 }]], [2, []]]);
        expect(desyncs(r.findings)).toEqual([]);
      } else {
        expect(listed.map((x) => x.correlationId)).toEqual([2]);
        expect(desyncs(r.findings).map(([, m]) => m)).toEqual([`${4 + headerBytes + 4} bytes from the client could not be framed as Kafka (bytes that do not parse as a Kafka message)`]);
      }
    }
  });

  it(`keeps the first ${MAX_KEPT_TAGS} unknown header tags of a request, and a tag count in the billions is one problem`, async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const tags = Array.from({ length: 100 }, (_, i) => ({ tag: i + 1, bytes: Uint8Array.of(i) }));
    c.request({ apiKey: 3, apiVersion: 12, clientId: 'x', tags, body: METADATA_V12 });
    // Tag count 0xffffffff (a 5-byte varint), then nothing like that many fields.
    c.request({ apiKey: 3, apiVersion: 12, clientId: null, rawTagSection: Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0) });
    const listed = await rows(s.file());
    expect(listed[0]!.otherTags).toEqual(tags.slice(0, MAX_KEPT_TAGS).map((t) => ({ tag: t.tag, size: 1 })));
    const r = await report(s.file());
    expect(r.findings.filter((f) => f.rule === 'malformed-request-header').map((f) => f.message)).toEqual([
      // Key, version, correlation id (8), null ClientId (2), the 7 bytes of the tag section.
      'header overruns the 17-byte frame (truncated: varint at offset 17 runs past the end)',
    ]);
  });
});

describe('requests waiting for responses', () => {
  it('a connection keeps 1,024 pending requests: the oldest are given up (shown unanswered) beyond that', async () => {
    const s = new Scenario();
    const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
    const n = 1030;
    for (let i = 1; i <= n; i++) c.request({ apiKey: 18, apiVersion: 0, clientId: null });
    for (let i = 1; i <= n; i++) c.respond(i, Uint8Array.of(0, 0, 0, 0, 0, 0));
    const listed = await rows(s.file());
    // Every request, and the six responses that came after their requests were given up, as rows of their own.
    expect(listed).toHaveLength(n + 6);
    expect(listed.filter((x) => x.responseFrame === null).map((x) => x.correlationId)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(listed.filter((x) => x.requestCaptured === false).map((x) => x.correlationId)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

/** A TCP segment from `a` (client 10.0.0.<id>:40000) or to it, built in place. */
function segment(id: number, fromClient: boolean, seq: number, ack: number, flags: number, payload = 0, tsSec = 1_700_000_000): TcpSegment {
  const data = Buffer.alloc(8 + payload);
  data.writeUInt32BE(0x0a000000 + id, fromClient ? 0 : 4);
  data.writeUInt32BE(0x0a800002, fromClient ? 4 : 0);
  return Object.assign(newTcpSegment(), {
    frame: 1, tsSec, ipVersion: 4 as const, data, srcAddrOff: 0, dstAddrOff: 4,
    srcPort: fromClient ? 40000 : 9092, dstPort: fromClient ? 9092 : 40000, seq, ack, flags, payloadOff: 8, payloadLen: payload, missingLen: 0,
  });
}

/** A factory that records what its streams saw. */
function recorder(): { factory: ConnectionFactory; ends: [number, string][]; gaps: [number, Direction, number][]; opened: TcpConnection[] } {
  const r = { ends: [] as [number, string][], gaps: [] as [number, Direction, number][], opened: [] as TcpConnection[] };
  const factory: ConnectionFactory = {
    open(conn): StreamHandler {
      r.opened.push(conn);
      return {
        data() {},
        gap: (dir, bytes) => r.gaps.push([conn.id, dir, bytes]),
        end: (reason) => r.ends.push([conn.id, reason]),
      };
    },
  };
  return { ...r, factory };
}

const SYN = 0x02;
const ACK = 0x10;

describe('TCP reassembly', () => {
  it('keeps at most 100,000 live connections by default: the least recently active is evicted', () => {
    const rec = recorder();
    const re = new Reassembler(rec.factory, { kafkaPorts: new Set([9092]) });
    for (let i = 1; i <= 100_002; i++) re.segment(segment(i, true, 1000, 0, SYN));
    expect(re.liveConnections).toBe(100_000);
    expect(re.stats.retiredConnections).toBe(2);
    expect(rec.ends).toEqual([
      [1, 'evicted'],
      [2, 'evicted'],
    ]);
  });

  it('retires a connection idle for 600 s of capture time', () => {
    const rec = recorder();
    const re = new Reassembler(rec.factory, { kafkaPorts: new Set([9092]) });
    re.segment(segment(1, true, 1000, 0, SYN, 0, 1000));
    re.segment(segment(2, true, 1000, 0, SYN, 0, 1600));
    expect(rec.ends).toEqual([]);
    re.segment(segment(3, true, 1000, 0, SYN, 0, 1601));
    // Out of the live connections, kept whole as a tombstone for one more timeout (its bytes may go on)...
    expect(re.liveConnections).toBe(2);
    expect(rec.ends).toEqual([]);
    // ...then ended.
    re.segment(segment(4, true, 1000, 0, SYN, 0, 2202));
    expect(rec.ends).toEqual([[1, 'idle']]);
  });

  it('buffers at most 4 MiB of out-of-order bytes per direction before giving up the hole as a gap', () => {
    const rec = recorder();
    const re = new Reassembler(rec.factory, { kafkaPorts: new Set([9092]) });
    re.segment(segment(1, true, 1000, 0, SYN));
    // A 1-byte hole at 1001, then 1400-byte segments from 1002 on: 2,996 of them pass 4 MiB.
    let i = 0;
    while (rec.gaps.length === 0) re.segment(segment(1, true, 1002 + 1400 * i++, 0, ACK, 1400));
    expect(i).toBe(Math.floor(4 * 1024 * 1024 / 1400) + 1);
    expect(rec.gaps).toEqual([[1, 0, 1]]);
  });

  it('buffers at most 4,096 out-of-order segments per direction', () => {
    const rec = recorder();
    const re = new Reassembler(rec.factory, { kafkaPorts: new Set([9092]) });
    re.segment(segment(1, true, 1000, 0, SYN));
    // Every other byte from 1003 on: 4,097 one-byte pieces, each behind its own 1-byte hole.
    let i = 0;
    while (rec.gaps.length === 0) re.segment(segment(1, true, 1003 + 2 * i++, 0, ACK, 1));
    expect(i).toBe(4097);
    expect(rec.gaps).toEqual([[1, 0, 2]]);
  });
});

describe('port detection', () => {
  it('decides from the first 4,096 bytes: a request header of 4,096 bytes is detected, of 4,097 not', async () => {
    for (const [clientIdBytes, detected] of [
      [4082, true],
      [4083, false],
    ] as const) {
      const s = new Scenario();
      const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:7777' });
      // ApiVersions v0, header v1: size (4) + key, version, correlation id (8) + ClientId (2 + N).
      c.clientBytes(sizePrefixed(concat(int16(18), int16(0), int32(1), int16(clientIdBytes), new Uint8Array(clientIdBytes).fill(0x61))));
      c.close();
      const r = await report(s.file());
      expect([clientIdBytes, r.summary.connections, r.summary.requests]).toEqual([clientIdBytes, detected ? 1 : 0, detected ? 1 : 0]);
    }
  });

  it('keeps at most 1,024 pieces while deciding: a run of bare ACKs over bytes never captured ends the probe', () => {
    let ignored = 0;
    const tcp: TcpConnection = {
      id: 1, a: { ip: '10.0.0.1', port: 40000 }, b: { ip: '10.0.0.2', port: 7777 }, synSeen: false,
      firstFrame: 1, firstTsSec: 0, firstTsNsec: 0, ignore: () => ignored++,
    };
    const listener: KafkaListener = { connectionStart() {}, request() {}, response() {}, unanswered() {}, note() {}, connectionEnd() {} };
    const conv = new KafkaConversation(tcp, listener, { kafkaPorts: new Set([9092]), detect: true, maxFrameBytes: 100 << 20 });
    conv.data(0, Buffer.of(0), 0, 1, 1, 0, 0);
    for (let i = 1; i <= 1022; i++) conv.gap(0, 2, i + 1);
    expect(ignored).toBe(0);
    conv.gap(0, 2, 1024);
    expect(ignored).toBe(0);
    conv.gap(0, 2, 1025);
    expect(ignored).toBe(1);
  });
});

describe('capture records', () => {
  it('a pcap record may hold twice the larger of the snaplen and 262,144 bytes: 524,288 is read, 524,289 is damage', async () => {
    const packet = (len: number) => ({ tsSec: 1_700_000_000, data: new Uint8Array(len) });
    const ok = await report(tmpFile('big.pcap', pcapFile({ linkType: 1, snaplen: 65535, packets: [packet(524288), packet(60)] })));
    expect([ok.inputs[0]!.packets, ok.inputs[0]!.notes]).toEqual([2, []]);
    const bad = await report(tmpFile('bigger.pcap', pcapFile({ linkType: 1, snaplen: 65535, packets: [packet(60), { ...packet(524289) }, packet(60), packet(60)] })));
    expect(bad.inputs[0]!.packets).toBe(3);
    expect(bad.inputs[0]!.notes[0]).toMatch(/^damaged record at byte 100 \(captured length 524289 is impossible\); skipped 524305 bytes to the next plausible record at byte 524405$/);
  });

  it(`no record or block is larger than ${MAX_PACKET_BYTES} bytes (64 MiB), whatever the snaplen says`, async () => {
    expect(MAX_PACKET_BYTES).toBe(64 * 1024 * 1024);
    const packet = { tsSec: 1_700_000_000, data: new Uint8Array(60) };
    const pcap = pcapFile({ linkType: 1, snaplen: 0x7fffffff, packets: [packet, { ...packet, inclLen: MAX_PACKET_BYTES + 1 }, packet, packet] });
    const r = await report(tmpFile('huge-snaplen.pcap', pcap));
    expect(r.inputs[0]!.notes[0]).toMatch(/^damaged record at byte 100 \(captured length 67108865 is impossible\)/);
    const block = new Bytes().u32(6).u32(MAX_PACKET_BYTES + 4).done();
    const ng = Buffer.concat([shbBlock(), idbBlock(false, { linkType: 1 }), block, new Uint8Array(64)]);
    const rn = await report(tmpFile('huge-block.pcapng', ng));
    expect(rn.inputs[0]!.notes[0]).toMatch(/^damaged enhanced packet block at byte 48 \(block length 67108868\)/);
  });

  it('a pcapng block length pointing 60 MiB past the end allocates nothing of that size', async () => {
    const epb = pcapngBlock(false, 6, new Uint8Array(40));
    epb.writeUInt32LE(60 * 1024 * 1024, 4);
    const file = tmpFile('past-end.pcapng', Buffer.concat([pcapngFile({ sections: [{ interfaces: [{ linkType: 1 }], blocks: [] }] }), epb]));
    const uninstall = installAllocationHook();
    try {
      expect((await checkCapture(file)).failure).toBeNull();
    } finally {
      uninstall();
    }
    const r = await report(file);
    expect(r.inputs[0]!.notes).toEqual(['the input ends inside the enhanced packet block at byte 48 (52 of its 62914560 bytes present)']);
  });
});

describe('floods (scaled down from `npm run fuzz -- flood`)', () => {
  let uninstall: () => void = () => {};
  beforeAll(() => {
    uninstall = installAllocationHook();
  });
  afterAll(() => uninstall());

  // Counts only: timing belongs to `npm run fuzz -- flood` and `npm run bench`, not to unit tests.
  async function flood(
    n: number,
    mode: Parameters<typeof floodCapture>[1],
    limits: { maxSummaries?: number; maxFindings?: number } = {},
  ): Promise<{ connections: number; findings: number; notes: string[]; notListed?: unknown }> {
    const file = tmpFile(`${mode}-${n}.pcap`, floodCapture(n, mode));
    const r = await analyzeInput(file, 0, { ...DEFAULTS, ...limits });
    return { connections: r.connections.length, findings: r.findings.length, notes: r.input.notes, ...(r.input.notListed ? { notListed: r.input.notListed } : {}) };
  }

  it('40,000 one-packet connections are counted, not kept one summary each', async () => {
    expect(await flood(40_000, 'syn')).toEqual({
      connections: 0,
      findings: 0,
      notes: ['40,000 connections to Kafka ports carried no Kafka message and are not listed'],
    });
  });

  it('one request per connection, each with a finding: every one is analysed, the first 1,000 findings of the rule listed', async () => {
    expect(DEFAULT_MAX_FINDINGS).toBe(1000);
    expect(await flood(20_000, 'request')).toEqual({
      connections: 20_000,
      findings: 1000,
      notes: ['findings beyond the first 1,000 of a rule are counted but not listed (--max-findings): zero-client-instance-id 19,000'],
      notListed: { connections: 0, requests: 0, responses: 0, findings: [['zero-client-instance-id', 19_000]] },
    });
  });

  it('connection summaries stop at --max-connection-summaries (250,000 by default); the rest are counted', async () => {
    expect(DEFAULT_MAX_SUMMARIES).toBe(250_000);
    expect(await flood(3000, 'request', { maxSummaries: 1000, maxFindings: 5000 })).toEqual({
      connections: 1000,
      findings: 3000,
      notes: ['2,000 Kafka connections beyond the first 1,000 are counted but not listed or grouped into client instances (--max-connection-summaries)'],
      notListed: { connections: 2000, requests: 2000, responses: 0, findings: [] },
    });
  });

  it('what the caps leave out still counts: the summary, the exit code, the table line', async () => {
    const file = tmpFile('request-300.pcap', floodCapture(300, 'request'));
    const json = await kcid(['analyze', file, '--format', 'json', '--max-findings', '10', '--max-connection-summaries', '100']);
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.out) as { summary: unknown; connections: unknown[]; findings: unknown[] };
    expect(doc.summary).toEqual({
      connections: 300,
      requests: 300,
      responses: 0,
      instances: 1,
      findings: { error: 300, warning: 0, info: 0 },
      notListed: { connections: 200, findings: 290 },
    });
    expect([doc.connections.length, doc.findings.length]).toEqual([100, 10]);
    // A rule turned off drops its unlisted findings too; --fail-on judges the counted ones.
    expect((await kcid(['analyze', file, '--max-findings', '1', '--rule', 'zero-client-instance-id=off'])).code).toBe(0);
    expect((await kcid(['analyze', file, '--max-findings', '1', '--rule', 'zero-client-instance-id=warning', '--fail-on', 'warning'])).code).toBe(1);
    const table = await kcid(['analyze', file, '--max-findings', '10', '--max-connection-summaries', '100']);
    expect(table.out.split('\n')[0]).toBe(
      '1 capture, 300 packets, 300 Kafka connections (port 9092), 300 requests, 1 client instance: 300 errors, 0 warnings, 0 notes (200 connections and 290 findings counted, not listed: see the capture notes); 2 capture notes',
    );
    expect((await kcid(['analyze', file, '--max-findings', '0'])).err).toBe("kcid: invalid --max-findings '0' (expected a whole number from 1 to 100,000,000)\n");
  });

  it('200,000 bare ACKs over bytes never captured cost one ignored connection', async () => {
    expect((await flood(200_000, 'acks')).connections).toBe(0);
  });
});

describe('many connections and findings', () => {
  it('merging an input of 500,000 connections and findings does not overflow the stack', () => {
    const many = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
    const part = { input: {}, connections: many(500_000, (i) => ({ id: i })), findings: many(500_000, (i) => ({ frame: i })) } as unknown as InputResult;
    const merged = mergeResults([part, part]);
    expect([merged.connections.length, merged.findings.length]).toEqual([1_000_000, 1_000_000]);
  });
});

describe('tables of many rows', () => {
  const style = makeStyle(false);
  const finding = (i: number): Finding => ({
    rule: 'capture-gap', severity: i % 3 === 0 ? 'info' : 'warning', message: `${i} bytes from the client are missing${' from the capture'.repeat(i % 9)}`,
    frame: i, timeUs: 0, client: `10.0.0.1:${i}`, broker: '10.0.0.2:9092', apiKey: i % 2 ? 18 : null, apiVersion: 3, correlationId: i, clientInstanceId: null, input: 0,
  });

  it('print exactly what one cli-table3 table would, in pieces', () => {
    const findings = Array.from({ length: 1234 }, (_, i) => finding(i));
    const fakeReport = { inputs: [{}], findings, instances: [] } as unknown as Report;
    const got = renderFindings(fakeReport, style, 200);
    // The same table in one piece, as table.ts built it before.
    const lines = got.split('\n');
    const widths = lines[0]!.slice(1, -1).split('┬').map((s) => s.length);
    const one = new Table({
      head: ['Severity', 'Rule', 'Frame', 'Client -> Broker', 'API', 'Corr', 'Message'],
      colWidths: widths, wordWrap: true, wrapOnWordBoundary: true,
      style: { head: [], border: [], compact: true }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    });
    for (const f of findings) one.push([f.severity, f.rule, String(f.frame), `${f.client} -> ${f.broker}`, f.apiKey === null ? '-' : 'ApiVersions v3', String(f.correlationId), f.message]);
    expect(got).toBe(one.toString());
  });

  it('16,000 findings print, one line each (built in slices: cli-table3 alone is quadratic)', () => {
    const findings = Array.from({ length: 16_000 }, (_, i) => finding(i));
    const out = renderFindings({ inputs: [{}], findings } as unknown as Report, style, 200);
    expect(out.split('\n').length).toBeGreaterThan(16_000);
  });

  it('instance tables in pieces keep one width per column', () => {
    const instances = Array.from({ length: 1100 }, (_, i) => ({
      clientInstanceId: null, source: 'none', clientIds: [`client-${'x'.repeat(i % 40)}`], software: [], clientAddresses: [`10.0.${i >> 8}.${i & 255}`],
      brokers: ['10.0.0.2:9092'], connections: [{}], requests: i, firstUs: 0, lastUs: 0,
    }));
    const out = renderInstances({ instances } as unknown as Report, style).split('\n');
    expect(new Set(out.map((l) => l.length)).size).toBe(1);
    // Top border, header, 1,100 rows, bottom border: one table.
    expect(out.length).toBe(1100 + 3);
  });
});

