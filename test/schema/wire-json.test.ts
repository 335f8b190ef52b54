/**
 * schema/wire-json.ts and secrets.ts's writeBodyJson against the old path (the interpreter's full
 * decode, then bodyJson, then UTF-8): for every API, every defined version, request and response, on
 * bodies written by test/schema/encoder.ts (plain and hostile values), cut at every length, and with
 * bits flipped, and on every body of the recorded fixtures and the public captures (TCP flows in
 * sequence order, frames paired by correlation ID). The writer may decline a body (false, nothing written) but never takes one the
 * interpreter refuses, and the bytes it writes are the old path's, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { ByteText } from '../../src/base/byte-text.js';
import { BodyError, decodeBody } from '../../src/kafka/bodies.js';
import { API_KEY, protocol } from '../../src/kafka/protocol.js';
import { bodyJson, HIDDEN, masksByValue, writeBodyJson } from '../../src/kafka/secrets.js';
import { layoutFor, type MessageSchema } from '../../src/kafka/schema/model.js';
import { resolveSchemas } from '../../src/kafka/schema/registry.js';
import { wireJsonWriter } from '../../src/kafka/schema/wire-json.js';
import { toKafkaJson } from '../../src/kafka/schema/json.js';
import { jsonString } from '../../src/base/json-text.js';
import { compileDecoder, runDecoder } from '../../src/kafka/schema/interpreter.js';
import { Out, randomMessage, rng } from './encoder.js';
import { compactArray, compactString, concat, int16, int32, int64, int8, taggedFields, uvarint } from '../builder/kafka.js';
import { readCapture } from '../../src/capture/index.js';
import { decodeTcp } from '../../src/net/decode.js';
import { newNetStats, newTcpSegment, TcpFlag } from '../../src/net/types.js';
import { decodeRequestHeader, decodeResponseHeader } from '../../src/kafka/schema/interpreter.js';
import { fixtureCaptures, HAVE_SHARED, sharedCaptures, type Capture } from '../real/captures.js';
import { NO_SHARED, skipUnless } from '../helpers.js';

const p = protocol();
type Kind = 'request' | 'response';

/** The old path's bytes, or null when decodeBody refuses the body (or does not decode it). */
function oldBytes(kind: Kind, key: number, version: number, buf: Uint8Array, start: number, end: number): Buffer | null {
  let d;
  try {
    d = decodeBody(kind, key, version, true, buf, start, end, end, p);
  } catch (e) {
    if (e instanceof BodyError) return null;
    throw e;
  }
  if (d === null || !d.complete) return null;
  return Buffer.from(bodyJson(kind, key, version, d.body, p), 'utf8');
}

/** Writes the body after a prefix into a small ByteText (so it grows), checks the contract, returns whether it was taken. */
function check(kind: Kind, key: number, version: number, buf: Uint8Array, start = 0, end = buf.length): boolean {
  const out = new ByteText(1);
  out.ascii('>');
  const ok = writeBodyJson(kind, key, version, buf, start, end, out, p);
  const want = oldBytes(kind, key, version, buf, start, end);
  const label = `${p.label(key, version)} ${kind} [${start}, ${end})`;
  if (masksByValue(kind, key)) {
    // Hidden by their values (IsSensitive, a config's name, a quoted token): bodyJson writes them, never the fast path.
    expect(ok, label).toBe(false);
    expect(out.pos, label).toBe(1);
    return want !== null;
  }
  if (!ok) {
    expect(out.pos, label).toBe(1);
    return false;
  }
  expect(want, `${label}: taken, but the interpreter refuses it`).not.toBeNull();
  const got = Buffer.from(out.buf.subarray(1, out.pos));
  if (!got.equals(want!)) expect(got.toString('utf8'), label).toBe(want!.toString('utf8'));
  expect(got.equals(want!), `${label}: the same text, other bytes`).toBe(true);
  expect(out.buf[0]).toBe(0x3e);
  return true;
}

function versions(key: number): number[] {
  const api = p.api(key)!;
  const out: number[] = [];
  for (let v = api.definedVersions.lo; v <= Math.min(api.definedVersions.hi, 0x7ffe); v++) if (p.isDefined(key, v)) out.push(v);
  return out;
}

const message = (kind: Kind, key: number): MessageSchema => (kind === 'request' ? p.api(key)!.request : p.api(key)!.response);

describe('every API, every version, request and response: the old path\'s bytes', () => {
  for (const api of p.apis) {
    it(`${api.key} ${api.name}`, () => {
      let taken = 0;
      for (const v of versions(api.key)) {
        for (const kind of ['request', 'response'] as const) {
          for (let seed = 1; seed <= 8; seed++) {
            const { bytes } = randomMessage(message(kind, api.key), v, seed * 7717 + v * 31 + (kind === 'request' ? 0 : 3), { wild: seed > 2 });
            expect(check(kind, api.key, v, bytes), `${api.name} v${v} ${kind} seed ${seed}`).toBe(true);
            taken++;
          }
        }
      }
      expect(taken).toBeGreaterThan(0);
    });
  }
});

describe('cut and corrupted bodies', () => {
  it('every prefix of some bodies of every API: taken only when the interpreter reads it whole, then the same bytes', () => {
    let taken = 0;
    let declined = 0;
    for (const api of p.apis) {
      const vs = versions(api.key);
      for (const v of [vs[0]!, vs[vs.length - 1]!]) {
        for (const kind of ['request', 'response'] as const) {
          const { bytes } = randomMessage(message(kind, api.key), v, api.key * 13 + v, { wild: true });
          for (let n = 0; n <= bytes.length; n++) {
            if (check(kind, api.key, v, bytes, 0, n)) taken++;
            else declined++;
          }
        }
      }
    }
    expect(taken).toBeGreaterThan(100);
    expect(declined).toBeGreaterThan(1000);
  });

  it('bit-flipped bodies of every API and version: taken exactly when the interpreter decodes them', () => {
    const r = rng(42);
    let taken = 0;
    let refused = 0;
    for (const api of p.apis) {
      for (const v of versions(api.key)) {
        for (const kind of ['request', 'response'] as const) {
          const { bytes } = randomMessage(message(kind, api.key), v, api.key * 101 + v * 7 + (kind === 'request' ? 1 : 2), { wild: true });
          for (let k = 0; k < 6 && bytes.length > 0; k++) {
            const bad = bytes.slice();
            const flips = 1 + Math.floor(r() * 3);
            for (let j = 0; j < flips; j++) bad[Math.floor(r() * bad.length)]! ^= 1 << Math.floor(r() * 8);
            const ok = check(kind, api.key, v, bad);
            // Same strictness: what the interpreter reads whole, the writer takes.
            expect(ok, `${api.name} v${v} ${kind} flip ${k}`).toBe(oldBytes(kind, api.key, v, bad, 0, bad.length) !== null);
            if (ok) taken++;
            else refused++;
          }
        }
      }
    }
    expect(taken).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(500);
  });

  it('random bytes as bodies of every API and version: taken exactly when the interpreter decodes them', () => {
    const r = rng(99);
    let taken = 0;
    for (const api of p.apis) {
      for (const v of versions(api.key)) {
        for (const kind of ['request', 'response'] as const) {
          for (let k = 0; k < 4; k++) {
            // Mostly small bytes, so that counts and lengths are often plausible.
            const bytes = Uint8Array.from({ length: Math.floor(r() * 48) }, () => (r() < 0.7 ? Math.floor(r() * 4) : Math.floor(r() * 256)));
            const ok = check(kind, api.key, v, bytes);
            expect(ok, `${api.name} v${v} ${kind}`).toBe(oldBytes(kind, api.key, v, bytes, 0, bytes.length) !== null);
            if (ok) taken++;
          }
        }
      }
    }
    expect(taken).toBeGreaterThan(100);
  });

  it('hand-made malformed bodies: refused where the interpreter refuses them', () => {
    const av = (name: Uint8Array, tags = taggedFields()) => concat(name, compactString('1.0'), tags);
    const long = (n: number) => concat(uvarint(n + 1), new Uint8Array(n).fill(0x61));
    const cases: [string, Kind, number, number, Uint8Array, boolean][] = [
      ['a string of 32767 bytes', 'request', API_KEY.ApiVersions, 3, av(long(32767)), true],
      ['a string of 32768 bytes', 'request', API_KEY.ApiVersions, 3, av(long(32768)), false],
      ['a string length overrunning the frame', 'request', API_KEY.ApiVersions, 3, concat(uvarint(9), new Uint8Array(3)), false],
      ['a varint of 6 bytes', 'request', API_KEY.ApiVersions, 3, av(Uint8Array.of(0x81, 0x80, 0x80, 0x80, 0x80, 0x00)), false],
      ['a varint of 5 bytes', 'request', API_KEY.ApiVersions, 3, av(Uint8Array.of(0x82, 0x80, 0x80, 0x80, 0x00, 0x61)), true],
      ['an unknown tag', 'request', API_KEY.ApiVersions, 3, av(compactString('x'), taggedFields([{ tag: 9, bytes: new Uint8Array(3) }])), true],
      ['an unknown tag overrunning the frame', 'request', API_KEY.ApiVersions, 3, concat(av(compactString('x')).subarray(0, -1), Uint8Array.of(1, 9, 5, 0)), false],
      ['tags out of order', 'request', API_KEY.ApiVersions, 3, av(compactString('x'), taggedFields([{ tag: 9, bytes: new Uint8Array(1) }, { tag: 8, bytes: new Uint8Array(1) }])), false],
      ['a tag twice', 'request', API_KEY.ApiVersions, 3, av(compactString('x'), taggedFields([{ tag: 9, bytes: new Uint8Array(1) }, { tag: 9, bytes: new Uint8Array(1) }])), false],
      ['a tag count larger than the bytes left', 'request', API_KEY.ApiVersions, 3, concat(av(compactString('x')).subarray(0, -1), Uint8Array.of(4, 9, 0)), false],
      ['a null that is not nullable', 'request', API_KEY.ApiVersions, 3, av(compactString(null)), false],
      ['a classic string length of -2', 'request', API_KEY.Heartbeat, 3, concat(int16(-2), int32(0), int16(0), int16(-1)), false],
      ['a classic nullable string, null', 'request', API_KEY.Heartbeat, 3, concat(int16(1), Uint8Array.of(0x67), int32(0), int16(1), Uint8Array.of(0x6d), int16(-1)), true],
      ['an array count larger than the bytes left', 'request', API_KEY.Metadata, 12, concat(uvarint(5), new Uint8Array(3)), false],
      ['a classic array count of -2', 'request', API_KEY.Metadata, 1, int32(-2), false],
      ['a classic array count of -1 (null, not nullable in v0)', 'request', API_KEY.Metadata, 0, int32(-1), false],
      ['a classic array count of -1 (null, nullable in v1)', 'request', API_KEY.Metadata, 1, int32(-1), true],
    ];
    // ApiVersions v3 response, tag 1 FinalizedFeaturesEpoch (int64): its size must be what it reads.
    const epoch = (size: number) => concat(int16(0), compactArray([], int8), int32(0), taggedFields([{ tag: 1, bytes: new Uint8Array(size).fill(1) }]));
    cases.push(['a known tag of its size', 'response', API_KEY.ApiVersions, 3, epoch(8), true]);
    cases.push(['a known tag larger than its value', 'response', API_KEY.ApiVersions, 3, epoch(9), false]);
    cases.push(['a known tag smaller than its value', 'response', API_KEY.ApiVersions, 3, epoch(7), false]);
    for (const [what, kind, key, v, body, ok] of cases) {
      expect(oldBytes(kind, key, v, body, 0, body.length) !== null, `the interpreter: ${what}`).toBe(ok);
      expect(check(kind, key, v, body), what).toBe(ok);
    }
  });

  it('a body inside a larger buffer, with bytes after it (Kafka ignores trailing bytes)', () => {
    const { bytes } = randomMessage(message('response', API_KEY.Metadata), 12, 5, { wild: true });
    const buf = concat(new Uint8Array([9, 9, 9]), bytes, new Uint8Array([1, 2, 3, 4]));
    expect(check('response', API_KEY.Metadata, 12, buf, 3, buf.length)).toBe(true);
    expect(check('response', API_KEY.Metadata, 12, buf, 3, 3 + bytes.length)).toBe(true);
  });

  it('declines what it cannot decode: unknown APIs and versions, bad ranges', () => {
    const out = new ByteText(8);
    const body = new Uint8Array(16);
    expect(writeBodyJson('request', 9999, 0, body, 0, 16, out, p)).toBe(false);
    expect(writeBodyJson('request', -1, 0, body, 0, 16, out, p)).toBe(false);
    expect(writeBodyJson('request', API_KEY.Heartbeat, 999, body, 0, 16, out, p)).toBe(false);
    expect(writeBodyJson('request', API_KEY.Heartbeat, 0x7fff, body, 0, 16, out, p)).toBe(false);
    expect(writeBodyJson('request', API_KEY.Heartbeat, 4, body, 4, 2, out, p)).toBe(false);
    expect(writeBodyJson('request', API_KEY.Heartbeat, 4, body, 0, 17, out, p)).toBe(false);
    expect(out.pos).toBe(0);
    // Nothing is kept for what the schemas do not define.
    const kept = p.jsonWriters as { request: (unknown[] | undefined)[] };
    expect(kept.request[9999]).toBeUndefined();
    expect(kept.request[API_KEY.Heartbeat]![999]).toBeUndefined();
    expect(kept.request[API_KEY.Heartbeat]![0x7fff]).toBeUndefined();
  });
});

/** Each TCP flow's bytes in sequence order, as far as they go without a hole (retransmitted bytes once). */
async function flowBytes(c: Capture): Promise<Map<string, { toKafka: boolean; peer: string; bytes: Buffer }>> {
  const seg = newTcpSegment();
  const stats = newNetStats();
  const flows = new Map<string, { toKafka: boolean; peer: string; next: number | null; broken: boolean; chunks: Buffer[] }>();
  await readCapture(c.file, {
    onPacket(pkt) {
      if (!decodeTcp(pkt, seg, stats)) return;
      const a = seg.data.toString('hex', seg.srcAddrOff, seg.srcAddrOff + (seg.ipVersion === 4 ? 4 : 16));
      const b = seg.data.toString('hex', seg.dstAddrOff, seg.dstAddrOff + (seg.ipVersion === 4 ? 4 : 16));
      const key = `${a}:${seg.srcPort}>${b}:${seg.dstPort}`;
      let f = flows.get(key);
      if (!f) flows.set(key, (f = { toKafka: c.ports.includes(seg.dstPort), peer: `${b}:${seg.dstPort}>${a}:${seg.srcPort}`, next: null, broken: false, chunks: [] }));
      const syn = (seg.flags & TcpFlag.SYN) !== 0;
      if (f.next === null) f.next = (seg.seq + (syn ? 1 : 0)) | 0;
      if (f.broken || seg.payloadLen === 0) return;
      const skip = (f.next - seg.seq) | 0;
      if (skip < 0 || seg.missingLen > 0) {
        f.broken = true;
        return;
      }
      if (skip >= seg.payloadLen) return;
      f.chunks.push(Buffer.from(seg.data.subarray(seg.payloadOff + skip, seg.payloadOff + seg.payloadLen)));
      f.next = (f.next + seg.payloadLen - skip) | 0;
    },
  });
  return new Map([...flows].map(([k, f]) => [k, { toKafka: f.toKafka, peer: f.peer, bytes: Buffer.concat(f.chunks) }]));
}

function* framesOf(b: Buffer): Generator<Buffer> {
  for (let at = 0; at + 4 <= b.length; ) {
    const n = b.readInt32BE(at);
    if (n < 0 || at + 4 + n > b.length) return;
    yield b.subarray(at + 4, at + 4 + n);
    at += 4 + n;
  }
}

describe('real bodies: the recorded fixtures and the public captures', () => {
  const captures = [...fixtureCaptures(), ...sharedCaptures()].filter((c) => !/tls/.test(c.name));
  for (const c of captures) {
    it(c.name, skipUnless(c.origin !== 'public' || HAVE_SHARED, NO_SHARED), async () => {
      let bodies = 0;
      const flows = await flowBytes(c);
      for (const flow of flows.values()) {
        if (!flow.toKafka) continue;
        const asked = new Map<number, [number, number]>();
        for (const fr of framesOf(flow.bytes)) {
          if (fr.length < 8) continue;
          const key = fr.readInt16BE(0);
          const version = fr.readInt16BE(2);
          const hv = p.requestHeaderVersion(key, version);
          if (hv === null) continue;
          let header;
          try {
            header = decodeRequestHeader(p.schemas, hv, fr, 0, fr.length);
          } catch {
            continue;
          }
          if (header === null) continue;
          asked.set(fr.readInt32BE(4), [key, version]);
          expect(check('request', key, version, fr, header.end, fr.length)).toBe(oldBytes('request', key, version, fr, header.end, fr.length) !== null);
          bodies++;
        }
        const back = flows.get(flow.peer);
        if (back === undefined) continue;
        for (const fr of framesOf(back.bytes)) {
          if (fr.length < 4) continue;
          const req = asked.get(fr.readInt32BE(0));
          if (req === undefined) continue;
          const hv = p.responseHeaderVersion(req[0], req[1]);
          if (hv === null) continue;
          let header;
          try {
            header = decodeResponseHeader(p.schemas, hv, fr, 0, fr.length);
          } catch {
            continue;
          }
          if (header === null) continue;
          expect(check('response', req[0], req[1], fr, header.end, fr.length)).toBe(oldBytes('response', req[0], req[1], fr, header.end, fr.length) !== null);
          bodies++;
        }
      }
      expect(bodies).toBeGreaterThan(0);
    });
  }
});

describe('what the text holds', () => {
  const write = (kind: Kind, key: number, v: number, body: Uint8Array): string => {
    const out = new ByteText(4);
    expect(writeBodyJson(kind, key, v, body, 0, body.length, out, p)).toBe(true);
    const text = out.buf.toString('utf8', 0, out.pos);
    expect(text).toBe(oldBytes(kind, key, v, body, 0, body.length)!.toString('utf8'));
    return text;
  };

  it('int64 exact at the edges of a double: near 2^53, where a digit plus its character code would round', () => {
    // InitProducerId v0 response: ThrottleTimeMs, ErrorCode, ProducerId (int64), ProducerEpoch.
    for (const id of [2n ** 53n - 1n, 2n ** 53n - 48n, 2n ** 53n, -(2n ** 53n - 1n), 2n ** 63n - 1n, -(2n ** 63n)]) {
      const text = write('response', API_KEY.InitProducerId, 0, concat(int32(0), int16(0), int64(id), int16(0)));
      expect(text).toContain(`"producerId":${id}`);
    }
  });

  it('strings escaped as jsonString escapes them, malformed UTF-8 as U+FFFD', () => {
    // ApiVersions v3 request: ClientSoftwareName, ClientSoftwareVersion, tags.
    const raw = (b: number[]) => concat(uvarint(b.length + 1), Uint8Array.from(b));
    const body = concat(raw([0x61, 0x22, 0x5c, 0x0a, 0x1b, 0x7f, 0xc2, 0x9b, 0xe2, 0x80, 0xa8, 0xef, 0xbb, 0xbf]), raw([0xff, 0xc3, 0xa9, 0xe2, 0x82, 0x41, 0xf0, 0x9d, 0x84, 0x9e, 0xed, 0xa0, 0x80]), taggedFields());
    expect(write('request', API_KEY.ApiVersions, 3, body)).toBe(
      '{"clientSoftwareName":"a\\"\\\\\\n\\u001b\\u007f\\u009b\\u2028\\ufeff","clientSoftwareVersion":"\ufffdé\ufffdA𝄞\ufffd\ufffd\ufffd"}',
    );
  });

  it('every 1- and 2-byte string, and 3- and 4-byte ones from every lead byte: the WHATWG decoder\'s text, escaped as jsonString escapes it', () => {
    // ApiVersions v3 request: ClientSoftwareName (compact string), ClientSoftwareVersion "1", no tags.
    const w = wireJsonWriter(message('request', API_KEY.ApiVersions), 3)!;
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    const body = new Uint8Array(16);
    const out = new ByteText(64);
    const r = rng(7);
    const wrong: string[] = [];
    let checked = 0;
    const one = (bytes: number[]): void => {
      body[0] = bytes.length + 1;
      body.set(bytes, 1);
      body.set([2, 0x31, 0], bytes.length + 1);
      out.pos = 0;
      const want = Buffer.from(`{"clientSoftwareName":${jsonString(decoder.decode(Uint8Array.from(bytes)))},"clientSoftwareVersion":"1"}`, 'utf8');
      if (!w(body, 0, bytes.length + 4, out) || !out.buf.subarray(0, out.pos).equals(want)) wrong.push(bytes.map((b) => b.toString(16)).join(' '));
      checked++;
    };
    for (let a = 0; a < 256; a++) {
      one([a]);
      for (let b = 0; b < 256; b++) one([a, b]);
      for (let k = 0; k < 400; k++) {
        const n = 3 + Math.floor(r() * 4);
        const bytes = [a];
        // Continuation bytes mostly (where the decoder's ranges are), any byte sometimes.
        for (let i = 1; i < n; i++) bytes.push(r() < 0.8 ? 0x80 + Math.floor(r() * 64) : Math.floor(r() * 256));
        one(bytes);
      }
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(checked).toBe(256 + 65536 + 256 * 400);
  });

  it('int64 beyond 2^53 exact, UUIDs in base64, null and empty arrays and strings', () => {
    // Heartbeat v4 request: GroupId, GenerationId, MemberId, GroupInstanceId (nullable), tags.
    const hb = concat(compactString(''), int32(-2147483648), compactString('m'), compactString(null), taggedFields());
    expect(write('request', API_KEY.Heartbeat, 4, hb)).toBe('{"groupId":"","generationId":-2147483648,"memberId":"m","groupInstanceId":null}');
    // InitProducerId v5 response: ThrottleTimeMs, ErrorCode, ProducerId, ProducerEpoch, tags.
    const o = new Out();
    o.int32(0);
    o.int16(0);
    o.int64(2n ** 53n + 1n);
    o.int16(-1);
    o.u8(0);
    expect(write('response', API_KEY.InitProducerId, 5, o.done())).toBe('{"throttleTimeMs":0,"errorCode":0,"producerId":9007199254740993,"producerEpoch":-1}');
    // Metadata v12 request: Topics (nullable) null, AllowAutoTopicCreation, IncludeTopicAuthorizedOperations, tags.
    expect(write('request', API_KEY.Metadata, 12, concat(uvarint(0), int8(1), int8(0), taggedFields()))).toBe('{"topics":null,"allowAutoTopicCreation":true,"includeTopicAuthorizedOperations":false}');
    const topic = concat(Uint8Array.from({ length: 16 }, (_, i) => i * 17), compactString(null), taggedFields());
    expect(write('request', API_KEY.Metadata, 12, concat(compactArray([topic], (x) => x), int8(0), int8(1), taggedFields()))).toBe(
      '{"topics":[{"topicId":"ABEiM0RVZneImaq7zN3u_w","name":null}],"allowAutoTopicCreation":false,"includeTopicAuthorizedOperations":true}',
    );
  });

  it('tagged fields in schema order where they come before untagged ones (FetchRequest v12 ClusterId)', () => {
    const m = message('request', API_KEY.Fetch);
    const layout = layoutFor(m, 12)!;
    expect(layout.fields[0]!.name).toBe('ClusterId');
    for (let seed = 1; seed <= 40; seed++) {
      const { bytes, value } = randomMessage(m, 12, seed, { wild: true });
      const text = write('request', API_KEY.Fetch, 12, bytes);
      expect(text.startsWith('{"clusterId":')).toBe('ClusterId' in value);
    }
  });

  it('hidden config values as "[hidden]", SASL tokens and salts as sizes: no secret reaches the bytes', () => {
    const PASSWORD = 'hunter2-keystore-password';
    const config = concat(compactString('ssl.keystore.password'), compactString(PASSWORD), taggedFields());
    const topic = concat(compactString('t'), int32(1), int16(1), compactArray([], int8), compactArray([config], (x) => x), taggedFields());
    const create = write('request', API_KEY.CreateTopics, 5, concat(compactArray([topic], (x) => x), int32(30000), int8(0), taggedFields()));
    expect(create).toContain(`"value":${JSON.stringify(HIDDEN)}`);
    expect(create).not.toContain(PASSWORD);
    const TOKEN = new TextEncoder().encode('SECRET-SASL-TOKEN-0123456789');
    const sasl = write('request', API_KEY.SaslAuthenticate, 2, concat(uvarint(TOKEN.length + 1), TOKEN, taggedFields()));
    expect(sasl).toBe(`{"authBytesSizeInBytes":${TOKEN.length}}`);
    const SALT = new TextEncoder().encode('SALT-SALT-SALT-SALT');
    const upsert = concat(compactString('alice'), int8(1), int32(4096), uvarint(SALT.length + 1), SALT, uvarint(SALT.length + 1), SALT, taggedFields());
    const scram = write('request', API_KEY.AlterUserScramCredentials, 0, concat(compactArray([], int8), compactArray([upsert], (x) => x), taggedFields()));
    expect(scram).not.toContain('SALT');
    expect(scram).toContain(`"saltSizeInBytes":${SALT.length}`);
  });

  it('an ApiVersions response with UNSUPPORTED_VERSION is read as the version sent, as Kafka\'s client reads it (v0 only when that fails)', () => {
    // ApiVersions v1: ErrorCode 35, ApiKeys [Produce 0-11], ThrottleTimeMs: a whole v1 body, so it is read as v1.
    const o = new Out();
    o.int16(35);
    o.int32(1);
    o.int16(0);
    o.int16(0);
    o.int16(11);
    o.int32(7);
    const text = write('response', API_KEY.ApiVersions, 1, o.done());
    expect(text).toBe('{"errorCode":35,"apiKeys":[{"apiKey":0,"minVersion":0,"maxVersion":11}],"throttleTimeMs":7}');
    const ok = new Out();
    ok.int16(0);
    ok.int32(0);
    ok.int32(7);
    expect(write('response', API_KEY.ApiVersions, 2, ok.done())).toBe('{"errorCode":0,"apiKeys":[],"throttleTimeMs":7}');
  });
});

describe('compiled from schemas a user may write', () => {
  it('every type of Kafka\'s schemas, classic and flexible, tagged structs and tags out of order', () => {
    // Tags contiguous from 0 as Kafka's generator requires (StructSpec), declared out of order: 3, 0, 2, 1.
    const types = ['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'varint', 'varlong', 'float64', 'string', 'bytes', 'records', 'uuid'];
    const fields = [
      { name: 'Early', type: 'int32', versions: '1+', taggedVersions: '1+', tag: 3 },
      ...types.map((t) => ({ name: `F${t}`, type: t, versions: '0+' })),
      ...['string', 'bytes', 'records'].map((t) => ({ name: `N${t}`, type: t, versions: '0+', nullableVersions: '0+' })),
      ...types.filter((t) => t !== 'records').map((t) => ({ name: `A${t}`, type: `[]${t}`, versions: '0+' })),
      { name: 'NullableStrings', type: '[]string', versions: '0+', nullableVersions: '0+' },
      { name: 'Common', type: 'Shared', versions: '0+' },
      { name: 'MaybeCommon', type: 'Shared', versions: '0+', nullableVersions: '0+' },
      { name: 'Structs', type: '[]Inline', versions: '0+', fields: [{ name: 'X', type: 'int32', versions: '0+' }, { name: 'Deep', type: '[]Shared', versions: '0+' }] },
      { name: 'OnlyV1', type: 'string', versions: '1+' },
      { name: 'Tagged', type: 'uuid', versions: '1+', taggedVersions: '1+', tag: 0 },
      { name: 'TaggedStruct', type: 'Shared', versions: '1+', taggedVersions: '1+', tag: 2 },
      { name: 'TaggedLow', type: 'varlong', versions: '1+', taggedVersions: '1+', tag: 1 },
      { name: 'ClassicString', type: 'string', versions: '0+', flexibleVersions: 'none' },
    ];
    const msg = (type: string) => ({
      apiKey: 1000,
      type,
      name: `AllTypes${type === 'request' ? 'Request' : 'Response'}`,
      validVersions: '0-1',
      flexibleVersions: '1+',
      fields,
      commonStructs: [{ name: 'Shared', versions: '0+', fields: [{ name: 'A', type: 'int64', versions: '0+' }, { name: 'T', type: 'int8', versions: '0+', taggedVersions: '0+', tag: 0 }, { name: 'B', type: 'string', versions: '0+', nullableVersions: '0+' }] }],
    });
    const header = (name: string) => ({ type: 'header', name, validVersions: '0', fields: [] });
    const t = resolveSchemas([msg('request'), msg('response'), header('RequestHeader'), header('ResponseHeader')], [], 'all types');
    const m = t.apis.get(1000)!.request;
    const replace = new Map([['Common.B', '"[hidden]"'], ['Astring', '"[list]"']]);
    for (let seed = 1; seed <= 150; seed++) {
      for (const v of [0, 1]) {
        const { bytes } = randomMessage(m, v, seed * 7 + v, { wild: seed % 3 !== 0 });
        const cut = seed % 5 === 0 ? bytes.subarray(0, Math.floor(bytes.length * ((seed % 7) / 7))) : bytes;
        for (const rep of [undefined, replace]) {
          const w = wireJsonWriter(m, v, rep)!;
          const out = new ByteText(2);
          const ok = w(cut, 0, cut.length, out);
          let want: string | null = null;
          try {
            want = toKafkaJson(runDecoder(compileDecoder(m, v)!, cut, 0, cut.length).value, m, v, { replace: rep });
          } catch (e) {
            if (!(e instanceof BodyError) && (e as Error).name !== 'BodyError') throw e;
          }
          expect(ok, `seed ${seed} v${v}`).toBe(want !== null);
          if (ok) expect(out.buf.toString('utf8', 0, out.pos)).toBe(want);
        }
      }
    }
  });

  it('keeps hostile field names as data in the generated code', () => {
    const a = '"]; globalThis.pwned = 1; //';
    const b = 'x\\\n\u2028`${globalThis.pwned = 2}`';
    const m0 = message('request', API_KEY.ApiVersions);
    const m: MessageSchema = { ...m0, layouts: m0.layouts.map((l) => ({ ...l, fields: l.fields.map((f, i) => (i < 2 ? { ...f, name: [a, b][i]!, jsonName: [a, b][i]! } : f)) })) };
    const body = concat(compactString('librdkafka'), compactString('2.0'), taggedFields());
    const out = new ByteText(8);
    expect(wireJsonWriter(m, 3)!(body, 0, body.length, out)).toBe(true);
    expect(out.buf.toString('utf8', 0, out.pos)).toBe('{"\\"]; globalThis.pwned = 1; //":"librdkafka","x\\\\\\n\\u2028`${globalThis.pwned = 2}`":"2.0"}');
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined();
  });
});
