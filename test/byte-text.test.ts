/**
 * ByteText (src/base/byte-text.ts) and the writers that put text straight into it: each held to the
 * string form it stands for (String, Buffer.from, jsonString, isoMicros), on values made to be hard.
 */
import { describe, expect, it } from 'vitest';
import { ByteArena, ByteText } from '../src/base/byte-text.js';
import { jsonString, writeJsonString } from '../src/base/json-text.js';
import { isoMicros, writeIsoMicros } from '../src/base/time.js';
import { requestNdjson } from '../src/report/requests-ndjson.js';
import type { RequestRow } from '../src/report/requests.js';

const text = (out: ByteText): string => Buffer.from(out.buf.subarray(0, out.pos)).toString('utf8');

/** A small deterministic generator (the tests must not depend on Math.random). */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe('ByteText', () => {
  it('writes integers as String does, and other numbers through String', () => {
    const values = [0, -0, 1, -1, 9, 10, 99, 100, 12345, -12345, 2 ** 31, -(2 ** 31), 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 1e21, 1.5, -0.25, 1e-7];
    const random = rng(7);
    for (let i = 0; i < 2000; i++) values.push(Math.floor((random() - 0.5) * 2 ** (1 + Math.floor(random() * 53))));
    for (const v of values) {
      const out = new ByteText(1);
      out.int(v);
      expect(text(out)).toBe(String(v));
    }
  });

  it('encodes any string as Buffer.from does, growing as it must', () => {
    const strings = ['', 'a', 'plain ascii', 'é', '日本語', '😀', '\ud800', 'x\udc00y', 'a'.repeat(47) + 'é', 'b'.repeat(49) + '日', '\u0000\u001f\u007f'];
    const out = new ByteText(4);
    let want = '';
    for (const s of strings) {
      out.utf8(s);
      want += s;
    }
    expect(Buffer.from(out.buf.subarray(0, out.pos))).toEqual(Buffer.from(want, 'utf8'));
  });

  it('copies bytes, short and long', () => {
    const out = new ByteText(8);
    const src = Uint8Array.from({ length: 100 }, (_, i) => i);
    out.bytes(src, 3, 10);
    out.bytes(src);
    out.ascii('ok');
    out.byte(0x21);
    expect([...out.buf.subarray(0, out.pos)]).toEqual([3, 4, 5, 6, 7, 8, 9, ...src, 0x6f, 0x6b, 0x21]);
  });
});

describe('ByteArena', () => {
  it('keeps pieces as they were, across slabs and for pieces larger than a slab holds', () => {
    const arena = new ByteArena(64);
    const scratch = new Uint8Array(200);
    const kept: [Uint8Array, number[]][] = [];
    const random = rng(3);
    for (let i = 0; i < 500; i++) {
      const n = Math.floor(random() * (i % 50 === 0 ? 200 : 20));
      for (let j = 0; j < n; j++) scratch[j] = Math.floor(random() * 256);
      kept.push([arena.keep(scratch, 0, n), [...scratch.subarray(0, n)]]);
      scratch.fill(0);
    }
    for (const [piece, bytes] of kept) expect([...piece]).toEqual(bytes);
  });

  it('keeps pieces written straight into its slab, among copied ones, and those that outgrow it', () => {
    const arena = new ByteArena(64);
    const out = new ByteText(0);
    const kept: [Uint8Array, string][] = [];
    const random = rng(11);
    for (let i = 0; i < 400; i++) {
      const n = Math.floor(random() * (i % 40 === 0 ? 300 : 30));
      const piece = String.fromCharCode(...Array.from({ length: n }, () => 0x61 + Math.floor(random() * 26)));
      if (i % 3 === 0) {
        kept.push([arena.keep(Buffer.from(`xx${piece}`), 2, 2 + n), piece]);
        continue;
      }
      arena.begin(out);
      const from = out.pos;
      // A writer that gives up puts pos back; what it wrote is written over.
      if (i % 5 === 0) {
        out.ascii('abandoned');
        out.pos = from;
      }
      out.ascii(piece);
      kept.push([arena.end(out), piece]);
    }
    for (const [bytes, piece] of kept) expect(Buffer.from(bytes).toString('latin1')).toBe(piece);
    // Pieces written straight in share slabs: no copy, no buffer of their own.
    arena.begin(out);
    out.ascii('ab');
    const a = arena.end(out);
    arena.begin(out);
    out.ascii('cd');
    const b = arena.end(out);
    expect(a.buffer).toBe(b.buffer);
    expect(b.byteOffset).toBe(a.byteOffset + 2);
  });
});

describe('writeJsonString', () => {
  it('writes what jsonString writes, for plain, escaped, terminal-unsafe and non-ASCII strings', () => {
    const strings = [null, '', 'kcid-producer', 'a"b', 'back\\slash', 'tab\there', '\u001b[31mred', '\u007f', '\u009b', 'é', '日本', '😀', '\ud800', '\u2028', '\ufeff', ' ~'];
    for (const s of strings) {
      const out = new ByteText(2);
      out.ascii('x');
      writeJsonString(out, s);
      expect(text(out)).toBe(`x${jsonString(s)}`);
    }
  });
});

describe('writeIsoMicros', () => {
  it('writes what isoMicros gives, within a second, across seconds, and outside plain ISO', () => {
    const times = [0, 1_796_092_449_268_335, 1_796_092_449_000_007, 1_796_092_449_999_999, -1, 253_402_300_800_000_000, 1_796_092_449_268_335.5, 9e18, NaN];
    for (let i = 0; i < 3000; i++) times.push(1_796_092_449_000_000 + i * 997);
    for (const us of times) {
      const out = new ByteText(1);
      writeIsoMicros(out, us);
      expect(text(out)).toBe(isoMicros(us));
    }
  });
});

describe('latencyMs in NDJSON rows', () => {
  const ROW: RequestRow = {
    frame: 1, time: '', client: '10.0.0.1:1', broker: '10.0.0.2:9092', apiKey: 18, apiName: 'ApiVersions', apiVersion: 3, headerVersion: 2,
    correlationId: 1, clientId: null, clientInstanceId: null, headerClientInstanceId: null, otherTags: [], responseFrame: 2, errorCode: 0, errorName: 'NONE (0)',
    latencyMs: 0, input: 0, requestCaptured: true, timeUs: 1_796_092_449_268_335,
  };
  it('is written as JSON.stringify writes the number, for whole µs and anything else', () => {
    const values = [0, -0, 0.001, 0.01, 0.1, 0.043, 0.5, 1, 12.5, 7.25, -0.5, -1.5, -0.001, 999.999, 1e12 + 0.001, 1e15, 1e21, 0.0001, 1 / 3, NaN, Infinity, null];
    const random = rng(11);
    for (let i = 0; i < 3000; i++) values.push(Math.round((random() - 0.1) * 10 ** (1 + Math.floor(random() * 12))) / 1000);
    for (const latencyMs of values) {
      const line = requestNdjson({ ...ROW, latencyMs });
      expect(line.slice(line.indexOf('"latencyMs":') + 12, line.indexOf(',"input"'))).toBe(JSON.stringify(latencyMs));
    }
  });
});
