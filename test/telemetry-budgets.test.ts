/**
 * Work budgets of the telemetry decoders (issue 26): hostile frames built byte by byte
 * (test/telemetry/hostile.ts) are refused quickly with their reason; real encoders' output
 * (libzstd as @bokuweb/zstd-wasm, lz4js, the lz4 command line's frame) decodes exactly.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import lz4js from 'lz4js';
import snappy from 'snappyjs';
import { readTelemetryPayload } from '../src/telemetry/index.js';
import { decompress } from '../src/telemetry/codecs.js';
import { lz4HugeContentSize, zstdSequenceBomb } from './telemetry/hostile.js';

const require = createRequire(import.meta.url);
const zstd = require('@bokuweb/zstd-wasm') as { init(): Promise<void>; compress(b: Uint8Array, level?: number): Uint8Array };

const LIMIT = 16 * 1024 * 1024;

/** Text that compresses like metrics: names repeated with numbers, from a fixed linear congruential sequence. */
function sample(bytes: number, seed: number): Uint8Array {
  const out = Buffer.alloc(bytes);
  let x = seed;
  for (let i = 0; i < bytes; ) {
    x = (x * 1103515245 + 12345) >>> 0;
    const word = (x >>> 16) % 7 === 0 ? `${x % 100000} ` : ['org.apache.kafka.', 'producer.', 'node.', 'request.', 'latency ', 'avg '][(x >>> 8) % 6]!;
    i += out.write(word, i, 'latin1');
  }
  return out;
}

function elapsedMs(f: () => unknown): [unknown, number] {
  const t = performance.now();
  const r = f();
  return [r, performance.now() - t];
}

describe('zstd: work bounded with the output', () => {
  it('decodes what libzstd writes, at levels 1, 3 and 19, small and multi-block, random and repetitive', async () => {
    await zstd.init();
    for (const size of [0, 1, 100, 5_000, 200_000, 1_100_000]) {
      for (const level of [1, 3, 19]) {
        const raw = sample(size, size + level);
        const z = zstd.compress(raw, level);
        expect(Buffer.from(decompress(4, z, LIMIT)).equals(Buffer.from(raw)), `${size} bytes at level ${level}`).toBe(true);
      }
    }
    const noise = Buffer.alloc(300_000);
    for (let i = 0, x = 7; i < noise.length; i++) noise[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    expect(Buffer.from(decompress(4, zstd.compress(noise, 3), LIMIT)).equals(noise)).toBe(true);
  });

  it('10,000 and 40,000 sequences of 65 KB matches in a 28-byte frame: refused at once, where fzstd took 4.4 s and minutes', () => {
    for (const n of [10_000, 40_000]) {
      const bomb = zstdSequenceBomb(1, n, 52);
      expect(bomb.length).toBeLessThan(40);
      const [r, ms] = elapsedMs(() => readTelemetryPayload(4, bomb, LIMIT));
      expect(r).toEqual({ ok: false, kind: 'invalid', message: 'zstd: sequence bit stream read past its start' });
      expect(ms).toBeLessThan(500);
    }
  });

  it('200 blocks of 98,047 sequences that read no bits (2.4 KB): the first block past its 128 KiB is refused', () => {
    const bomb = zstdSequenceBomb(200, 98_047, 31);
    expect(bomb.length).toBe(2417);
    const [r, ms] = elapsedMs(() => readTelemetryPayload(4, bomb, LIMIT));
    expect(r).toEqual({ ok: false, kind: 'invalid', message: "zstd: a block's sequences produce more than its maximum (131072 bytes)" });
    expect(ms).toBeLessThan(500);
  });

  it('a Huffman weight table whose FSE states read no bits ends (fzstd 0.1.1 loops forever on it: killed after 10 s)', () => {
    const block = [
      0x02, 0xc1, 0x01, // literals header: compressed (type 2), one stream, 16 literals, 7 bytes compressed
      0x04, // Huffman tree description: 4 bytes of FSE-compressed weights
      0xf0, 0x03, // FSE table: accuracy 5, symbol 0 with probability 32 of 32 (every state reads 0 bits)
      0x00, 0x04, // the weights' bit stream: 10 bits for the two initial states below its end marker
      0x00, 0x01, // the literals' stream (never reached)
      0x00, // no sequences
    ];
    const frame = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38, (block.length << 3) | (2 << 1) | 1, 0, 0, ...block]);
    const [r, ms] = elapsedMs(() => readTelemetryPayload(4, frame, LIMIT));
    expect(r).toEqual({ ok: false, kind: 'invalid', message: 'zstd: more than 255 Huffman weights' });
    expect(ms).toBeLessThan(500);
  });
});

describe('snappy: a block produces what it declares, no more', () => {
  it('decodes what snappyjs writes, raw and in xerial framing', () => {
    for (const size of [0, 1, 100, 70_000, 700_000]) {
      const raw = sample(size, size + 1);
      expect(Buffer.from(decompress(2, snappy.compress(raw), LIMIT)).equals(Buffer.from(raw)), `${size} bytes`).toBe(true);
    }
  });

  it('a block declaring 10 bytes with 300,000 copies after them is refused at the first that passes (snappyjs ran them all past its buffer and took the block)', () => {
    // varint 10, a 1-byte literal "a" (tag 0x00), then copies with 1-byte offsets (tag 0x1d: length 11, offset 1).
    const block = Buffer.concat([Buffer.from([0x0a, 0x00, 0x61]), Buffer.alloc(600_000, Buffer.from([0x1d, 0x01]))]);
    const [r, ms] = elapsedMs(() => readTelemetryPayload(2, block, LIMIT));
    expect(r).toEqual({ ok: false, kind: 'invalid', message: 'snappy: the block produces more than the 10 bytes it declares' });
    expect(ms).toBeLessThan(500);
  });

  it('a copy before the block, a block holding less than it declares', () => {
    expect(readTelemetryPayload(2, Uint8Array.from([0x05, 0x00, 0x61, 0x1d, 0x02]), LIMIT)).toEqual({ ok: false, kind: 'invalid', message: "snappy: copy offset 2 reaches before the block's start" });
    expect(readTelemetryPayload(2, Uint8Array.from([0x05, 0x00, 0x61]), LIMIT)).toEqual({ ok: false, kind: 'invalid', message: 'snappy: the block declares 5 bytes and holds 1' });
  });
});

describe('lz4: sizes read unsigned, blocks within their maximum', () => {
  it('decodes what lz4js writes, and a frame of the lz4 command line (content size, checksums)', () => {
    for (const size of [0, 1, 1000, 70_000, 700_000]) {
      const raw = sample(size, size);
      expect(Buffer.from(decompress(3, lz4js.compress(raw), LIMIT)).equals(Buffer.from(raw)), `${size} bytes`).toBe(true);
    }
    // The file 'kafka kafka kafka kafka telemetry' through `lz4 -9 --content-size -BD --frame-crc` (lz4 1.9.4), as hex: 33-byte content size, linked blocks, content checksum
    const cli = Buffer.from(LZ4_CLI, 'hex');
    expect(Buffer.from(decompress(3, cli, LIMIT)).toString('latin1')).toBe('kafka kafka kafka kafka telemetry');
  });

  it('a content size with its top bit set is too large, not a RangeError', () => {
    expect(readTelemetryPayload(3, lz4HugeContentSize(), LIMIT)).toEqual({
      ok: false,
      kind: 'too-large',
      message: `an LZ4 frame declaring 9223372036854775809 bytes exceeds --max-telemetry-bytes (${LIMIT} bytes)`,
    });
  });

  it('a compressed block declaring 2 GiB of a 12-byte frame is refused by the block maximum (lz4js looped through it)', () => {
    const frame = Uint8Array.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x00, 0xff, 0xff, 0xff, 0x7f, 0x10]);
    const [r, ms] = elapsedMs(() => readTelemetryPayload(3, frame, LIMIT));
    expect(r).toEqual({ ok: false, kind: 'invalid', message: "lz4: a block of 2147483647 bytes is larger than the frame's maximum (65536)" });
    expect(ms).toBeLessThan(500);
  });

  it('a match reaching before the frame, a block producing more than its maximum', () => {
    // Block: token 0x10 (1 literal, match 4), literal 'a', offset 2: reaches before the frame.
    const early = Uint8Array.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x00, 4, 0, 0, 0, 0x10, 0x61, 0x02, 0x00, 0, 0, 0, 0]);
    expect(readTelemetryPayload(3, early, LIMIT)).toEqual({ ok: false, kind: 'invalid', message: "lz4: match offset 2 reaches before the frame's start" });
    // Block: token 0x1f (1 literal, match 15 + extensions), literal 'a', offset 1, then 255 x 300 + 0: a 76 KB run in a 64 KiB block.
    const long = Uint8Array.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x00, 0x31, 0x01, 0, 0, 0x1f, 0x61, 0x01, 0x00, ...new Array<number>(300).fill(0xff), 0x00, 0, 0, 0, 0]);
    expect(readTelemetryPayload(3, long, LIMIT)).toEqual({ ok: false, kind: 'invalid', message: "lz4: a block decompresses past the frame's block size (65536)" });
  });
});

const LZ4_CLI = '04224d186c402100000000000000d1130000006e6b61666b612006009074656c656d65747279000000000c514a1d';

/** Protobuf by hand (field numbers of opentelemetry-proto's metrics.proto): MetricsData { ResourceMetrics { ScopeMetrics { Metric { name, gauge {} } x n } } }. */
function manyGauges(names: string[]): Uint8Array {
  const ld = (field: number, body: Buffer) => Buffer.concat([Buffer.from([(field << 3) | 2]), uvarint(body.length), body]);
  const metrics = names.map((name) => ld(2, Buffer.concat([ld(1, Buffer.from(name)), ld(5, Buffer.alloc(0))])));
  return ld(1, ld(2, Buffer.concat(metrics)));
}
function uvarint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

describe('memory follows what is reported: what a push keeps is capped, with the count of what was left out', () => {
  it('10,000 metrics in a push: all counted, 1,000 listed; 200 metrics of 1,000-character names: 65 listed (64 KiB of names)', () => {
    const r = readTelemetryPayload(0, manyGauges(Array.from({ length: 10_000 }, (_, i) => `m.${i}`)), LIMIT);
    if (!r.ok) throw new Error(r.message);
    expect([r.metrics.metricCount, r.metrics.metrics.length, r.metrics.metrics.at(-1)!.name]).toEqual([10_000, 1_000, 'm.999']);
    const long = readTelemetryPayload(0, manyGauges(Array.from({ length: 200 }, (_, i) => `${i}`.padStart(1000, 'x'))), LIMIT);
    if (!long.ok) throw new Error(long.message);
    expect([long.metrics.metricCount, long.metrics.metrics.length]).toEqual([200, 65]);
  });

  it('kcid telemetry --format json: 40 pushes of 10,000 metrics are written a push at a time, each push saying how many metrics it does not list', async () => {
    const { Scenario } = await import('./builder/scenario.js');
    const { TelemetryClient } = await import('./telemetry/client.js');
    const { analyzeFiles } = await import('./helpers.js');
    const { writeTelemetryJson } = await import('../src/report/telemetry.js');
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe();
    const metrics = manyGauges(Array.from({ length: 10_000 }, (_, i) => `org.apache.kafka.m${i}`));
    for (let i = 0; i < 40; i++) {
      s.wait(1);
      await t.push({ compressionType: 0, metrics });
    }
    const report = await analyzeFiles([s.file('many-metrics.pcap')], { decodeTelemetry: true });
    let pieces = 0;
    let largest = 0;
    let text = '';
    writeTelemetryJson(report, (piece) => {
      pieces++;
      largest = Math.max(largest, piece.length);
      text += piece;
    });
    const doc = JSON.parse(text) as { instances: { pushes: { metrics: number; metricsNotListed?: number; metricList: unknown[] }[] }[] };
    const pushes = doc.instances[0]!.pushes;
    expect(pushes.length).toBe(40);
    expect(pushes.map((p) => [p.metrics, p.metricList.length, p.metricsNotListed]).filter(([a, b, c]) => a !== 10_000 || b !== 1_000 || c !== 9_000)).toEqual([]);
    // No piece holds more than one push: the document is never one string in kcid.
    expect(pieces).toBeGreaterThan(40);
    expect(largest).toBeLessThan(text.length / 39);
  }, 60_000);
});

describe('a live --follow run fed decoder bombs stays responsive', () => {
  it('20 pushes of 40,000-sequence zstd bombs: Ctrl-C ends the run at once, every push judged telemetry-payload-invalid', async () => {
    const { spawn } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    const { Scenario } = await import('./builder/scenario.js');
    const { TelemetryClient } = await import('./telemetry/client.js');
    const s = new Scenario();
    const t = new TelemetryClient(s);
    t.subscribe({ acceptedCompressionTypes: [4] });
    for (let i = 0; i < 20; i++) {
      s.wait(1);
      await t.push({ compressionType: 4, blob: zstdSequenceBomb(1, 40_000, 52) });
    }
    const bytes = readFileSync(s.file('bombs.pcap'));
    const child = spawn(process.execPath, ['bin/kcid', 'analyze', '-', '--follow', '--format', 'ndjson'], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdin.write(bytes); // and the input stays open: a live capture
    // The pushes are judged when the run ends: Ctrl-C once kcid has read them (its progress is not
    // shown on a pipe, so after a wait), and the run must end with every push judged, promptly.
    await new Promise((r) => setTimeout(r, 2500));
    child.kill('SIGINT');
    const t0 = Date.now();
    await exited;
    const ms = Date.now() - t0;
    child.stdin.destroy();
    const invalid = out.split('\n').filter((l) => l.includes('"telemetry-payload-invalid"') && l.includes('zstd: sequence bit stream read past its start'));
    expect(invalid.length).toBe(20);
    expect(ms).toBeLessThan(5000);
  }, 40_000);
});
