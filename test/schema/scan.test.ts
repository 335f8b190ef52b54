/**
 * The error-code scan (src/kafka/schema/scan.ts) against the interpreter's tap, which it stands in for
 * in `kcid analyze`: every API's response at every defined version, written with random values by
 * test/schema/encoder.ts (independent of both). Whole and fed in pieces of every kind, the scan must
 * find exactly the interpreter's codes and top-level ErrorCode; and on cut or corrupted bodies it may
 * give up (the interpreter then says why), but it must never accept a body the interpreter refuses.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { BodyError, compileDecoder, runDecoder } from '../../src/kafka/schema/interpreter.js';
import { builtinSchemas } from '../../src/kafka/schema/registry.js';
import { ErrorScan, errorScanPlan, MALFORMED, SCANNED, SCANNING, UNCHECKED, type ErrorScanPlan } from '../../src/kafka/schema/scan.js';
import type { MessageSchema } from '../../src/kafka/schema/model.js';
import { randomMessage, rng } from './encoder.js';
import { concat, int16, int32, uvarint } from '../builder/kafka.js';

const schemas = builtinSchemas();
const TAP = { select: ['ErrorCode'], tapErrorCodes: true } as const;
const TAP_ONLY = { select: [], tapErrorCodes: true } as const;

interface Tapped {
  ok: boolean;
  top: number | null;
  codes: readonly number[];
}

/** What the interpreter's selective tap reads of these bytes (the whole body). */
function interpreter(m: MessageSchema, version: number, bytes: Uint8Array): Tapped {
  const hasTop = m.layouts.some((l) => l.fields.some((f) => f.name === 'ErrorCode' && !f.isArray && f.primitive === 'int16' && f.versions !== null && version >= f.versions.lo && version <= f.versions.hi && f.tag === null));
  const d = compileDecoder(m, version, hasTop ? TAP : TAP_ONLY)!;
  try {
    const r = runDecoder(d, bytes, 0, bytes.length);
    const top = r.value.ErrorCode;
    return { ok: r.complete, top: typeof top === 'number' ? top : null, codes: r.errorCodes ?? [] };
  } catch (e) {
    if (e instanceof BodyError) return { ok: false, top: null, codes: [] };
    throw e;
  }
}

function scanWhole(plan: ErrorScanPlan, bytes: Uint8Array): { status: number; top: number | null; codes: number[] } {
  const s = new ErrorScan().reset(plan, bytes.length);
  s.feed(bytes, 0, bytes.length);
  const status = s.finish();
  return { status, top: s.topErrorCode, codes: [...s.codes] };
}

/** The same bytes in pieces (sizes from `cuts`), each piece in a buffer of its own at an offset. */
function scanPieces(plan: ErrorScanPlan, bytes: Uint8Array, sizes: () => number): { status: number; top: number | null; codes: number[] } {
  const s = new ErrorScan().reset(plan, bytes.length);
  for (let at = 0; at < bytes.length; ) {
    const n = Math.min(bytes.length - at, sizes());
    const piece = new Uint8Array(n + 7);
    piece.set(bytes.subarray(at, at + n), 3);
    s.feed(piece, 3, n);
    at += n;
  }
  const status = s.finish();
  return { status, top: s.topErrorCode, codes: [...s.codes] };
}

let scanned = 0;
let unchecked = 0;

describe('the error-code scan finds what the interpreter taps', () => {
  afterAll(() => {
    // Most random bodies are scanned: the comparison is not vacuous.
    expect(scanned).toBeGreaterThan(4 * unchecked);
  });

  for (const api of schemas.apis.values()) {
    it(`${api.key} ${api.name} responses ${api.definedVersions.lo}-${api.definedVersions.hi}`, () => {
      for (let v = api.definedVersions.lo; v <= api.definedVersions.hi; v++) {
        const plan = errorScanPlan(api.response, v);
        if (plan === null) continue;
        for (const seed of [1, 2, 3, 4]) {
          const { bytes } = randomMessage(api.response, v, seed * 7919 + v * 31 + api.key);
          const want = interpreter(api.response, v, bytes);
          expect(want.ok).toBe(true);
          const whole = scanWhole(plan, bytes);
          // A tagged field the struct defines (the random writer sets some): the interpreter reads that body.
          if (whole.status === UNCHECKED) {
            unchecked++;
            continue;
          }
          scanned++;
          expect(whole).toEqual({ status: SCANNED, top: want.top, codes: [...want.codes] });
          // Pieces of one byte, of a few, and random ones.
          expect(scanPieces(plan, bytes, () => 1)).toEqual(whole);
          expect(scanPieces(plan, bytes, () => 3)).toEqual(whole);
          const r = rng(seed);
          expect(scanPieces(plan, bytes, () => 1 + Math.floor(r() * 40))).toEqual(whole);
          // Cut short: the scan cannot finish; corrupted: it may only accept what the interpreter accepts.
          if (bytes.length > 0) {
            const cut = bytes.subarray(0, Math.floor(r() * bytes.length));
            const c = scanWhole(plan, cut);
            if (c.status === SCANNED) expect(interpreter(api.response, v, cut)).toEqual({ ok: true, top: c.top, codes: c.codes });
            for (let k = 0; k < 8; k++) {
              const bad = new Uint8Array(bytes);
              bad[Math.floor(r() * bad.length)] ^= 1 << Math.floor(r() * 8);
              const b = scanWhole(plan, bad);
              if (b.status === SCANNED) expect(interpreter(api.response, v, bad)).toEqual({ ok: true, top: b.top, codes: b.codes });
            }
          }
        }
      }
    });
  }
});

describe('the error-code scan, by hand', () => {
  const produce = schemas.apis.get(0)!.response;
  // Produce v9 (flexible): Responses[Name, PartitionResponses[Index, ErrorCode, BaseOffset, LogAppendTimeMs,
  // LogStartOffset, RecordErrors[], ErrorMessage, tags], tags], ThrottleTimeMs, tags.
  const partition = (index: number, code: number): Uint8Array =>
    concat(int32(index), int16(code), new Uint8Array(8 + 8 + 8), uvarint(1), uvarint(0), uvarint(0));
  const body = concat(uvarint(2), uvarint(2), Buffer.from('t'), uvarint(4), partition(0, 0), partition(1, 6), partition(2, 75), uvarint(0), int32(0), uvarint(0));

  it('reads every partition ErrorCode of a Produce v9 response, and no top-level one', () => {
    expect(scanWhole(errorScanPlan(produce, 9)!, body)).toEqual({ status: SCANNED, top: null, codes: [6, 75] });
  });

  it('stops after the last field that holds an ErrorCode, as the interpreter does', () => {
    // ThrottleTimeMs and the tags after Responses are not read: a body cut there is whole enough.
    const noTail = body.subarray(0, body.length - 5);
    expect(scanWhole(errorScanPlan(produce, 9)!, noTail)).toEqual({ status: SCANNED, top: null, codes: [6, 75] });
  });

  it('an array count larger than the bytes left is malformed, as in Kafka', () => {
    const bad = concat(uvarint(1000), uvarint(2), Buffer.from('t'));
    expect(scanWhole(errorScanPlan(produce, 9)!, bad).status).toBe(MALFORMED);
  });

  it('tags out of order are malformed; a tag the struct defines is left to the interpreter', () => {
    const fetch = schemas.apis.get(1)!.response;
    const plan = errorScanPlan(fetch, 12)!;
    // Fetch v12: ThrottleTimeMs, ErrorCode, SessionId, Responses[Topic, Partitions[PartitionIndex, ErrorCode,
    // HighWatermark, LastStableOffset, LogStartOffset, tagged DivergingEpoch(0), CurrentLeader(1),
    // SnapshotId(2), AbortedTransactions, PreferredReadReplica, Records, tags], tags], tags.
    const part = (tags: Uint8Array): Uint8Array => concat(int32(0), int16(0), new Uint8Array(24), uvarint(1), int32(-1), uvarint(1), tags);
    const head = concat(int32(0), int16(0), int32(7), uvarint(2), uvarint(2), Buffer.from('t'), uvarint(2));
    const ok = concat(head, part(concat(uvarint(1), uvarint(9), uvarint(1), Uint8Array.of(0))), uvarint(0));
    expect(scanWhole(plan, ok)).toEqual({ status: SCANNED, top: 0, codes: [] });
    const defined = concat(head, part(concat(uvarint(1), uvarint(2), uvarint(1), Uint8Array.of(0))), uvarint(0));
    expect(scanWhole(plan, defined).status).toBe(UNCHECKED);
    const disordered = concat(head, part(concat(uvarint(2), uvarint(9), uvarint(0), uvarint(8), uvarint(0))), uvarint(0));
    expect(scanWhole(plan, disordered).status).toBe(MALFORMED);
  });

  it('a records field larger than the piece is skipped across pieces without being fed byte by byte', () => {
    const fetch = schemas.apis.get(1)!.response;
    const plan = errorScanPlan(fetch, 12)!;
    const records = 100_000;
    const head = concat(int32(0), int16(0), int32(7), uvarint(2), uvarint(2), Buffer.from('t'), uvarint(3));
    const part = (code: number): Uint8Array => concat(int32(0), int16(code), new Uint8Array(24), uvarint(1), int32(-1), uvarint(records + 1));
    const s = new ErrorScan().reset(plan, head.length + 2 * (part(0).length + records + 1) + 1);
    expect(s.feed(head, 0, head.length)).toBe(SCANNING);
    for (const code of [3, 0]) {
      const p = part(code);
      s.feed(p, 0, p.length);
      // The records: only a count, in two pieces whose bytes are never looked at.
      s.feed(new Uint8Array(records / 2), 0, records / 2);
      s.feed(new Uint8Array(records / 2), 0, records / 2);
      s.feed(uvarint(0), 0, 1); // the partition's tags
    }
    s.feed(uvarint(0), 0, 1); // the topic's tags
    expect([s.finish(), s.topErrorCode, s.codes]).toEqual([SCANNED, 0, [3]]);
  });
});
