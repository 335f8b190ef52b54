/**
 * The memo of bodies' JSON (src/kafka/json-memo.ts): a body gets back what was kept for a body with the
 * same bytes, of the same API key, version and direction, under the same protocol, and nothing else;
 * it stays bounded, and leaves alone the kinds of body that do not repeat.
 */
import { describe, expect, it } from 'vitest';
import { BodyJsonMemo, type MemoEntry } from '../src/kafka/json-memo.js';
import type { Protocol } from '../src/kafka/protocol.js';

const P = {} as Protocol;
const OTHER = {} as Protocol;
const json = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));
const text = (e: MemoEntry | null): string | null => (e === null ? null : Buffer.from(e.json).toString());

/** A body inside a larger frame buffer, as the framer hands it over: buf[start, end). */
function framed(body: number[]): [Buffer, number, number] {
  const buf = Buffer.from([9, 9, 9, ...body, 7, 7]);
  return [buf, 3, 3 + body.length];
}

/** Looks a body up and, on a miss, keeps `made` for it (as the Kafka stage does). */
function seen(memo: BodyJsonMemo, body: number[], made: string, response = false, key = 12, version = 4, p = P): string | null {
  const f = framed(body);
  const e = memo.find(p, response, key, version, ...f);
  if (e === null) memo.add(response, key, version, ...f, json(made));
  return text(e);
}

describe('BodyJsonMemo', () => {
  it('gives back the JSON of a body with the same bytes, as a copy of its own, with the scan result kept with it', () => {
    const memo = new BodyJsonMemo();
    const [buf, start, end] = framed([0, 0, 0, 1, 2]);
    expect(memo.find(P, true, 18, 3, buf, start, end)).toBeNull();
    const written = json('{"errorCode":0}');
    memo.add(true, 18, 3, buf, start, end, written, 35, [35, 0]);
    written.fill(0x20); // the caller's bytes may be a slab's: the memo keeps its own copy
    const e = memo.find(P, true, 18, 3, ...framed([0, 0, 0, 1, 2]));
    expect(text(e)).toBe('{"errorCode":0}');
    expect(e!.errorCode).toBe(35);
    expect(e!.codes).toEqual([35, 0]);
    // A body the scan did not read keeps no codes.
    memo.find(P, false, 18, 3, buf, start, end);
    memo.add(false, 18, 3, buf, start, end, json('{}'));
    expect(memo.find(P, false, 18, 3, buf, start, end)!.codes).toBeNull();
  });

  it('tells bodies apart by every byte, by length, and by key, version, direction and protocol', () => {
    const memo = new BodyJsonMemo();
    expect(seen(memo, [1, 2, 3, 4], '{"a":1}')).toBeNull();
    const look = (body: number[], response = false, key = 12, version = 4, p = P) => text(memo.find(p, response, key, version, ...framed(body)));
    expect(look([1, 2, 3, 4])).toBe('{"a":1}');
    expect(look([1, 2, 3, 5])).toBeNull();
    expect(look([0, 2, 3, 4])).toBeNull();
    expect(look([1, 2, 3])).toBeNull();
    expect(look([1, 2, 3, 4, 0])).toBeNull();
    expect(look([1, 2, 3, 4], true)).toBeNull();
    expect(look([1, 2, 3, 4], false, 13)).toBeNull();
    expect(look([1, 2, 3, 4], false, 12, 5)).toBeNull();
    // Another protocol (--kafka-specs, or the accepted revision) starts the memo over.
    expect(look([1, 2, 3, 4], false, 12, 4, OTHER)).toBeNull();
    expect(look([1, 2, 3, 4])).toBeNull();
  });

  it('compares whole bodies: bytes the hash does not sample still count, natively past 128 bytes', () => {
    const memo = new BodyJsonMemo();
    // 300 bytes: the hash samples 0-15, 142-157 and 284-299; these differ at byte 40 only, so their hashes are equal.
    const a = Array.from({ length: 300 }, (_, i) => i & 0xff);
    const b = a.map((v, i) => (i === 40 ? v ^ 1 : v));
    expect(seen(memo, a, '"a"', true, 3, 12)).toBeNull();
    expect(seen(memo, b, '"b"', true, 3, 12)).toBeNull(); // same hash, other bytes: not a's JSON
    expect(seen(memo, b, '"b2"', true, 3, 12)).toBe('"b"'); // the newer of the two is kept
    expect(seen(memo, a, '"a2"', true, 3, 12)).toBeNull();
    // Short bodies (compared in a loop) likewise, at every byte.
    const short = [5, 6, 7, 8, 9, 10];
    seen(memo, short, '"s"');
    for (let i = 0; i < short.length; i++) expect(text(memo.find(P, false, 12, 4, ...framed(short.map((v, j) => (j === i ? v + 1 : v)))))).toBeNull();
    expect(text(memo.find(P, false, 12, 4, ...framed(short)))).toBe('"s"');
  });

  it('keeps up to 4,096 bodies of a kind (then that kind starts over), none larger than 16 KiB', () => {
    const memo = new BodyJsonMemo();
    const body = (i: number) => [i & 0xff, i >> 8];
    // Each seen twice at first (a kind that seldom repeats would be left alone: below).
    for (let i = 0; i < 4096; i++) {
      expect(seen(memo, body(i), `${i}`)).toBeNull();
      expect(seen(memo, body(i), 'again')).toBe(`${i}`);
    }
    for (let i = 0; i < 4096; i++) expect(seen(memo, body(i), 'again')).toBe(`${i}`);
    expect(seen(memo, body(4096), '4096')).toBeNull(); // the 4,097th: the kind starts over with it
    expect(seen(memo, body(4096), 'again')).toBe('4096');
    expect(seen(memo, body(0), '0')).toBeNull();
    const big = new Array(16 * 1024 + 1).fill(1);
    expect(seen(memo, big, '{}', false, 0, 9)).toBeNull();
    expect(seen(memo, big, '{}', false, 0, 9)).toBeNull();
  });

  it('holds at most 4 MiB of bodies and JSON: past that it starts over', () => {
    const memo = new BodyJsonMemo();
    const body = (i: number) => framed([i & 0xff, i >> 8, ...new Array(16 * 1024 - 2).fill(0)]);
    const big = json('x'.repeat(100_000));
    // 8 bodies a kind, of 24 kinds: about 22 MB offered.
    for (let i = 0; i < 192; i++) {
      const key = i >> 3;
      memo.find(P, false, key, 0, ...body(i));
      memo.add(false, key, 0, ...body(i), big);
    }
    let kept = 0;
    for (let i = 0; i < 192; i++) if (memo.find(P, false, i >> 3, 0, ...body(i)) !== null) kept++;
    expect(kept).toBeGreaterThan(0);
    expect(kept * (16 * 1024 + 100_000)).toBeLessThanOrEqual(4 * 1024 * 1024);
  });

  it('stops looking up a kind of body that seldom repeats, and tries it again later', () => {
    const memo = new BodyJsonMemo();
    let n = 0;
    const unique = () => [n & 0xff, (n >> 8) & 0xff, n++ >> 16];
    // 64 look-ups without a hit: the kind is left alone for the next 4096 bodies.
    for (let i = 0; i < 64; i++) expect(seen(memo, unique(), '{}', false, 0, 9)).toBeNull();
    const repeated = [1, 2, 3];
    expect(seen(memo, repeated, '{"r":1}', false, 0, 9)).toBeNull(); // not kept while the kind is left alone
    for (let i = 0; i < 4095; i++) expect(memo.find(P, false, 0, 9, ...framed(repeated))).toBeNull();
    // Then it is looked up again.
    expect(seen(memo, repeated, '{"r":1}', false, 0, 9)).toBeNull();
    expect(seen(memo, repeated, 'again', false, 0, 9)).toBe('{"r":1}');
    // Other kinds were never affected.
    expect(seen(memo, [5], '{"o":1}', true, 0, 9)).toBeNull();
    expect(seen(memo, [5], 'again', true, 0, 9)).toBe('{"o":1}');
  });
});
