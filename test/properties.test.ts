/**
 * Property tests (fast-check) for the Kafka decoders against the test encoders of
 * test/builder/kafka.ts, which are written from the protocol guide, not by inverting kcid's
 * decoders: every value round-trips, every strict prefix of an encoding fails with DecodeError,
 * and random bytes never make a decoder throw anything else.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DecodeError, MAX_STRING_LENGTH, Reader } from '../src/kafka/reader.js';
import { decodeRequestHeader, decodeResponseHeader } from '../src/kafka/headers.js';
import { isZeroUuid, parseUuid, uuidEquals, uuidToBase64, uuidToHex } from '../src/kafka/uuid.js';
import { protocol } from '../src/kafka/protocol.js';
import { BodyError, decodeBody } from '../src/kafka/bodies.js';
import type { KafkaConnection } from '../src/kafka/events.js';
import { ConnState } from '../src/analysis/connection-state.js';
import { JsonList, safeJson, writeJson } from '../src/base/json-text.js';
import {
  array,
  compactArray,
  compactBytes,
  compactString,
  concat,
  int16,
  int32,
  int64,
  requestHeader,
  responseHeader,
  string,
  taggedFields,
  uuid,
  uvarint,
  varint,
  type RawTag,
} from './builder/kafka.js';

/** Runs enough cases to matter and stays fast; a failure prints its seed and shrunk counterexample. */
const RUNS = { numRuns: 500 };

/** Decodes all of `bytes` with `read`, which must consume every byte. */
function decodeAll<T>(bytes: Uint8Array, read: (r: Reader) => T): T {
  const r = new Reader(bytes);
  const v = read(r);
  expect(r.remaining).toBe(0);
  return v;
}

/** Calls `f`: it returns, or throws a DecodeError; anything else fails the property. */
function onlyDecodeError(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
  }
}

/** Every strict prefix of `encoded` is a DecodeError for `read`: nothing is made up from missing bytes. */
function everyPrefixFails(encoded: Uint8Array, read: (r: Reader) => unknown): void {
  for (let cut = 0; cut < encoded.length; cut++) {
    expect(() => read(new Reader(encoded.subarray(0, cut)))).toThrow(DecodeError);
  }
}

/** Strings whose UTF-8 fits Kafka's int16 length: any code point, lone surrogates excepted (TextEncoder would replace them). */
const wireString = fc.string({ unit: 'binary', maxLength: 200 });
const uuidBytes = fc.uint8Array({ minLength: 16, maxLength: 16 });

describe('Reader primitives round-trip with the test encoders', () => {
  it('uvarint: every 32-bit unsigned value, in at most 5 bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        const enc = uvarint(n);
        expect(enc.length).toBeLessThanOrEqual(5);
        expect(decodeAll(enc, (r) => r.uvarint())).toBe(n);
        everyPrefixFails(enc, (r) => r.uvarint());
      }),
      RUNS,
    );
  });

  it('varint (zigzag): every 32-bit signed value', () => {
    fc.assert(
      fc.property(fc.integer({ min: -0x80000000, max: 0x7fffffff }), (n) => {
        expect(decodeAll(varint(n), (r) => r.varint())).toBe(n);
      }),
      RUNS,
    );
  });

  it('int16, int32 and int64, big-endian two\'s complement', () => {
    fc.assert(
      fc.property(fc.integer({ min: -0x8000, max: 0x7fff }), fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (a, b, c) => {
        expect(decodeAll(concat(int16(a), int32(b), int64(c)), (r) => [r.int16(), r.int32(), r.int64()])).toEqual([a, b, c]);
      }),
      RUNS,
    );
  });

  it('STRING and COMPACT_STRING: any string and null; a leading BOM is kept', () => {
    fc.assert(
      fc.property(fc.option(fc.oneof(wireString, wireString.map((s) => `\ufeff${s}`))), (s) => {
        expect(decodeAll(string(s), (r) => r.string())).toBe(s);
        expect(decodeAll(compactString(s), (r) => r.compactString())).toBe(s);
        everyPrefixFails(string(s), (r) => r.string());
        everyPrefixFails(compactString(s), (r) => r.compactString());
      }),
      RUNS,
    );
  });

  it('a string length above 32767 is refused whatever the bytes, as Kafka does', () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_STRING_LENGTH + 1, max: 0xfffffffe }), fc.uint8Array({ maxLength: 64 }), (len, tail) => {
        expect(() => new Reader(concat(uvarint(len + 1), tail)).compactString()).toThrow(DecodeError);
      }),
      RUNS,
    );
  });

  it('COMPACT_BYTES and BYTES: any bytes and null', () => {
    fc.assert(
      fc.property(fc.option(fc.uint8Array({ maxLength: 300 })), (b) => {
        const compact = decodeAll(compactBytes(b), (r) => r.compactBytes());
        expect(compact === null ? null : [...compact]).toEqual(b === null ? null : [...b]);
        const plain = b === null ? int32(-1) : concat(int32(b.length), b);
        const got = decodeAll(plain, (r) => r.bytesField());
        expect(got === null ? null : [...got]).toEqual(b === null ? null : [...b]);
      }),
      RUNS,
    );
  });

  it('ARRAY and COMPACT_ARRAY of int32 and of strings, null included', () => {
    fc.assert(
      fc.property(fc.option(fc.array(fc.integer({ min: -0x80000000, max: 0x7fffffff }), { maxLength: 50 })), fc.option(fc.array(fc.option(wireString), { maxLength: 20 })), (ints, strs) => {
        expect(decodeAll(array(ints, int32), (r) => r.array(4, (e) => e.int32()))).toEqual(ints);
        expect(decodeAll(compactArray(ints, int32), (r) => r.compactArray(4, (e) => e.int32()))).toEqual(ints);
        expect(decodeAll(compactArray(strs, compactString), (r) => r.compactArray(1, (e) => e.compactString()))).toEqual(strs);
      }),
      RUNS,
    );
  });

  it('UUID: 16 bytes in, the same 16 bytes out, as a view', () => {
    fc.assert(
      fc.property(uuidBytes, (u) => {
        expect([...decodeAll(uuid(u), (r) => r.uuid())]).toEqual([...u]);
      }),
      RUNS,
    );
  });
});

/** Tagged fields in ascending, distinct tag order, as KIP-482 writers send them. */
const ascendingTags = fc
  .uniqueArray(fc.integer({ min: 0, max: 0x7fffffff }), { maxLength: 12 })
  .chain((tags) =>
    fc.tuple(...[...tags].sort((a, b) => a - b).map((tag) => fc.uint8Array({ maxLength: 40 }).map((bytes): RawTag => ({ tag, bytes })))),
  );

describe('tagged fields', () => {
  it('visits every field with its tag, size and value offset, and ends after the last', () => {
    fc.assert(
      fc.property(ascendingTags, fc.uint8Array({ maxLength: 8 }), (tags, before) => {
        const enc = concat(before, taggedFields(tags));
        const r = new Reader(enc, before.length);
        const seen: [number, number, number[]][] = [];
        expect(r.taggedFields((tag, size, at) => seen.push([tag, size, [...enc.subarray(at, at + size)]]))).toBe(tags.length);
        expect(r.remaining).toBe(0);
        expect(seen).toEqual(tags.map((t) => [t.tag, t.bytes.length, [...t.bytes]]));
        everyPrefixFails(taggedFields(tags), (x) => x.taggedFields());
      }),
      RUNS,
    );
  });

  it('counts and sizes in the billions end at the end of the bytes, quickly, with a DecodeError', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2 ** 20, max: 0xffffffff }), fc.integer({ min: 0, max: 0xffffffff }), fc.uint8Array({ maxLength: 2000 }), (count, size, rest) => {
        const started = performance.now();
        expect(() => new Reader(concat(uvarint(count), rest)).taggedFields()).toThrow(DecodeError);
        expect(() => new Reader(concat(uvarint(1), uvarint(0), uvarint(size > rest.length ? size : rest.length + 1), rest)).taggedFields()).toThrow(DecodeError);
        // Each field costs at least two bytes: a count of billions cannot loop longer than the bytes last.
        expect(performance.now() - started).toBeLessThan(50);
      }),
      RUNS,
    );
  });
});

/** API keys and versions the schemas define (current and removed), with the header version Kafka uses for them. */
const knownApi = fc
  .constantFrom(...protocol().apis)
  .chain((a) => fc.record({ apiKey: fc.constant(a.key), apiVersion: fc.integer({ min: a.definedVersions.lo, max: a.definedVersions.hi }) }));

describe('request and response headers', () => {
  it('a header written by the test encoder decodes to the same fields, with no problems', () => {
    fc.assert(
      fc.property(
        knownApi,
        fc.integer({ min: 0, max: 0x7fffffff }),
        fc.option(fc.string({ unit: 'binary', maxLength: 100 })),
        fc.option(uuidBytes),
        ascendingTags.map((tags) => tags.filter((t) => t.tag !== 0)),
        fc.uint8Array({ maxLength: 20 }),
        ({ apiKey, apiVersion }, correlationId, clientId, clientInstanceId, tags, body) => {
          const version = protocol().requestHeaderVersion(apiKey, apiVersion)!;
          const flexible = protocol().schemas.requestHeader.flexibleVersions!.lo <= version;
          const header = requestHeader({ apiKey, apiVersion, correlationId, clientId, clientInstanceId, tags });
          const frame = concat(header, body);
          const h = decodeRequestHeader(frame, 0, frame.length, true);
          expect(h.problems).toEqual([]);
          expect(h.headerVersion).toBe(version);
          expect([h.apiKey, h.apiVersion, h.correlationId, h.headerLength]).toEqual([apiKey, apiVersion, correlationId, header.length]);
          expect(h.clientId).toBe(version >= 1 ? clientId : null);
          expect(h.clientIdPresent).toBe(version >= 1);
          const expectedId = protocol().headerCarriesInstanceId(version) && clientInstanceId !== null ? [...clientInstanceId] : null;
          expect(h.clientInstanceId === null ? null : [...h.clientInstanceId]).toEqual(expectedId);
          expect(h.otherTags).toEqual(flexible ? tags.slice(0, 64).map((t) => ({ tag: t.tag, size: t.bytes.length })) : []);
          // A prefix that ends inside the header asks for more bytes (DecodeError) rather than guessing.
          for (let cut = 0; cut < header.length; cut++) {
            expect(() => decodeRequestHeader(frame, 0, cut, false)).toThrow(DecodeError);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('response headers v0 and v1 round-trip', () => {
    fc.assert(
      fc.property(fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.constantFrom(0 as const, 1 as const), ascendingTags, (correlationId, headerVersion, tags) => {
        const enc = responseHeader({ correlationId, headerVersion, tags });
        expect(decodeResponseHeader(enc, 0, enc.length, headerVersion)).toEqual({ correlationId, headerVersion, headerLength: headerVersion === 0 ? 4 : enc.length });
      }),
      RUNS,
    );
  });
});

describe('UUID text forms', () => {
  it('base64url and hex round-trip through parseUuid, and each UUID has one base64 spelling', () => {
    fc.assert(
      fc.property(uuidBytes, (u) => {
        const b64 = uuidToBase64(u);
        expect(b64).toMatch(/^[A-Za-z0-9_-]{21}[AQgw]$/);
        expect([...parseUuid(b64)!]).toEqual([...u]);
        expect([...parseUuid(uuidToHex(u))!]).toEqual([...u]);
        expect([...parseUuid(uuidToHex(u).replace(/-/g, '').toUpperCase())!]).toEqual([...u]);
        expect(uuidEquals(u, Uint8Array.from(u))).toBe(true);
        expect(isZeroUuid(u)).toBe(u.every((b) => b === 0));
      }),
      RUNS,
    );
  });

  it('parseUuid never throws: a UUID or null for any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.base64String({ minLength: 20, maxLength: 28 }), fc.stringMatching(/^[0-9a-fA-F-]{30,40}$/)), (s) => {
        const u = parseUuid(s);
        expect(u === null || u.length === 16).toBe(true);
      }),
      RUNS,
    );
  });
});

describe('random bytes never throw anything but DecodeError', () => {
  const anyBytes = fc.uint8Array({ maxLength: 300 });

  it('the Reader, whatever sequence of reads', () => {
    const ops: ((r: Reader) => unknown)[] = [
      (r) => r.int8(),
      (r) => r.int16(),
      (r) => r.int32(),
      (r) => r.int64(),
      (r) => r.uvarint(),
      (r) => r.varint(),
      (r) => r.string(),
      (r) => r.compactString(),
      (r) => r.bytesField(),
      (r) => r.compactBytes(),
      (r) => r.uuid(),
      (r) => r.array(1, (e) => e.int8()),
      (r) => r.compactArray(1, (e) => e.compactString()),
      (r) => r.taggedFields(),
      (r) => r.child(r.uint8()),
      (r) => r.skip(r.uint8()),
    ];
    fc.assert(
      fc.property(anyBytes, fc.array(fc.integer({ min: 0, max: ops.length - 1 }), { maxLength: 12 }), (bytes, script) => {
        const r = new Reader(bytes);
        onlyDecodeError(() => {
          for (const i of script) ops[i]!(r);
        });
        expect(r.pos).toBeLessThanOrEqual(bytes.length);
      }),
      { numRuns: 2000 },
    );
  });

  it('the header decoders, for whole frames and prefixes', () => {
    fc.assert(
      fc.property(anyBytes, fc.boolean(), fc.boolean(), (bytes, whole, infer) => {
        onlyDecodeError(() => decodeRequestHeader(bytes, 0, bytes.length, whole, { inferNewerVersions: infer }));
        onlyDecodeError(() => decodeResponseHeader(bytes, 0, bytes.length, 0));
        onlyDecodeError(() => decodeResponseHeader(bytes, 0, bytes.length, 1));
      }),
      { numRuns: 2000 },
    );
  });

  it('a header that starts well and ends in random bytes', () => {
    fc.assert(
      fc.property(knownApi, anyBytes, ({ apiKey, apiVersion }, tail) => {
        const frame = concat(int16(apiKey), int16(apiVersion), int32(7), tail);
        onlyDecodeError(() => {
          const h = decodeRequestHeader(frame, 0, frame.length, true);
          expect(h.headerLength).toBeLessThanOrEqual(frame.length);
          expect(h.problems.length).toBeLessThanOrEqual(5);
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('the body decoders of the rules, every version, whole frames and prefixes', () => {
    const keys = [0, 17, 18, 68, 71, 72, 76, 88];
    fc.assert(
      fc.property(anyBytes, fc.integer({ min: -1, max: 14 }), fc.boolean(), (bytes, version, full) => {
        for (const key of keys) {
          for (const kind of ['request', 'response'] as const) {
            const e = thrown(() => decodeBody(kind, key, version, full, bytes, 0, bytes.length, bytes.length + (full ? 0 : 9)));
            if (e !== undefined && !(e instanceof BodyError)) throw e;
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('writeJson (the JSON formats written in pieces)', () => {
  const pieces = (value: unknown, indent: number, depth?: number): string => {
    const out: string[] = [];
    writeJson(value, indent, (s) => out.push(s), depth);
    return out.join('');
  };
  // Values JSON.stringify treats specially: undefined members are left out, undefined in arrays is null.
  const value = fc.letrec((tie) => ({
    leaf: fc.oneof(fc.jsonValue(), fc.string({ unit: 'binary' }), fc.constant(undefined)),
    node: fc.oneof({ depthSize: 'small' }, tie('leaf'), fc.array(tie('node')), fc.dictionary(fc.string(), tie('node'))),
  })).node;

  it('writes the bytes safeJson writes, at every indent and depth', () => {
    fc.assert(
      fc.property(value, fc.constantFrom(0, 2), fc.integer({ min: 0, max: 4 }), (v, indent, depth) => {
        fc.pre(v !== undefined);
        expect(pieces(v, indent, depth)).toBe(`${safeJson(v, indent === 0 ? undefined : indent)}\n`);
      }),
    );
  });

  it('writes a JsonList longer than one batch (256) as JSON.stringify writes its mapped array', () => {
    for (const n of [255, 256, 257, 600]) {
      const items = Array.from({ length: n }, (_, i) => i);
      const doc = { outer: { list: new JsonList(items, (i) => ({ i, s: `\u009b${i}`, nested: [i, { deep: [] }] })) } };
      for (const indent of [0, 2]) expect(pieces(doc, indent)).toBe(`${safeJson(doc, indent === 0 ? undefined : indent)}\n`);
    }
  });

  it('writes a JsonList element by element, as JSON.stringify writes its mapped array', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), fc.constantFrom(0, 2), (items, indent) => {
        const doc = { a: [1, new JsonList(items, (x) => ({ x }))], b: new JsonList(items, (x) => x) };
        expect(pieces(doc, indent)).toBe(`${safeJson(doc, indent === 0 ? undefined : indent)}\n`);
      }),
    );
  });
});

describe("a connection's latency histogram", () => {
  const conn = { client: { ip: '10.0.0.1', port: 50000 }, broker: { ip: '10.0.0.2', port: 9092 } } as unknown as KafkaConnection;

  it('is [bucket, count, ...] ascending by bucket, with every response counted once', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 600 }), { maxLength: 200 }), (buckets) => {
        const s = new ConnState(conn, 0, 0);
        for (const b of buckets) s.countLatency(b);
        const counts = new Map<number, number>();
        for (const b of buckets) counts.set(b, (counts.get(b) ?? 0) + 1);
        expect(s.latency).toEqual([...counts].sort((x, y) => x[0] - y[0]).flat());
      }),
    );
  });

  it('inserts a new bucket before, between and after the ones it has', () => {
    const s = new ConnState(conn, 0, 0);
    for (const b of [50, 10, 50, 30, 70, 10, 0]) s.countLatency(b);
    expect(s.latency).toEqual([0, 1, 10, 2, 30, 1, 50, 2, 70, 1]);
  });
});
