/**
 * What becomes of request and response bodies: the `--bodies` choice, made once per analysis as one
 * of three strategies, which the request and response decoders ask instead of testing flags.
 *
 * - {@link RuleBodies} (no `--bodies`): only the fields the rules and reports read (bodies.ts's
 *   selection), from the first bytes of each frame; responses whose only wanted fields are their
 *   ErrorCodes are scanned (schema/scan.ts), building nothing.
 * - {@link ValueBodies} (`--bodies`, table): every field of every body decoded into a value, from the
 *   whole frame up to --max-body-bytes.
 * - {@link JsonBodies} (`--bodies --format ndjson`): every body written as JSON straight from the wire
 *   (secrets.ts writeBodyJson, Kafka's converter form, secrets hidden), with only the rules' fields
 *   decoded into a value, as without `--bodies`.
 *
 * One strategy object serves every conversation of an analysis (decoding is synchronous), so the
 * scratch it owns (the JSON slab, the memo of bodies seen a moment ago) is shared without being global.
 */
import { BodyError, decodeBody, errorScanFor, readsBody, type DecodedBody } from './bodies.js';
import { ErrorScan, SCANNED, type ErrorScanPlan } from './schema/scan.js';
import type { Protocol } from './protocol.js';
import type { KafkaRequest, KafkaResponse } from './events.js';
import { ByteArena, ByteText } from '../base/byte-text.js';
import { bodyJson as bodyJsonText, writeBodyJson } from './secrets.js';
import { BodyJsonMemo, type MemoEntry } from './json-memo.js';

export type BodyKind = 'request' | 'response';

/** The largest prefix of one frame kcid keeps without --bodies (headers with huge ClientIds or tags, and the bodies it reads). */
export const MAX_PREFIX = 64 * 1024;

/** What the error-code scan read of a response: its top-level ErrorCode and every code. */
interface ScanResult {
  errorCode: number | null;
  errorCodes: readonly number[];
}

export interface BodyForm {
  /** The most bytes of one frame kept (and handed to the decoders). */
  readonly maxPrefix: number;
  /** Every body is read whole at the first look (up to {@link maxPrefix}), not from its first bytes. */
  readonly whole: boolean;
  /** Does this form read anything of this body? */
  reads(kind: BodyKind, key: number, version: number): boolean;
  /** The body in buf[start, end) of a frame ending at frameEnd; null when nothing of it is read. Throws BodyError. */
  decode(kind: BodyKind, key: number, version: number, buf: Buffer, start: number, end: number, frameEnd: number): DecodedBody | null;
  /** The error-code scan of a response read whole, or null when it is decoded instead. */
  scanPlan(key: number, version: number): ErrorScanPlan | null;
  /**
   * Scans a response read whole, buf[start, end), by `plan` (from {@link scanPlan}): the scan, its
   * codes read, or null when it does not accept the body (the interpreter then says what is wrong).
   * The scan is reused by the next call.
   */
  scanWhole(plan: ErrorScanPlan, buf: Buffer, start: number, end: number): ErrorScan | null;
  /** A response body seen a moment ago whose memo entry holds the scan's result too, or null. */
  remembered(key: number, version: number, buf: Buffer, start: number, end: number): MemoEntry | null;
  /** Writes the request's JSON (its `body` is what the rules' fields read, or null), or does nothing. */
  requestJson(r: KafkaRequest, buf: Buffer, start: number, end: number, frameEnd: number): void;
  /** Writes the response's JSON (`scanned`: its error codes are the scan's, which the memo keeps with it), or does nothing. */
  responseJson(r: KafkaResponse, buf: Buffer, start: number, end: number, frameEnd: number, scanned: boolean): void;
}

/** The body form of KafkaOptions' maxBodyBytes and bodyForm. */
export function bodyForm(p: Protocol, maxBodyBytes: number | undefined, form: 'value' | 'json' | undefined): BodyForm {
  if (maxBodyBytes === undefined) return new RuleBodies(p);
  const maxPrefix = Math.max(maxBodyBytes, MAX_PREFIX);
  return form === 'json' ? new JsonBodies(p, maxPrefix) : new ValueBodies(p, maxPrefix);
}

/** No --bodies: what the rules read. */
class RuleBodies implements BodyForm {
  readonly maxPrefix = MAX_PREFIX;
  readonly whole: boolean = false;
  constructor(protected readonly p: Protocol) {}
  reads(kind: BodyKind, key: number, version: number): boolean {
    return readsBody(kind, key, version, false, this.p);
  }
  decode(kind: BodyKind, key: number, version: number, buf: Buffer, start: number, end: number, frameEnd: number): DecodedBody | null {
    return decodeBody(kind, key, version, false, buf, start, end, frameEnd, this.p);
  }
  scanPlan(key: number, version: number): ErrorScanPlan | null {
    return errorScanFor(key, version, this.p);
  }
  private readonly scan = new ErrorScan();
  scanWhole(plan: ErrorScanPlan, buf: Buffer, start: number, end: number): ErrorScan | null {
    const s = this.scan.reset(plan, end - start);
    s.feed(buf, start, end - start);
    return s.finish() === SCANNED ? s : null;
  }
  remembered(_key: number, _version: number, _buf: Buffer, _start: number, _end: number): MemoEntry | null {
    return null;
  }
  requestJson(_r: KafkaRequest, _buf: Buffer, _start: number, _end: number, _frameEnd: number): void {}
  responseJson(_r: KafkaResponse, _buf: Buffer, _start: number, _end: number, _frameEnd: number, _scanned: boolean): void {}
}

/** --bodies into values: every field of the whole frame (up to the cap). */
class ValueBodies implements BodyForm {
  readonly whole: boolean = true;
  constructor(
    private readonly p: Protocol,
    readonly maxPrefix: number,
  ) {}
  reads(kind: BodyKind, key: number, version: number): boolean {
    return readsBody(kind, key, version, true, this.p);
  }
  decode(kind: BodyKind, key: number, version: number, buf: Buffer, start: number, end: number, frameEnd: number): DecodedBody | null {
    return decodeBody(kind, key, version, true, buf, start, end, frameEnd, this.p);
  }
  /** Every field is decoded, so none is scanned. */
  scanPlan(): ErrorScanPlan | null {
    return null;
  }
  scanWhole(): ErrorScan | null {
    return null;
  }
  remembered(): MemoEntry | null {
    return null;
  }
  requestJson(): void {}
  responseJson(): void {}
}

/** --bodies as JSON written from the wire, with the rules' fields decoded as without --bodies. */
class JsonBodies extends RuleBodies {
  override readonly whole: boolean = true;
  /**
   * Where JSON is written: straight into the arena's slab, where it stays for its event
   * (ByteArena.begin/end), with no copy.
   */
  private readonly out = new ByteText(0);
  private readonly kept = new ByteArena();
  /** The JSON of bodies seen a moment ago, by their bytes (Kafka sends the same bodies again and again). */
  private readonly memo = new BodyJsonMemo();

  constructor(
    p: Protocol,
    override readonly maxPrefix: number,
  ) {
    super(p);
  }

  /** Every body is read (written as JSON), though only the rules' fields are decoded. */
  override reads(kind: BodyKind, key: number, version: number): boolean {
    return readsBody(kind, key, version, true, this.p);
  }

  override remembered(key: number, version: number, buf: Buffer, start: number, end: number): MemoEntry | null {
    const e = this.memo.find(this.p, true, key, version, buf, start, end);
    return e !== null && e.codes !== null ? e : null;
  }

  override requestJson(r: KafkaRequest, buf: Buffer, start: number, end: number, frameEnd: number): void {
    const { apiKey, apiVersion } = r.header;
    r.bodyJson = this.json(r, 'request', apiKey, apiVersion, buf, start, end, frameEnd, r.body, null);
  }

  override responseJson(r: KafkaResponse, buf: Buffer, start: number, end: number, frameEnd: number, scanned: boolean): void {
    const { apiKey, apiVersion } = r.request!.header;
    // A malformed response is written as null (not as its selected fields, as a request is).
    r.bodyJson = this.json(r, 'response', apiKey, apiVersion, buf, start, end, frameEnd, null, scanned ? r : null);
  }

  /**
   * The body in buf[start, end) (the frame ends at frameEnd) as JSON bytes, written from the wire. A
   * body that way does not take (cut by the prefix kept, or refused) is decoded into a value and written
   * from that, as far as the prefix goes (`r.bodyComplete` then says whether it went to the end); a
   * malformed one is written as every field read before the break.
   */
  private json(
    r: { bodyComplete: boolean },
    kind: BodyKind,
    key: number,
    version: number,
    buf: Buffer,
    start: number,
    end: number,
    frameEnd: number,
    selected: KafkaRequest['body'],
    scan: ScanResult | null,
  ): Uint8Array | null {
    const p = this.p;
    const out = this.out;
    this.kept.begin(out);
    const from = out.pos;
    r.bodyComplete = true;
    if (end === frameEnd) {
      const response = kind === 'response';
      // A response the scan read was looked up in the memo before the scan (ResponseDecoder).
      const seen = scan === null ? this.memo.find(p, response, key, version, buf, start, end) : null;
      if (seen !== null) return seen.json;
      if (writeBodyJson(kind, key, version, buf, start, end, out, p)) {
        const json = this.kept.end(out);
        this.memo.add(response, key, version, buf, start, end, json, scan?.errorCode ?? null, scan?.errorCodes ?? null);
        return json;
      }
    }
    let value = selected;
    try {
      const d = decodeBody(kind, key, version, true, buf, start, end, frameEnd, p);
      if (d !== null) {
        value = d.body;
        r.bodyComplete = d.complete;
      }
    } catch (e) {
      if (!(e instanceof BodyError)) throw e;
      // Every field read before the break, as the value form keeps it.
      value = e.value;
    }
    if (value === null) return null;
    out.pos = from; // what the fast path wrote before it declined, if anything, is written over
    out.utf8(bodyJsonText(kind, key, version, value, p));
    return this.kept.end(out);
  }
}
