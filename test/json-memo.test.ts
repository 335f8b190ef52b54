/**
 * The memo of bodies' JSON (src/kafka/json-memo.ts): a body gets back the JSON kept for a body with the
 * same bytes, of the same API key, version and direction, under the same protocol, and nothing else;
 * it stays bounded, and leaves alone the kinds of body that do not repeat.
 */
import { describe, expect, it } from 'vitest';
import { BodyJsonMemo } from '../src/kafka/json-memo.js';
import type { Protocol } from '../src/kafka/protocol.js';

const P = {} as Protocol;
const OTHER = {} as Protocol;
const json = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));
const text = (j: Uint8Array | null): string | null => (j === null ? null : Buffer.from(j).toString());

/** A body inside a larger frame buffer, as the framer hands it over: buf[start, end). */
function framed(body: number[]): [Buffer, number, number] {
  const buf = Buffer.from([9, 9, 9, ...body, 7, 7]);
  return [buf, 3, 3 + body.length];
}

describe('BodyJsonMemo', () => {
  it('gives back the JSON of a body with the same bytes, as a copy of its own', () => {
    const memo = new BodyJsonMemo();
    const [buf, start, end] = framed([0, 0, 0, 1, 2]);
    expect(memo.find(P, true, 18, 3, buf, start, end)).toBeNull();
    const written = json('{"errorCode":0}');
    memo.add(true, 18, 3, buf, start, end, written);
    written.fill(0x20); // the caller's bytes may be a slab's: the memo keeps its own copy
    const [again, s2, e2] = framed([0, 0, 0, 1, 2]);
    expect(text(memo.find(P, true, 18, 3, again, s2, e2))).toBe('{"errorCode":0}');
  });

  it('tells bodies apart by every byte, by length, and by key, version, direction and protocol', () => {
    const memo = new BodyJsonMemo();
    const [buf, start, end] = framed([1, 2, 3, 4]);
    memo.find(P, false, 12, 4, buf, start, end);
    memo.add(false, 12, 4, buf, start, end, json('{"a":1}'));
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
    // Longer bodies are compared natively: every byte still counts.
    const long = Array.from({ length: 300 }, (_, i) => i & 0xff);
    memo.find(P, true, 3, 12, ...framed(long));
    memo.add(true, 3, 12, ...framed(long), json('{"long":1}'));
    expect(look(long, true, 3, 12)).toBe('{"long":1}');
    expect(look([...long.slice(0, 299), 0], true, 3, 12)).toBeNull();
    expect(look([7, ...long.slice(1)], true, 3, 12)).toBeNull();
  });

  it('keeps the 8 latest bodies of a kind, and none larger than 16 KiB', () => {
    const memo = new BodyJsonMemo();
    for (let i = 0; i < 9; i++) {
      const f = framed([i]);
      memo.find(P, false, 12, 4, ...f);
      memo.add(false, 12, 4, ...f, json(`${i}`));
    }
    expect(text(memo.find(P, false, 12, 4, ...framed([0])))).toBeNull(); // the oldest went
    for (let i = 1; i < 9; i++) expect(text(memo.find(P, false, 12, 4, ...framed([i])))).toBe(`${i}`);
    const big = framed(new Array(16 * 1024 + 1).fill(1));
    memo.find(P, false, 0, 9, ...big);
    memo.add(false, 0, 9, ...big, json('{}'));
    expect(memo.find(P, false, 0, 9, ...big)).toBeNull();
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
    const unique = () => framed([n & 0xff, (n >> 8) & 0xff, n++ >> 16]);
    // 64 look-ups without a hit: the kind is left alone for the next 4096 bodies.
    for (let i = 0; i < 64; i++) {
      const f = unique();
      expect(memo.find(P, false, 0, 9, ...f)).toBeNull();
      memo.add(false, 0, 9, ...f, json('{}'));
    }
    const repeated = framed([1, 2, 3]);
    memo.add(false, 0, 9, ...repeated, json('{"r":1}')); // not kept while the kind is left alone
    for (let i = 0; i < 4096; i++) expect(memo.find(P, false, 0, 9, ...repeated)).toBeNull();
    // Then it is looked up again.
    expect(memo.find(P, false, 0, 9, ...repeated)).toBeNull();
    memo.add(false, 0, 9, ...repeated, json('{"r":1}'));
    expect(text(memo.find(P, false, 0, 9, ...repeated))).toBe('{"r":1}');
    // Other kinds were never affected.
    const other = framed([5]);
    memo.find(P, true, 0, 9, ...other);
    memo.add(true, 0, 9, ...other, json('{"o":1}'));
    expect(text(memo.find(P, true, 0, 9, ...other))).toBe('{"o":1}');
  });
});
