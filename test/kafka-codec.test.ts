import { describe, expect, it } from 'vitest';
import { BodyError, decodeBody, errorScanFor, readsBody } from '../src/kafka/bodies.js';
import { decodeRequestHeader, decodeResponseHeader, MAX_KEPT_TAGS } from '../src/kafka/headers.js';
import { API_KEY, Protocol, protocol } from '../src/kafka/protocol.js';
import { builtinSchemas } from '../src/kafka/schema/registry.js';
import { DecodeError } from '../src/kafka/reader.js';
import type { RequestHeader } from '../src/kafka/types.js';
import {
  apiVersionsRequestBody,
  apiVersionsResponseBody,
  concat,
  consumerGroupHeartbeatRequestBody,
  consumerGroupHeartbeatResponseBody,
  errorCodeResponseBody,
  getTelemetrySubscriptionsRequestBody,
  getTelemetrySubscriptionsResponseBody,
  int16,
  int32,
  int8,
  pushTelemetryRequestBody,
  pushTelemetryResponseBody,
  requestFrame,
  requestHeader,
  responseFrame,
  saslHandshakeRequestBody,
  saslHandshakeResponseBody,
  string,
  taggedFields,
  utf8,
  uuidFromHex,
  uvarint,
  type RequestFrameOptions,
} from './builder/kafka.js';

const ID = uuidFromHex('01234567-89ab-cdef-fedc-ba9876543210');
const ID2 = uuidFromHex('fbffbffb-ffbf-fbff-bffb-ffbffbffbf00');
const ZERO = new Uint8Array(16);

/** Decodes the request header of a whole frame built by requestFrame (size prefix skipped). */
function header(o: RequestFrameOptions, isWholeFrame = true): RequestHeader {
  const frame = requestFrame(o);
  return decodeRequestHeader(frame, 4, frame.length, isWholeFrame);
}

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('header version choice (from the schemas: Kafka\'s rule, or a headerVersions map)', () => {
  it.each([
    // key, version, request header, response header
    [0, 2, 1, 0], // Produce v2: removed in Kafka 4.0, still decoded
    [0, 8, 1, 0], // Produce, last non-flexible
    [0, 9, 2, 1], // Produce, first flexible
    [0, 13, 2, 1],
    [1, 18, 2, 1],
    [7, 0, 0, 0], // ControlledShutdown v0: header without ClientId
    [7, 1, 1, 0],
    [7, 3, 2, 1],
    [17, 1, 1, 0], // SaslHandshake: never flexible
    [18, 0, 1, 0], // ApiVersions
    [18, 2, 1, 0],
    [18, 3, 2, 0], // ApiVersions v3: flexible request header, v0 response header (KIP-511)
    [18, 5, 2, 0],
    [47, 0, 1, 0], // OffsetDelete: never flexible
    [68, 1, 2, 1], // ConsumerGroupHeartbeat
    [71, 0, 2, 1], // GetTelemetrySubscriptions
    [71, 1, 2, 1], // ... v1 (KIP-1313)
    [72, 1, 2, 1], // PushTelemetry v1 (KIP-1313)
    [88, 0, 2, 1], // StreamsGroupHeartbeat
    [0, 14, null, null], // version above the schemas
    [71, 2, null, null],
    [95, 0, null, null], // unknown key
    [-1, 0, null, null],
  ])('key %i v%i: request header %s, response header %s', (key, version, request, response) => {
    expect(protocol().requestHeaderVersion(key, version)).toBe(request);
    expect(protocol().responseHeaderVersion(key, version)).toBe(response);
  });
});

describe('request headers', () => {
  const base = { correlationId: 0x01020304, clientId: 'kcid-test' };

  it('v0 (ControlledShutdown v0): key, version, correlation id only', () => {
    expect(header({ ...base, apiKey: 7, apiVersion: 0, body: int32(1) })).toEqual({
      apiKey: 7,
      apiVersion: 0,
      correlationId: 0x01020304,
      headerVersion: 0,
      clientId: null,
      clientIdPresent: false,
      clientInstanceId: null,
      otherTags: [],
      headerLength: 8,
      problems: [],
    });
  });

  it('v1 (Produce v8): adds the int16-length ClientId', () => {
    expect(header({ ...base, apiKey: 0, apiVersion: 8 })).toEqual({
      apiKey: 0,
      apiVersion: 8,
      correlationId: 0x01020304,
      headerVersion: 1,
      clientId: 'kcid-test',
      clientIdPresent: true,
      clientInstanceId: null,
      otherTags: [],
      headerLength: 8 + 2 + 9,
      problems: [],
    });
  });

  it('v2 without tags', () => {
    const h = header({ ...base, apiKey: 3, apiVersion: 12 });
    expect(h.headerVersion).toBe(2);
    expect(h.clientInstanceId).toBeNull();
    expect(h.headerLength).toBe(8 + 11 + 1);
    expect(h.problems).toEqual([]);
  });

  it('v2 with tag 0 = ClientInstanceId (KIP-1313) and another tag', () => {
    const h = header({ ...base, apiKey: 3, apiVersion: 12, clientInstanceId: ID, tags: [{ tag: 7, bytes: utf8('xyz') }] });
    expect(h.clientInstanceId).toEqual(ID);
    expect(h.otherTags).toEqual([{ tag: 7, size: 3 }]);
    // 8 fixed + ClientId (2 + 9) + count (1) + tag 0 (1 + 1 + 16) + tag 7 (1 + 1 + 3)
    expect(h.headerLength).toBe(8 + 11 + 1 + 18 + 5);
    expect(h.problems).toEqual([]);
  });

  it('tag 0 holding the zero UUID is decoded as is (rules decide what it means)', () => {
    const h = header({ ...base, apiKey: 3, apiVersion: 12, clientInstanceId: ZERO });
    expect(h.clientInstanceId).toEqual(ZERO);
    expect(h.problems).toEqual([]);
  });

  it('clientInstanceId is a copy of the frame bytes, or the last ID when equal to it', () => {
    const frame = requestFrame({ ...base, apiKey: 3, apiVersion: 12, clientInstanceId: ID });
    const h = decodeRequestHeader(frame, 4, frame.length, true);
    expect(h.clientInstanceId!.buffer).not.toBe(frame.buffer);
    expect(h.clientInstanceId!.length).toBe(16);
    expect([...h.clientInstanceId!]).toEqual([...ID]);
    // Frame buffers are reused: the ID must not change with them.
    frame.fill(0xee, 4 + 8 + 11 + 1 + 2, 4 + 8 + 11 + 1 + 2 + 16);
    expect([...h.clientInstanceId!]).toEqual([...ID]);
    const again = requestFrame({ ...base, apiKey: 3, apiVersion: 12, clientInstanceId: ID });
    expect(decodeRequestHeader(again, 4, again.length, true, { lastInstanceId: h.clientInstanceId }).clientInstanceId).toBe(h.clientInstanceId);
    const other = requestFrame({ ...base, apiKey: 3, apiVersion: 12, clientInstanceId: new Uint8Array(16).fill(7) });
    const o = decodeRequestHeader(other, 4, other.length, true, { lastInstanceId: h.clientInstanceId }).clientInstanceId!;
    expect([o === h.clientInstanceId, [...o]]).toEqual([false, new Array(16).fill(7)]);
  });

  it.each([15, 17, 0])('tag 0 of %i bytes is a tag0-size problem', (size) => {
    const h = header({ ...base, apiKey: 3, apiVersion: 12, tags: [{ tag: 0, bytes: new Uint8Array(size) }] });
    expect(h.clientInstanceId).toBeNull();
    expect(h.otherTags).toEqual([]);
    expect(h.problems).toEqual([{ code: 'tag0-size', message: `tag 0 (ClientInstanceId) has ${size} bytes, expected 16` }]);
    expect(h.headerLength).toBe(8 + 11 + 1 + 2 + size);
  });

  it('tags out of order', () => {
    const h = header({ ...base, apiKey: 3, apiVersion: 12, tags: [{ tag: 5, bytes: int8(1) }, { tag: 0, bytes: ID }] });
    expect(h.clientInstanceId).toEqual(ID);
    expect(h.otherTags).toEqual([{ tag: 5, size: 1 }]);
    expect(h.problems).toEqual([{ code: 'tags-not-ascending', message: 'tag 0 follows tag 5' }]);
  });

  it('tag 0 repeated: the last one wins, as in Kafka', () => {
    const h = header({ ...base, apiKey: 3, apiVersion: 12, clientInstanceId: ID, tags: [{ tag: 0, bytes: ID2 }] });
    expect(h.clientInstanceId).toEqual(ID2);
    expect(h.problems).toEqual([{ code: 'tag-repeated', message: 'tag 0 appears more than once' }]);
  });

  it('tag 0 repeated after another tag is both repeated and out of order', () => {
    const h = header({ ...base, apiKey: 3, apiVersion: 12, clientInstanceId: ID, tags: [{ tag: 3, bytes: int8(0) }, { tag: 0, bytes: ID2 }] });
    expect(h.problems.map((p) => p.code)).toEqual(['tag-repeated', 'tags-not-ascending']);
  });

  it('each problem is reported once and kept tags are capped', () => {
    const tags = Array.from({ length: 1000 }, (_, i) => ({ tag: 1000 - i, bytes: new Uint8Array(0) }));
    const h = header({ ...base, apiKey: 3, apiVersion: 12, tags });
    expect(h.problems).toEqual([{ code: 'tags-not-ascending', message: 'tag 999 follows tag 1000' }]);
    expect(h.otherTags).toHaveLength(MAX_KEPT_TAGS);
  });

  it('a tag larger than the frame is an overrun of a whole frame, a DecodeError for a prefix', () => {
    const o = { ...base, apiKey: 3, apiVersion: 12, rawTagSection: concat(uvarint(1), uvarint(0), uvarint(1000), ID) };
    const frame = requestFrame(o);
    const h = decodeRequestHeader(frame, 4, frame.length, true);
    expect(h.problems).toEqual([
      {
        code: 'overrun',
        message: `header overruns the ${frame.length - 4}-byte frame (truncated: need 1000 bytes at offset 23, have 16)`,
      },
    ]);
    expect(h.headerLength).toBe(frame.length - 4);
    expect(h.clientId).toBe('kcid-test');
    expect(() => decodeRequestHeader(frame, 4, frame.length, false)).toThrow(DecodeError);
  });

  it('a tag count in the billions ends at the end of the frame', () => {
    const rawTagSection = concat(uvarint(0xffffffff), ...Array.from({ length: 500 }, (_, i) => concat(uvarint(i + 1), uvarint(0))));
    const frame = requestFrame({ ...base, apiKey: 3, apiVersion: 12, rawTagSection });
    const h = decodeRequestHeader(frame, 4, frame.length, true);
    expect(h.problems.map((p) => p.code)).toEqual(['overrun']);
    expect(h.otherTags).toHaveLength(MAX_KEPT_TAGS);
  });

  it('a ClientId longer than the frame is an overrun', () => {
    const frame = concat(int32(8 + 2 + 3), int16(3), int16(12), int32(5), int16(100), utf8('abc'));
    const h = decodeRequestHeader(frame, 4, frame.length, true);
    expect(h.problems.map((p) => p.code)).toEqual(['overrun']);
    expect(h.clientId).toBeNull();
    expect(h.clientIdPresent).toBe(false);
  });

  it('null ClientId (-1), and other negative lengths Kafka also reads as null', () => {
    const h = header({ ...base, apiKey: 0, apiVersion: 8, clientId: null });
    expect([h.clientId, h.clientIdPresent, h.headerLength, h.problems]).toEqual([null, true, 10, []]);
    const frame = concat(int32(10), int16(0), int16(8), int32(1), int16(-2));
    const odd = decodeRequestHeader(frame, 4, frame.length, true);
    expect([odd.clientId, odd.clientIdPresent, odd.headerLength]).toEqual([null, true, 10]);
    expect(odd.problems).toEqual([{ code: 'bad-client-id', message: 'ClientId length -2 (Kafka reads it as null)' }]);
  });

  it('a ClientId that is not UTF-8 decodes with U+FFFD and is a bad-client-id problem', () => {
    const frame = concat(int32(13), int16(0), int16(8), int32(1), int16(3), Uint8Array.of(0x61, 0xc3, 0x28));
    const h = decodeRequestHeader(frame, 4, frame.length, true);
    expect(h.clientId).toBe('a\ufffd(');
    expect(h.problems).toEqual([{ code: 'bad-client-id', message: 'ClientId is not valid UTF-8' }]);
  });

  it('ApiVersions v3: ClientId keeps its int16 length in the flexible header', () => {
    // size 25 | 00 12 | 00 03 | 00 00 00 2a | 00 04 'kcid' | 00 (no tags) | body: 05 'kcid' 04 '1.0' 00
    const frame = Uint8Array.from([
      0, 0, 0, 0x19, 0x00, 0x12, 0x00, 0x03, 0, 0, 0, 0x2a, 0x00, 0x04, 0x6b, 0x63, 0x69, 0x64, 0x00,
      0x05, 0x6b, 0x63, 0x69, 0x64, 0x04, 0x31, 0x2e, 0x30, 0x00,
    ]);
    expect(frame).toEqual(
      requestFrame({ apiKey: 18, apiVersion: 3, correlationId: 42, clientId: 'kcid', body: apiVersionsRequestBody({ softwareName: 'kcid', softwareVersion: '1.0' }) }),
    );
    const h = decodeRequestHeader(frame, 4, frame.length, true);
    expect([h.headerVersion, h.clientId, h.headerLength, h.problems]).toEqual([2, 'kcid', 15, []]);
    expect({ ...decodeBody('request', 18, 3, true, frame, 4 + h.headerLength, frame.length, frame.length)!.body }).toEqual({
      ClientSoftwareName: 'kcid',
      ClientSoftwareVersion: '1.0',
    });
    // The same ClientId written compactly (05 'kcid') reads as an int16 length 0x056b: an overrun.
    const compact = concat(int32(15), int16(18), int16(3), int32(42), Uint8Array.of(0x05), utf8('kcid'), taggedFields());
    expect(decodeRequestHeader(compact, 4, compact.length, true).problems.map((p) => p.code)).toEqual(['overrun']);
  });

  it('unknown key or version: stops after ClientId, headerVersion null', () => {
    for (const [apiKey, apiVersion] of [
      [200, 0],
      [1, 19],
    ] as const) {
      const frame = requestFrame({ ...base, apiKey, apiVersion, headerVersion: 2, clientInstanceId: ID });
      const h = decodeRequestHeader(frame, 4, frame.length, true);
      expect([h.headerVersion, h.clientId, h.clientInstanceId, h.headerLength, h.problems]).toEqual([null, 'kcid-test', null, 19, []]);
    }
  });

  it('inferNewerVersions: a version above the schemas of an API flexible since N+ has its newest header (v2)', () => {
    const frame = requestFrame({ ...base, apiKey: 1, apiVersion: 19, headerVersion: 2, clientInstanceId: ID });
    const h = decodeRequestHeader(frame, 4, frame.length, true, { inferNewerVersions: true });
    expect([h.headerVersion, h.clientInstanceId, h.headerLength]).toEqual([2, ID, 8 + 11 + 1 + 18]);
    // Never for unknown keys or APIs with no flexible version.
    const sasl = requestFrame({ ...base, apiKey: 17, apiVersion: 2, headerVersion: 1 });
    expect(decodeRequestHeader(sasl, 4, sasl.length, true, { inferNewerVersions: true }).headerVersion).toBeNull();
    const unknown = requestFrame({ ...base, apiKey: 300, apiVersion: 0, headerVersion: 1 });
    expect(decodeRequestHeader(unknown, 4, unknown.length, true, { inferNewerVersions: true }).headerVersion).toBeNull();
  });

  it('fewer than 8 bytes always throw DecodeError', () => {
    const frame = requestFrame({ ...base, apiKey: 0, apiVersion: 8 });
    for (let end = 4; end < 12; end++) {
      expect(thrown(() => decodeRequestHeader(frame, 4, end, true))).toBeInstanceOf(DecodeError);
      expect(thrown(() => decodeRequestHeader(frame, 4, end, false))).toBeInstanceOf(DecodeError);
    }
  });

  it('a prefix that holds the whole header decodes like the frame', () => {
    const o = { ...base, apiKey: 3, apiVersion: 12, clientInstanceId: ID, body: new Uint8Array(100) };
    const frame = requestFrame(o);
    const headerBytes = requestHeader(o).length;
    expect(decodeRequestHeader(frame, 4, 4 + headerBytes, false)).toEqual(decodeRequestHeader(frame, 4, frame.length, true));
  });
});

describe('response headers', () => {
  it.each([
    [0, [], { correlationId: 7, headerVersion: 0, headerLength: 4 }],
    [1, [], { correlationId: 7, headerVersion: 1, headerLength: 5 }],
    [1, [{ tag: 3, bytes: Uint8Array.of(1, 2) }], { correlationId: 7, headerVersion: 1, headerLength: 9 }],
  ] as const)('v%i with tags %j', (headerVersion, tags, expected) => {
    const frame = responseFrame({ correlationId: 7, headerVersion, tags: [...tags], body: int16(0) });
    expect(decodeResponseHeader(frame, 4, frame.length, headerVersion)).toEqual(expected);
  });

  it('truncated or overrunning headers throw DecodeError', () => {
    const frame = responseFrame({ correlationId: 7, headerVersion: 1, tags: [{ tag: 1, bytes: new Uint8Array(4) }] });
    for (let end = 4; end < frame.length; end++) {
      expect(thrown(() => decodeResponseHeader(frame, 4, end, 1))).toBeInstanceOf(DecodeError);
    }
    expect(() => decodeResponseHeader(frame, 4, frame.length, 2 as 1)).toThrow(DecodeError);
  });
});

// ---- robustness ---------------------------------------------------------------------------------------

interface Case {
  name: string;
  frame: Uint8Array;
  decodeBody: (buf: Uint8Array, start: number, end: number) => unknown;
}

function requestCase(name: string, o: RequestFrameOptions, decodeBody: Case['decodeBody']): Case {
  return { name, frame: requestFrame(o), decodeBody };
}

const common = { correlationId: 9, clientInstanceId: ID };
/** The full decoder of a request version, on a prefix of its frame (the frame ends where the bytes do). */
const body = (key: number, version: number) => (b: Uint8Array, s: number, e: number) => decodeBody('request', key, version, true, b, s, e, e);
const CASES: Case[] = [
  requestCase('ApiVersions v3', { ...common, apiKey: 18, apiVersion: 3, body: apiVersionsRequestBody({ softwareName: 'kcid', softwareVersion: '1' }) }, body(18, 3)),
  requestCase('GetTelemetrySubscriptions v0', { ...common, apiKey: 71, apiVersion: 0, body: getTelemetrySubscriptionsRequestBody(0, ID) }, body(71, 0)),
  requestCase('GetTelemetrySubscriptions v1', { ...common, apiKey: 71, apiVersion: 1, body: getTelemetrySubscriptionsRequestBody(1) }, body(71, 1)),
  requestCase('PushTelemetry v0', { ...common, apiKey: 72, apiVersion: 0, body: pushTelemetryRequestBody(0, { ...push(), clientInstanceId: ID }) }, body(72, 0)),
  requestCase('PushTelemetry v1', { ...common, apiKey: 72, apiVersion: 1, body: pushTelemetryRequestBody(1, push()) }, body(72, 1)),
  requestCase(
    'ConsumerGroupHeartbeat v1',
    { ...common, apiKey: 68, apiVersion: 1, body: consumerGroupHeartbeatRequestBody(1, { groupId: 'g', memberId: 'm', memberEpoch: 1, rackId: 'r' }) },
    body(68, 1),
  ),
  requestCase('SaslHandshake v1', { ...common, apiKey: 17, apiVersion: 1, clientId: null, body: saslHandshakeRequestBody('PLAIN') }, body(17, 1)),
  requestCase('ControlledShutdown v0', { ...common, apiKey: 7, apiVersion: 0, body: int32(3) }, () => null),
  requestCase('Metadata v12, tags', { ...common, apiKey: 3, apiVersion: 12, tags: [{ tag: 1, bytes: string('x') }] }, () => null),
];

function push(): { subscriptionId: number; terminating: boolean; compressionType: number; metrics: Uint8Array } {
  return { subscriptionId: 1, terminating: false, compressionType: 0, metrics: Uint8Array.of(1, 2, 3) };
}

/** Anything thrown must be a DecodeError (headers) or a BodyError (bodies). */
function onlyDecodeErrors(f: () => unknown): void {
  const e = thrown(f);
  if (e !== undefined && !(e instanceof DecodeError) && !(e instanceof BodyError)) throw e;
}

describe('truncation at every offset', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const { frame } = c;
    const whole = decodeRequestHeader(frame, 4, frame.length, true);
    expect(whole.problems).toEqual([]);
    expect(() => c.decodeBody(frame, 4 + whole.headerLength, frame.length)).not.toThrow();
    for (let end = 4; end < frame.length; end++) {
      // As a prefix of the frame: a header, or a DecodeError asking for more bytes.
      onlyDecodeErrors(() => decodeRequestHeader(frame, 4, end, false));
      // As if the frame ended there: a header (perhaps with problems), or a DecodeError below 8 bytes.
      const e = thrown(() => decodeRequestHeader(frame, 4, end, true));
      if (e !== undefined) {
        expect(e).toBeInstanceOf(DecodeError);
        expect(end - 4).toBeLessThan(8);
      }
      if (end >= 4 + whole.headerLength) onlyDecodeErrors(() => c.decodeBody(frame, 4 + whole.headerLength, end));
    }
  });

});

/** mulberry32: a small seeded PRNG, so failures reproduce. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALL_DECODERS: ((b: Uint8Array, s: number, e: number, v: number) => unknown)[] = [
  (b, s, e) => decodeRequestHeader(b, s, e, true),
  (b, s, e) => decodeRequestHeader(b, s, e, false, { inferNewerVersions: true }),
  (b, s, e, v) => decodeResponseHeader(b, s, e, v & 1),
  // The bodies the rules read, whole or as a prefix of a longer frame, requests and responses.
  ...[0, 18, 68, 71, 72].flatMap((key) => [
    (b: Uint8Array, s: number, e: number, v: number) => decodeBody('request', key, v, true, b, s, e, e),
    (b: Uint8Array, s: number, e: number, v: number) => decodeBody('response', key, v, false, b, s, e, e + 8),
  ]),
];

describe('random input', () => {
  it('random bytes never throw anything but DecodeError', () => {
    const rand = prng(0x6b636964);
    for (let i = 0; i < 20000; i++) {
      const buf = new Uint8Array(Math.floor(rand() * 64));
      // Mostly small values and 0xff, so that lengths and counts are sometimes plausible.
      for (let j = 0; j < buf.length; j++) buf[j] = rand() < 0.5 ? Math.floor(rand() * 4) : rand() < 0.5 ? 0xff : Math.floor(rand() * 256);
      const version = Math.floor(rand() * 7) - 1;
      for (const decode of ALL_DECODERS) onlyDecodeErrors(() => decode(buf, 0, buf.length, version));
    }
  });

  it('mutated valid frames never throw anything but DecodeError', () => {
    const rand = prng(1313);
    for (let i = 0; i < 20000; i++) {
      const c = CASES[Math.floor(rand() * CASES.length)]!;
      const frame = Uint8Array.from(c.frame);
      const flips = 1 + Math.floor(rand() * 3);
      for (let k = 0; k < flips; k++) frame[4 + Math.floor(rand() * (frame.length - 4))] = Math.floor(rand() * 256);
      const end = rand() < 0.5 ? frame.length : 4 + Math.floor(rand() * (frame.length - 4));
      onlyDecodeErrors(() => decodeRequestHeader(frame, 4, end, end === frame.length));
      const h = thrown(() => decodeRequestHeader(frame, 4, frame.length, true)) === undefined ? decodeRequestHeader(frame, 4, frame.length, true) : null;
      if (h !== null) onlyDecodeErrors(() => c.decodeBody(frame, 4 + h.headerLength, end < 4 + h.headerLength ? 4 + h.headerLength : end));
    }
  });
});

describe('the decoders kept per protocol', () => {
  it('keep nothing for keys and versions the schemas do not define (a capture may name 65,536 of each)', () => {
    const p = new Protocol(builtinSchemas());
    const body = new Uint8Array(16);
    for (const [key, version] of [[9999, 0], [API_KEY.Heartbeat, 999], [API_KEY.Heartbeat, 0x7fff], [API_KEY.Heartbeat, -1]] as const) {
      for (const full of [false, true]) {
        expect(readsBody('request', key, version, full, p)).toBe(false);
        expect(readsBody('response', key, version, full, p)).toBe(false);
        expect(decodeBody('request', key, version, full, body, 0, 16, 16, p)).toBeNull();
      }
      expect(errorScanFor(key, version, p)).toBeNull();
    }
    const kept = p.bodyPlans as Record<'request' | 'response' | 'fullRequest' | 'fullResponse' | 'scan', Map<number, unknown[]>>;
    for (const byKey of Object.values(kept)) {
      expect(byKey.has(9999)).toBe(false);
      expect(Object.keys(byKey.get(API_KEY.Heartbeat) ?? [])).toEqual([]);
    }
    // A defined version is kept, once.
    expect(readsBody('response', API_KEY.Heartbeat, 4, false, p)).toBe(true);
    expect(Object.keys(kept.response.get(API_KEY.Heartbeat)!)).toEqual(['4']);
  });
});
