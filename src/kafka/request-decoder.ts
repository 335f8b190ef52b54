/**
 * A request frame's head into a {@link KafkaRequest}: its header (https://kafka.apache.org/protocol#protocol_messages),
 * and of its body what the {@link BodyForm} reads. Each call answers with the request, or with what
 * the framer is to do first (a {@link HeadAnswer}: a longer prefix, or not a frame).
 */
import { DecodeError } from './reader.js';
import { decodeRequestHeader } from './headers.js';
import { BodyError, bodyBreak } from './bodies.js';
import { int } from './fields.js';
import { API_KEY, type Protocol } from './protocol.js';
import { keptTelemetryPrefix, pushTelemetryMetrics, pushTelemetryMetricsSize } from './telemetry-frame.js';
import { NOT_A_FRAME, need, type HeadAnswer } from './framer.js';
import type { BodyForm } from './body-form.js';
import type { KafkaRequest } from './events.js';
import type { RequestHeader } from './types.js';
import type { Struct } from './fields.js';

/** A prefix that proves too short is asked for again this many times as long (up to the frame and the cap). */
export const GROWTH = 4;
/** The highest version kcid believes of an API it does not know: beyond it the header is taken for noise. */
const MAX_UNKNOWN_VERSION = 200;

/** Where a decoder's notes about a frame go (the conversation, which dates them). */
export interface RequestNotes {
  requestNote(kind: 'unknown-api' | 'removed-version' | 'malformed-body', frame: number, header: RequestHeader, message: string): void;
}

/** Is the answer a request, not an instruction to the framer? */
export function isRequest(r: KafkaRequest | HeadAnswer): r is KafkaRequest {
  return typeof r !== 'number';
}

export class RequestDecoder {
  /** How request headers are read; lastInstanceId is the last request's ID, which an equal one reuses. */
  private readonly headerOptions: { inferNewerVersions: true; protocol: Protocol; lastInstanceId: Uint8Array | null };

  constructor(
    private readonly p: Protocol,
    private readonly bodies: BodyForm,
    /** KafkaOptions.keepTelemetryBytes: PushTelemetry frames up to this size are kept whole. */
    private readonly keepTelemetryBytes: number,
    private readonly notes: RequestNotes,
  ) {
    this.headerOptions = { inferNewerVersions: true, protocol: p, lastInstanceId: null };
  }

  /**
   * The request whose first headLen bytes are head[at, at + headLen), of a `size`-byte frame (without
   * its int32 size). `final`: no more of its bytes will come; decode what is there.
   */
  decode(head: Buffer, at: number, headLen: number, size: number, frame: number, final: boolean): KafkaRequest | HeadAnswer {
    // int16 ApiKey, int16 ApiVersion, int32 CorrelationId: request header v0, the least there is.
    if (headLen < 8) return NOT_A_FRAME;
    const p = this.p;
    const bodies = this.bodies;
    const apiKey = head.readInt16BE(at);
    const apiVersion = head.readInt16BE(at + 2);
    const known = p.isDefined(apiKey, apiVersion);
    const whole = headLen === size;
    const max = bodies.maxPrefix;
    /** More bytes of this frame could still be asked for. */
    const canGrow = !final && headLen < size && headLen < max;
    let header: RequestHeader;
    try {
      // A version newer than the schemas is read with its API's newest header when the API is flexible
      // from some version on (Kafka never makes a flexible API inflexible again), so its tag 0 is still seen.
      header = decodeRequestHeader(head, at, at + headLen, whole, this.headerOptions);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      // A ClientId or tagged fields longer than the first look.
      if (!whole && headLen < max) return need(Math.min(size, headLen * GROWTH, max));
      return NOT_A_FRAME;
    }
    // An API kcid does not know (newer than its schemas) is kept if its header looks sane.
    if (!known && (apiKey < 0 || apiVersion < 0 || apiVersion > MAX_UNKNOWN_VERSION || header.correlationId < 0)) return NOT_A_FRAME;
    const kept = known ? keptTelemetryPrefix(apiKey, headLen, size, this.keepTelemetryBytes) : null;
    if (kept !== null && !final && kept > headLen) return need(kept);
    const reads = known && bodies.reads('request', apiKey, apiVersion);
    // --bodies wants the whole frame (up to its cap) at once; the rules' few fields usually fit the first look.
    if (kept === null && reads && bodies.whole && canGrow) return need(Math.min(size, max));
    const bodyAt = at + header.headerLength;
    const end = at + headLen;
    const frameEnd = at + size;
    let body: Struct | null = null;
    let bodyComplete = true;
    let bodyError: string | null = null;
    if (reads) {
      try {
        const d = bodies.decode('request', apiKey, apiVersion, head, bodyAt, end, frameEnd);
        if (d !== null && !d.complete && canGrow) return need(Math.min(size, max, headLen * GROWTH));
        if (d !== null) {
          body = d.body;
          bodyComplete = d.complete;
        }
      } catch (e) {
        if (!(e instanceof BodyError)) throw e;
        bodyError = bodyBreak(e, at - 4);
        // Every field read before the break is kept (the rules' fields among them, when they came first).
        body = e.value;
      }
    }
    if (header.clientInstanceId !== null) this.headerOptions.lastInstanceId = header.clientInstanceId;
    const r: KafkaRequest = {
      frame,
      tsSec: 0,
      tsNsec: 0,
      size,
      header,
      body,
      bodyComplete,
      bodyError,
      bodyJson: null,
      metricsBlob: kept !== null && whole && body !== null ? pushTelemetryMetrics(head, bodyAt, end, apiVersion) : null,
      metricsBytes: apiKey === API_KEY.PushTelemetry && body !== null ? pushTelemetryMetricsSize(head, bodyAt, end, frameEnd, apiVersion) : null,
      // acks=0: the broker sends no response.
      expectsResponse: !(apiKey === API_KEY.Produce && int(body, 'Acks') === 0),
      complete: false,
    };
    if (reads) bodies.requestJson(r, head, bodyAt, end, frameEnd);
    if (!known) {
      this.notes.requestNote('unknown-api', frame, header,
        p.api(apiKey) === undefined
          ? `request with API key ${apiKey} unknown to kcid (version ${apiVersion})`
          : `request for ${p.name(apiKey)} v${apiVersion}, a version the schemas do not define (${p.name(apiKey)} ${definedRange(p, apiKey)})`);
    } else if (!p.isValid(apiKey, apiVersion)) {
      const api = p.api(apiKey)!;
      const removed = api.removed !== null && apiVersion >= api.removed.versions.lo && apiVersion <= api.removed.versions.hi ? `, removed in Kafka ${api.removed.release}` : '';
      this.notes.requestNote('removed-version', frame, header,
        `${p.label(apiKey, apiVersion)} is not a version current Kafka accepts${removed} (it accepts ${p.name(apiKey)} ${p.validRange(apiKey)})`);
    }
    if (bodyError !== null) this.notes.requestNote('malformed-body', frame, header, bodyError);
    return r;
  }
}

/** "3-13": the versions the schemas define for an API (its current ones and those Kafka removed). */
function definedRange(p: Protocol, key: number): string {
  const d = p.api(key)!.definedVersions;
  return d.lo === d.hi ? `${d.lo}` : `${d.lo}-${d.hi}`;
}
