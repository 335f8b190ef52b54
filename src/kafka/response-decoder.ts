/**
 * A response frame's head into a {@link KafkaResponse}: its correlation ID, the request it answers
 * (a response carries no API key: its layout is the request's, https://kafka.apache.org/protocol#protocol_messages),
 * its error codes, and of its body what the {@link BodyForm} reads. Each call answers with the
 * response, or with what the framer is to do first (a {@link HeadAnswer}).
 *
 * A response larger than the prefix kept whose only wanted fields are its ErrorCodes is scanned as
 * its bytes pass: {@link streaming} says so after decode, and the framer is then asked for STREAM.
 */
import { DecodeError } from './reader.js';
import { responseHeaderLength } from './headers.js';
import { ErrorScan, SCANNED, SCANNING, type ErrorScanPlan } from './schema/scan.js';
import { BodyError, bodyBreak, toleratedShortBody } from './bodies.js';
import { int, type Struct } from './fields.js';
import type { Protocol } from './protocol.js';
import { EMPTY_LIST } from '../base/lists.js';
import { NOT_A_FRAME, need, type HeadAnswer } from './framer.js';
import type { BodyForm } from './body-form.js';
import type { MemoEntry } from './json-memo.js';
import type { KafkaRequest, KafkaResponse } from './events.js';

/** Responses up to this size are kept whole at the first look (most are: error codes, heartbeats, metadata): decoding a prefix that proves too short costs more than the copy. */
const SMALL_RESPONSE = 1024;
/** A body prefix asked for when the first look cut the response header (its tagged fields). */
const BODY_HEAD = 256;

/** Is the answer a response, not an instruction to the framer? */
export function isResponse(r: KafkaResponse | HeadAnswer): r is KafkaResponse {
  return typeof r !== 'number';
}

export class ResponseDecoder {
  /** The scan of the response being streamed (its ErrorCodes past the prefix), or null. */
  private scan: ErrorScan | null = null;
  /** The scan such responses reuse, made at the first one. */
  private scanner: ErrorScan | null = null;

  constructor(
    private readonly p: Protocol,
    private readonly bodies: BodyForm,
  ) {}

  /** The last response decoded is larger than its prefix, and its ErrorCodes are scanned from the rest of its bytes (feed). */
  get streaming(): boolean {
    return this.scan !== null;
  }

  /**
   * The response whose first headLen bytes are head[at, at + headLen), of a `size`-byte frame (without
   * its int32 size), answering `request` (null: the capture missed it, and only the correlation ID is read).
   * `final`: no more of its bytes will come; decode what is there.
   */
  decode(head: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean, request: KafkaRequest | null): KafkaResponse | HeadAnswer {
    this.scan = null;
    // int32 CorrelationId: response header v0.
    if (headLen < 4) return NOT_A_FRAME;
    const correlationId = head.readInt32BE(at);
    let errorCode: number | null = null;
    let codes: readonly number[] = EMPTY_LIST;
    let body: Struct | null = null;
    let bodyComplete = true;
    let bodyError: string | null = null;
    let bodyTolerated: string | null = null;
    let leftover = 0;
    /** Where the body starts, once the response header is read. */
    let start = -1;
    let scanned = false;
    /** --bodies as JSON: the memo's entry for this body, when it holds the scan's result too. */
    let seen: MemoEntry | null = null;
    const end = at + headLen;
    const frameEnd = at + size;
    const bodies = this.bodies;
    const header = request?.header;
    const headerVersion = header === undefined ? null : this.p.responseHeaderVersion(header.apiKey, header.apiVersion);
    if (header !== undefined && headerVersion !== null && bodies.reads('response', header.apiKey, header.apiVersion)) {
      const { apiKey, apiVersion } = header;
      const max = bodies.maxPrefix;
      /** More bytes of this frame could still be asked for. */
      const canGrow = !final && headLen < size;
      // --bodies wants the whole frame (up to its cap) at once; the rules' fields usually fit the first look.
      if (bodies.whole && canGrow && headLen < max) return need(Math.min(size, max));
      if (canGrow && headLen < SMALL_RESPONSE) return need(Math.min(size, SMALL_RESPONSE));
      const plan = bodies.scanPlan(apiKey, apiVersion);
      try {
        start = at + responseHeaderLength(head, at, end, headerVersion, this.p);
        if (plan !== null && headLen === size) {
          // A body seen a moment ago has its JSON and its codes in the memo (the same bytes, the same scan).
          seen = bodies.remembered(apiKey, apiVersion, head, start, frameEnd);
          if (seen !== null) {
            scanned = true;
            errorCode = seen.errorCode;
            codes = seen.codes!;
          } else {
            // Read whole, and only its ErrorCodes wanted: the scan reads them, building nothing. A body it
            // does not accept goes on to the interpreter, which says what is wrong.
            const s = bodies.scanWhole(plan, head, start, frameEnd);
            if (s !== null) {
              scanned = true;
              errorCode = s.topErrorCode;
              codes = s.codes.length === 0 ? EMPTY_LIST : s.codes.slice();
            }
          }
        }
        const d = scanned ? null : bodies.decode('response', apiKey, apiVersion, head, start, end, frameEnd);
        if (d !== null && !d.complete && canGrow && headLen < max) return need(Math.min(size, max));
        if (d !== null) {
          body = d.body;
          bodyComplete = d.complete;
          codes = d.errorCodes;
          errorCode = int(d.body, 'ErrorCode') ?? null;
          if (d.fallback !== null) bodyTolerated = d.fallback;
          leftover = d.leftover;
          // Larger than the prefix kept: its ErrorCodes past the prefix are scanned as its bytes pass.
          if (!d.complete && !final && plan !== null) this.startScan(plan, head, start, end, frameEnd);
        }
      } catch (e) {
        // A response header cut by the first look: ask for the body's first bytes.
        if (e instanceof DecodeError && canGrow) return need(Math.min(size, max, BODY_HEAD));
        if (e instanceof BodyError) {
          // Every field read before the break is kept, its ErrorCodes counted.
          bodyError = bodyBreak(e, at - 4);
          bodyTolerated = toleratedShortBody(apiKey, apiVersion, e, frameEnd);
          body = e.value;
          codes = e.errorCodes.length === 0 ? EMPTY_LIST : e.errorCodes.slice();
          errorCode = int(e.value, 'ErrorCode') ?? null;
        } else if (!(e instanceof DecodeError)) throw e;
      }
    }
    const bodyJson = seen === null ? null : seen.json;
    const r: KafkaResponse = { frame, tsSec: 0, tsNsec: 0, size, correlationId, request, errorCode, errorCodes: codes, body, bodyComplete, bodyError, bodyJson, complete: false };
    if (bodyTolerated !== null) r.bodyTolerated = bodyTolerated;
    if (leftover > 0) r.bodyLeftover = leftover;
    if (seen === null && start >= 0) bodies.responseJson(r, head, start, end, frameEnd, scanned);
    return r;
  }

  /**
   * Starts the scan of a response the prefix does not hold whole, on the prefix buf[start, end) (the body
   * from its start; `frameEnd` where it ends), when the scan goes on past it. The prefix's codes, which
   * the interpreter read, stand unless the scan reads the whole body.
   */
  private startScan(plan: ErrorScanPlan, buf: Buffer, start: number, end: number, frameEnd: number): void {
    const scan = (this.scanner ??= new ErrorScan()).reset(plan, frameEnd - start);
    if (scan.feed(buf, start, end - start) === SCANNING) this.scan = scan;
  }

  /** The streamed response's next bytes. */
  feed(buf: Buffer, off: number, len: number): void {
    this.scan?.feed(buf, off, len);
  }

  /** Bytes of the streamed response are missing: its codes stay those of its prefix. */
  hole(): void {
    this.scan = null;
  }

  /** The response's last byte arrived (`complete`) or never will: the codes the scan read of the whole body replace the prefix's. */
  finish(r: KafkaResponse, complete: boolean): void {
    const scan = this.scan;
    this.scan = null;
    if (scan !== null && complete && scan.finish() === SCANNED) r.errorCodes = scan.codes.length === 0 ? EMPTY_LIST : scan.codes;
  }
}
