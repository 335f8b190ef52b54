import { describe, expect, it } from 'vitest';
import { errorLabel, protocol } from '../src/kafka/protocol.js';
import { DecodeError, Reader } from '../src/kafka/reader.js';
import { isZeroUuid, parseUuid, uuidEquals, uuidToBase64, uuidToHex, ZERO_UUID } from '../src/kafka/uuid.js';
import { compactString, concat, int16, int32, string, uuidFromHex, uvarint, varint } from './builder/kafka.js';

const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

function decodeError(f: () => unknown): DecodeError {
  try {
    f();
  } catch (e) {
    if (e instanceof DecodeError) return e;
    throw e;
  }
  throw new Error('expected a DecodeError');
}

describe('Reader integers', () => {
  it.each([
    ['int8', bytes(0x7f), 127],
    ['int8', bytes(0x80), -128],
    ['uint8', bytes(0xff), 255],
    ['int16', bytes(0x01, 0x02), 0x0102],
    ['int16', bytes(0xff, 0xfe), -2],
    ['uint16', bytes(0xff, 0xfe), 0xfffe],
    ['int32', bytes(0x01, 0x02, 0x03, 0x04), 0x01020304],
    ['int32', bytes(0xff, 0xff, 0xff, 0xff), -1],
    ['int32', bytes(0x80, 0x00, 0x00, 0x00), -2147483648],
    ['uint32', bytes(0xff, 0xff, 0xff, 0xff), 4294967295],
    ['int64', bytes(0, 0, 0, 1, 0, 0, 0, 2), 0x100000002n],
    ['int64', bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe), -2n],
    ['int64', bytes(0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), 0x7fffffffffffffffn],
    ['bool', bytes(0), false],
    ['bool', bytes(1), true],
    // Kafka reads any non-zero byte as true.
    ['bool', bytes(0x80), true],
  ] as const)('%s of %j = %s', (method, input, expected) => {
    const r = new Reader(input);
    expect(r[method]()).toBe(expected);
    expect(r.remaining).toBe(0);
  });

  it.each([
    [bytes(0x00), 0, 1],
    [bytes(0x7f), 127, 1],
    [bytes(0x80, 0x01), 128, 2],
    [bytes(0xac, 0x02), 300, 2],
    [bytes(0xff, 0xff, 0xff, 0xff, 0x0f), 4294967295, 5],
    // Like Kafka's ByteUtils, bits of the fifth byte beyond 32 are dropped.
    [bytes(0xff, 0xff, 0xff, 0xff, 0x7f), 4294967295, 5],
    // Non-minimal encodings are accepted, as Kafka does.
    [bytes(0x80, 0x00), 0, 2],
  ])('uvarint %j = %i (%i bytes)', (input, value, length) => {
    const r = new Reader(input);
    expect(r.uvarint()).toBe(value);
    expect(r.pos).toBe(length);
  });

  it.each([
    [0, bytes(0x00)],
    [-1, bytes(0x01)],
    [1, bytes(0x02)],
    [-2, bytes(0x03)],
    [2147483647, bytes(0xfe, 0xff, 0xff, 0xff, 0x0f)],
    [-2147483648, bytes(0xff, 0xff, 0xff, 0xff, 0x0f)],
  ])('varint %i is zigzag %j', (value, input) => {
    expect(new Reader(input).varint()).toBe(value);
    expect(varint(value)).toEqual(input);
  });

  it('uvarint of more than 5 bytes is "varint too long"', () => {
    const e = decodeError(() => new Reader(bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x01)).uvarint());
    expect(e.message).toBe('varint too long');
    expect(e.offset).toBe(0);
  });

  it('uvarint cut short names its offset', () => {
    const e = decodeError(() => new Reader(bytes(9, 0x80, 0x80), 1).uvarint());
    expect(e.message).toBe('truncated: varint at offset 3 runs past the end');
  });

  it('truncation message names need, offset and have', () => {
    const r = new Reader(bytes(1, 2, 3, 4, 5), 2);
    const e = decodeError(() => r.int32());
    expect(e.message).toBe('truncated: need 4 bytes at offset 2, have 3');
    expect(e.offset).toBe(2);
    expect(e.name).toBe('DecodeError');
    expect(r.pos).toBe(2);
  });

  it('respects start and end inside a larger buffer', () => {
    const r = new Reader(bytes(0xaa, 0, 7, 0xbb), 1, 3);
    expect(r.int16()).toBe(7);
    expect(() => r.int8()).toThrow(DecodeError);
  });

  it('rejects a bad range with DecodeError', () => {
    expect(() => new Reader(bytes(1, 2), 1, 3)).toThrow(DecodeError);
    expect(() => new Reader(bytes(1, 2), 2, 1)).toThrow(DecodeError);
    expect(() => new Reader(bytes(1, 2), -1)).toThrow(DecodeError);
  });
});

describe('Reader byte ranges', () => {
  it('bytes() and uuid() are zero-copy subarrays', () => {
    const buf = bytes(...Array.from({ length: 20 }, (_, i) => i));
    const r = new Reader(buf, 2);
    const u = r.uuid();
    expect(u.buffer).toBe(buf.buffer);
    expect(u.byteOffset).toBe(2);
    expect([...u]).toEqual(Array.from({ length: 16 }, (_, i) => i + 2));
    expect(r.bytes(2)).toEqual(bytes(18, 19));
  });

  it('child() is bounded to its length and moves the parent past it', () => {
    const r = new Reader(bytes(0, 1, 0, 2, 9));
    const c = r.child(4);
    expect(r.pos).toBe(4);
    expect(c.int16()).toBe(1);
    expect(c.int16()).toBe(2);
    expect(() => c.int8()).toThrow(DecodeError);
    expect(() => r.child(2)).toThrow(DecodeError);
  });

  it('skip() checks bounds and sign', () => {
    const r = new Reader(bytes(1, 2, 3));
    r.skip(2);
    expect(r.uint8()).toBe(3);
    expect(() => r.skip(1)).toThrow(DecodeError);
    expect(() => r.skip(-1)).toThrow(DecodeError);
  });
});

describe('Reader strings', () => {
  it.each([
    ['string', string('kafka'), 'kafka'],
    ['string', string(''), ''],
    ['string', string(null), null],
    // Kafka's generated reader takes any negative int16 length as null.
    ['string', int16(-2), null],
    ['compactString', compactString('kafka'), 'kafka'],
    ['compactString', compactString(''), ''],
    ['compactString', compactString(null), null],
    ['compactString', compactString('é'), 'é'],
  ] as const)('%s of %j', (method, input, expected) => {
    const r = new Reader(input);
    expect(r[method]()).toBe(expected);
    expect(r.remaining).toBe(0);
  });

  it('invalid UTF-8 becomes U+FFFD and a byte-order mark is kept, as Java decodes', () => {
    expect(new Reader(bytes(0, 3, 0x61, 0xff, 0x62)).string()).toBe('a\ufffdb');
    expect(new Reader(bytes(0, 4, 0xef, 0xbb, 0xbf, 0x61)).string()).toBe('\ufeffa');
  });

  it('a string longer than the bytes left is a DecodeError', () => {
    expect(decodeError(() => new Reader(bytes(0, 5, 0x61)).string()).message).toBe(
      'truncated: need 5 bytes at offset 2, have 1',
    );
    expect(() => new Reader(bytes(6, 0x61)).compactString()).toThrow(DecodeError);
  });

  it('a compact string longer than 32767 bytes is a DecodeError, as in Kafka', () => {
    const input = concat(uvarint(0x8000 + 1), new Uint8Array(0x8000));
    expect(decodeError(() => new Reader(input).compactString()).message).toBe('string length 32768 exceeds 32767');
    expect(new Reader(concat(uvarint(0x7fff + 1), new Uint8Array(0x7fff))).compactString()).toHaveLength(0x7fff);
  });

  it('bytes fields: int32 and compact lengths, null', () => {
    expect(new Reader(bytes(0, 0, 0, 2, 7, 8)).bytesField()).toEqual(bytes(7, 8));
    expect(new Reader(bytes(0xff, 0xff, 0xff, 0xff)).bytesField()).toBeNull();
    expect(new Reader(bytes(3, 7, 8)).compactBytes()).toEqual(bytes(7, 8));
    expect(new Reader(bytes(0)).compactBytes()).toBeNull();
    expect(new Reader(bytes(0xe9, 0x07)).compactBytesLength()).toBe(1000);
    expect(() => new Reader(bytes(0x7f, 0xff, 0xff, 0xff, 1)).bytesField()).toThrow(DecodeError);
  });
});

describe('Reader arrays and tagged fields', () => {
  const int16At = (r: Reader): number => r.int16();

  it('reads int32-counted and compact arrays, null included', () => {
    expect(new Reader(concat(int32(2), int16(5), int16(-6))).array(2, int16At)).toEqual([5, -6]);
    expect(new Reader(int32(-1)).array(2, int16At)).toBeNull();
    expect(new Reader(concat(uvarint(3), int16(5), int16(6))).compactArray(2, int16At)).toEqual([5, 6]);
    expect(new Reader(uvarint(0)).compactArray(2, int16At)).toBeNull();
  });

  it('a lying count fails before reading or allocating', () => {
    let calls = 0;
    const counting = (r: Reader): number => (calls++, r.int16());
    const e = decodeError(() => new Reader(concat(int32(0x7fffffff), int16(1))).array(2, counting));
    expect(e.message).toBe('truncated: array of 2147483647 elements needs at least 4294967294 bytes at offset 4, have 2');
    expect(() => new Reader(concat(uvarint(0xffffffff), int16(1))).compactArray(1, counting)).toThrow(DecodeError);
    expect(calls).toBe(0);
  });

  it('taggedFields visits tag, size and value offset, and skips the values', () => {
    const input = concat(uvarint(2), uvarint(0), uvarint(2), bytes(0xaa, 0xbb), uvarint(300), uvarint(0), bytes(0x99));
    const seen: number[][] = [];
    const r = new Reader(input);
    expect(r.taggedFields((tag, size, at) => seen.push([tag, size, at]))).toBe(2);
    expect(seen).toEqual([
      [0, 2, 3],
      [300, 0, 8],
    ]);
    expect(r.uint8()).toBe(0x99);
  });

  it('a huge tagged-field count ends at the end of the bytes', () => {
    const input = concat(uvarint(0xffffffff), ...Array.from({ length: 1000 }, () => bytes(1, 0)));
    let visits = 0;
    expect(() => new Reader(input).taggedFields(() => visits++)).toThrow(DecodeError);
    expect(visits).toBe(1000);
  });

  it('a tagged field larger than the bytes left is a DecodeError', () => {
    expect(() => new Reader(concat(uvarint(1), uvarint(0), uvarint(0xfffffff0))).taggedFields()).toThrow(DecodeError);
  });
});

describe('UUIDs', () => {
  // Kafka prints Uuid.toString() = Base64.getUrlEncoder().withoutPadding() of the 16 big-endian bytes.
  it.each([
    // Uuid.ZERO_UUID
    ['00000000-0000-0000-0000-000000000000', 'AAAAAAAAAAAAAAAAAAAAAA'],
    // new Uuid(0L, 1L), Kafka's METADATA_TOPIC_ID: 15 zero bytes = 20 'A'; 0x01 = 000000|01(0000) = 'A','Q'.
    ['00000000-0000-0000-0000-000000000001', 'AAAAAAAAAAAAAAAAAAAAAQ'],
    // new Uuid(-1L, -1L): 15 x 0xff = 20 '_' (63); 0xff = 111111|11(0000) = '_','w'.
    ['ffffffff-ffff-ffff-ffff-ffffffffffff', '_____________________w'],
    // new Uuid(0x0123456789abcdefL, 0xfedcba9876543210L), by hand in 24-bit groups:
    // 012345 -> A S N F, 6789ab -> Z 4 m r, cdeffe -> z e _ -, dcba98 -> 3 L q Y, 765432 -> d l Q y, 10 -> E A.
    ['01234567-89ab-cdef-fedc-ba9876543210', 'ASNFZ4mrze_-3LqYdlQyEA'],
    // fb ff bf = 111110|111111|111110|111111 = 62 63 62 63: '-_-_' in the URL-safe alphabet.
    ['fbffbffb-ffbf-fbff-bffb-ffbffbffbf00', '-_-_-_-_-_-_-_-_-_-_AA'],
  ])('%s prints as %s and parses back', (hex, base64) => {
    const u = uuidFromHex(hex);
    expect(uuidToBase64(u)).toBe(base64);
    expect(uuidToHex(u)).toBe(hex);
    expect(parseUuid(base64)).toEqual(u);
    expect(parseUuid(hex)).toEqual(u);
    expect(parseUuid(hex.replace(/-/g, '').toUpperCase())).toEqual(u);
    expect(parseUuid(`${base64}==`)).toEqual(u);
    const standard = base64.replace(/-/g, '+').replace(/_/g, '/');
    expect(parseUuid(standard)).toEqual(u);
    expect(parseUuid(`${standard}==`)).toEqual(u);
    expect(parseUuid(`  ${base64}\n`)).toEqual(u);
  });

  it('works on a subarray of a larger buffer', () => {
    const buf = concat(Uint8Array.of(9, 9), uuidFromHex('01234567-89ab-cdef-fedc-ba9876543210'), Uint8Array.of(9));
    const u = buf.subarray(2, 18);
    expect(uuidToBase64(u)).toBe('ASNFZ4mrze_-3LqYdlQyEA');
    expect(uuidToHex(u)).toBe('01234567-89ab-cdef-fedc-ba9876543210');
  });

  it.each([
    '',
    'AAAAAAAAAAAAAAAAAAAAA',
    'AAAAAAAAAAAAAAAAAAAAAAA',
    // Non-canonical last character (its low 4 bits must be zero).
    'AAAAAAAAAAAAAAAAAAAAAB',
    // Mixed alphabets.
    '-+AAAAAAAAAAAAAAAAAAAA',
    'AAAAAAAAAAAAAAAAAAAAAA=',
    '0123456789abcdef0123456789abcde',
    '0123456789abcdef0123456789abcdeg',
    '01234567-89ab-cdef-fedc-ba987654321',
    '0123456789ab-cdef-fedc-ba9876543210-',
  ])('parseUuid(%j) is null', (text) => {
    expect(parseUuid(text)).toBeNull();
  });

  it('zero and equality', () => {
    expect(isZeroUuid(ZERO_UUID)).toBe(true);
    expect(isZeroUuid(uuidFromHex('00000000000000000000000000000001'))).toBe(false);
    expect(uuidEquals(uuidFromHex('0123456789abcdeffedcba9876543210'), parseUuid('ASNFZ4mrze_-3LqYdlQyEA')!)).toBe(true);
    expect(uuidEquals(ZERO_UUID, uuidFromHex('00000000000000000000000000000001'))).toBe(false);
  });
});

describe('error names (the generated table: trunk-2026-08-errors.tsv)', () => {
  it.each([
    [0, 'NONE (0)'],
    [-1, 'UNKNOWN_SERVER_ERROR (-1)'],
    [1, 'OFFSET_OUT_OF_RANGE (1)'],
    [35, 'UNSUPPORTED_VERSION (35)'],
    [42, 'INVALID_REQUEST (42)'],
    [58, 'SASL_AUTHENTICATION_FAILED (58)'],
    [110, 'FENCED_MEMBER_EPOCH (110)'],
    [117, 'UNKNOWN_SUBSCRIPTION_ID (117)'],
    [133, 'SHARE_SESSION_LIMIT_REACHED (133)'],
    [136, 'CONTROLLER_ID_NOT_REGISTERED (136)'],
    [137, 'unknown error code (137)'],
    [-2, 'unknown error code (-2)'],
  ])('errorLabel(%i) = %s', (code, label) => {
    expect(errorLabel(code)).toBe(label);
  });

  it('codes run from -1 to 136 without holes, and names find their codes', () => {
    expect([...protocol().schemas.errors.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 138 }, (_, i) => i - 1));
    expect(protocol().errorCode('INVALID_REQUEST')).toBe(42);
  });
});
