/**
 * One TCP connection seen as a Kafka conversation: decides whether it is Kafka and which side is
 * the broker, frames both directions, decodes request headers and the bodies kcid needs, pairs
 * responses with requests by correlation ID, and follows SASL's headerless token exchange.
 */
import type { Direction, Endpoint, StreamHandler, TcpConnection } from '../tcp/types.js';
import { Framer, IMPLAUSIBLE, NEED_MORE, PLAUSIBLE, STREAM, type FrameSink, type Plausibility } from './framer.js';
import { DecodeError } from './reader.js';
import { decodeRequestHeader, responseHeaderLength } from './headers.js';
import { ErrorScan, SCANNED, SCANNING, type ErrorScanPlan } from './schema/scan.js';
import type { RequestHeader } from './types.js';
import { keptTelemetryPrefix, pushTelemetryMetrics, pushTelemetryMetricsSize } from './telemetry-frame.js';
import { BodyError, decodeBody, errorScanFor, readsBody, type DecodedBody } from './bodies.js';
import { int, str, type Struct } from './fields.js';
import { API_KEY, protocol, type Protocol } from './protocol.js';
import { EMPTY_LIST } from '../base/lists.js';
import { ByteArena, ByteText } from '../base/byte-text.js';
import { bodyJson as bodyJsonText, writeBodyJson } from './secrets.js';
import { BodyJsonMemo, type MemoEntry } from './json-memo.js';
import { KafkaProbe, plausibleRequest } from './detect.js';
import type { KafkaConnection, KafkaListener, KafkaRequest, KafkaResponse } from './events.js';
import { PendingRequests } from './pending.js';
import { responseStartsHere } from './resync.js';
import { SaslTokens } from './sasl.js';
import { RequestSink, ResponseSink, type FrameHandlers } from './sinks.js';
import { looksLikeTls } from '../tls/sniff.js';
import type { KeyLog } from '../tls/keylog.js';
import type { TlsSession, TlsSide } from '../tls/session.js';
import type { TlsInfo } from '../tls/types.js';
import { startTls, type PlaintextSink, type TlsLink, type TlsProbeOwner } from './tls-link.js';

export interface KafkaOptions {
  /** Ports whose connections are Kafka without detection. */
  kafkaPorts: ReadonlySet<number>;
  /** Detect Kafka on other ports from the client's first bytes. */
  detect: boolean;
  /** Frames larger than this mean the stream is out of sync (Kafka's socket.request.max.bytes). */
  maxFrameBytes: number;
  /** Requests awaiting a response kept per connection; the oldest is given up beyond this. */
  maxPendingRequests?: number;
  /** Broker ports learned from connections whose SYN the capture saw (shared by the factory's conversations). */
  learnedBrokerPorts?: Set<number>;
  /** The time of the packet being processed, kept by the caller: gaps are dated by the packet that revealed them. */
  clock?: { tsSec: number; tsNsec: number };
  /** TLS secrets (--tls-keylog, the capture's Decryption Secrets Blocks), or null when there are none. */
  tlsKeys?: KeyLog | null;
  /**
   * Keep PushTelemetry requests up to this many bytes whole and hand over their Metrics blob
   * (`KafkaRequest.metricsBlob`); 0 or absent: the blob is sized, never copied (telemetry-frame.ts).
   */
  keepTelemetryBytes?: number;
  /**
   * `kcid requests --bodies`: read every body, keeping up to this many bytes of each frame (a larger
   * frame is decoded as far as that goes), as {@link bodyForm} says. Absent: decode only what the rules read.
   */
  maxBodyBytes?: number;
  /**
   * With maxBodyBytes, what each body becomes: 'value' (the default), every field decoded into
   * `body`; 'json', its JSON written from the wire into `bodyJson` (Kafka's converter form, secrets
   * hidden), with only what the rules read decoded into `body`, as without maxBodyBytes.
   */
  bodyForm?: 'value' | 'json';
}

/** Bytes of each frame handed to the first decode attempt: enough for nearly every request header. */
const INITIAL_HEAD = 96;
/**
 * The same for responses: the correlation id, the header's tagged fields and a top-level ErrorCode
 * fit; the few bodies kcid reads ask for more. Copying no more than that matters on small frames.
 */
const INITIAL_RESPONSE_HEAD = 16;
/** The largest prefix of one frame kcid keeps (headers with huge ClientIds or tags, and the bodies it reads), without --bodies. */
const MAX_PREFIX = 64 * 1024;
/** A body prefix asked for first; a body that needs more asks again, four times as much, up to the cap. */
const BODY_HEAD = 256;
/** Responses up to this size are kept whole at the first look (most are: error codes, heartbeats, metadata). */
const SMALL_RESPONSE = 1024;
/** Smallest request: int16 key, int16 version, int32 correlation id (header v0). */
const MIN_REQUEST_BYTES = 8;
/** Smallest response: int32 correlation id. */
const MIN_RESPONSE_BYTES = 4;
const DEFAULT_MAX_PENDING = 1024;
/** The scan of responses read whole: one serves them all (decoding is synchronous). */
const WHOLE_SCAN = new ErrorScan();
/**
 * Where --bodies' JSON is written (decoding is synchronous): straight into JSON_KEPT's slab, where
 * it stays for its event (ByteArena.begin/end), with no copy.
 */
const JSON_OUT = new ByteText(0);
const JSON_KEPT = new ByteArena();
/** What the error-code scan read of a response: its top-level ErrorCode and every code. */
interface ScanResult {
  errorCode: number | null;
  codes: readonly number[];
}

/** The JSON of bodies seen a moment ago, by their bytes (Kafka sends the same bodies again and again). */
const JSON_MEMO = new BodyJsonMemo();

export class KafkaConversation implements StreamHandler, KafkaConnection, FrameHandlers, PlaintextSink, TlsProbeOwner {
  client: Endpoint;
  broker: Endpoint;
  readonly startSeen: boolean;
  listenerState: unknown = null;
  /** Direction of client → broker bytes in TCP terms (0 when side A is the client). */
  private clientDir: Direction = 0;
  private decided = false;
  private ignored = false;
  private probe: KafkaProbe | null = null;
  private requestFramer: Framer | null = null;
  private responseFramer: Framer | null = null;
  private readonly pending = new PendingRequests();
  private readonly maxPending: number;
  private readonly keepTelemetryBytes: number;
  private tsSec = 0;
  private tsNsec = 0;
  // Frame in progress, one per direction.
  private currentRequest: KafkaRequest | null = null;
  private currentRequestIsToken = false;
  private currentResponse: KafkaResponse | null = null;
  private currentResponseIsToken = false;
  /** A response larger than the prefix kept, whose ErrorCodes are scanned as its bytes pass (STREAM). */
  private responseScan: ErrorScan | null = null;
  /** The scan such responses reuse, made at the first one. */
  private streamScanner: ErrorScan | null = null;
  private readonly sasl = new SaslTokens();
  private firstClientByte = true;
  /** The connection is TLS: its bytes go through the session, whose plaintext comes back to the framers. */
  private tls: TlsSession | null = null;
  private tlsLink: TlsLink | null = null;
  /** How request headers are read; lastInstanceId is the last request's ID, which an equal one reuses. */
  private readonly headerOptions: { inferNewerVersions: true; protocol: Protocol; lastInstanceId: Uint8Array | null };
  private readonly protocol: Protocol;
  /** --bodies: every body is read whole (up to maxPrefix) and decoded, into a value or as JSON. */
  private readonly full: boolean;
  /** --bodies as JSON (KafkaOptions.bodyForm). */
  private readonly json: boolean;
  /** Every field decoded into `body`: --bodies as values. */
  private readonly decodeAll: boolean;
  private readonly maxPrefix: number;

  constructor(
    readonly tcp: TcpConnection,
    private readonly listener: KafkaListener,
    private readonly opts: KafkaOptions,
  ) {
    this.startSeen = tcp.synSeen;
    this.protocol = protocol();
    this.headerOptions = { inferNewerVersions: true, protocol: this.protocol, lastInstanceId: null };
    this.full = opts.maxBodyBytes !== undefined;
    this.json = this.full && opts.bodyForm === 'json';
    this.decodeAll = this.full && !this.json;
    this.maxPrefix = opts.maxBodyBytes === undefined ? MAX_PREFIX : Math.max(opts.maxBodyBytes, MAX_PREFIX);
    this.maxPending = opts.maxPendingRequests ?? DEFAULT_MAX_PENDING;
    this.keepTelemetryBytes = opts.keepTelemetryBytes ?? 0;
    this.client = tcp.a;
    this.broker = tcp.b;
    const aKafka = opts.kafkaPorts.has(tcp.a.port);
    const bKafka = opts.kafkaPorts.has(tcp.b.port);
    if (bKafka || (aKafka && tcp.synSeen)) {
      this.decide(0);
    } else if (aKafka) {
      this.decide(1);
    } else if (opts.detect && tcp.synSeen) {
      // The SYN decides, before any heuristic: its sender (side A) is the client; only its bytes can say Kafka.
      this.probe = new KafkaProbe(opts.maxFrameBytes, 0);
    } else if (opts.detect) {
      // A port already seen as a broker (the target of a SYN that carried Kafka) settles the roles of a
      // connection whose start the capture missed, where its first bytes could be a response.
      const learned = opts.learnedBrokerPorts;
      if (learned?.has(tcp.b.port) === true && !learned.has(tcp.a.port)) this.decide(0);
      else if (learned?.has(tcp.a.port) === true && !learned.has(tcp.b.port)) this.decide(1);
      else this.probe = new KafkaProbe(opts.maxFrameBytes);
    } else {
      this.ignore();
    }
  }

  // ---- StreamHandler -------------------------------------------------------------------------

  data(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    if (this.ignored) return;
    this.tsSec = tsSec;
    this.tsNsec = tsNsec;
    if (!this.decided) {
      // TLS on a port not known to be Kafka: the SYN was seen, so side A (direction 0) is the client.
      if (this.tls !== null) this.tls.data(dir === 0 ? 0 : 1, buf, off, len, frame, tsSec, tsNsec);
      else this.probeData(dir, buf, off, len, frame, tsSec, tsNsec);
      return;
    }
    if (dir === this.clientDir) {
      if (this.firstClientByte) {
        this.firstClientByte = false;
        if (this.startSeen && looksLikeTls(buf, off, len)) this.startTls(null);
      }
      if (this.tls !== null) this.tls.data(0, buf, off, len, frame, tsSec, tsNsec);
      else this.requests.data(buf, off, len, frame, tsSec, tsNsec);
    } else if (this.tls !== null) {
      this.tls.data(1, buf, off, len, frame, tsSec, tsNsec);
    } else {
      this.responses.data(buf, off, len, frame, tsSec, tsNsec);
    }
  }

  gap(dir: Direction, bytes: number, frame: number): void {
    if (this.ignored) return;
    const clock = this.opts.clock;
    if (clock !== undefined) {
      this.tsSec = clock.tsSec;
      this.tsNsec = clock.tsNsec;
    }
    if (!this.decided) {
      if (this.tls !== null) this.tls.gap(dir === 0 ? 0 : 1, bytes, frame);
      else if (!this.probe!.gap(dir, bytes, frame, this.tsSec, this.tsNsec)) this.ignore();
      return;
    }
    this.firstClientByte = false;
    const from = dir === this.clientDir ? 'client' : 'broker';
    this.listener.note(this, {
      kind: 'gap',
      frame,
      tsSec: this.tsSec,
      tsNsec: this.tsNsec,
      from,
      bytes,
      message: `${bytes} bytes from the ${from} are missing from the capture`,
    });
    this.saslLost();
    if (this.tls !== null) this.tls.gap(dir === this.clientDir ? 0 : 1, bytes, frame);
    else (dir === this.clientDir ? this.requests : this.responses).gap(bytes, frame);
  }

  end(reason: 'closed' | 'reset' | 'idle' | 'evicted' | 'capture-end'): void {
    if (this.ignored) return;
    this.tlsLink?.end(); // TLS still undecided on an unknown port: its port decides now
    if (!this.decided || this.ignored) return;
    this.requestFramer?.end(this.tsSec, this.tsNsec);
    this.responseFramer?.end(this.tsSec, this.tsNsec);
    for (let r = this.pending.removeOldest(); r !== undefined; r = this.pending.removeOldest()) this.listener.unanswered(this, r);
    this.listener.connectionEnd(this, reason);
  }

  private ignore(): void {
    this.ignored = true;
    this.probe = null;
    this.tcp.ignore();
  }

  // ---- TLS: the session hands back plaintext ---------------------------------------------------

  private startTls(owner: TlsProbeOwner | null): void {
    this.tlsLink = startTls(this, this.listener, this.opts.tlsKeys ?? null, owner);
    this.tls = this.tlsLink.session;
  }

  tlsIsKafka(): void {
    this.firstClientByte = false;
    this.decide(0);
  }

  tlsIsNotKafka(): void {
    this.ignore();
  }

  get brokerPortIsKafka(): boolean {
    return this.opts.learnedBrokerPorts?.has(this.tcp.b.port) === true;
  }

  get maxFrameBytes(): number {
    return this.opts.maxFrameBytes;
  }

  get tlsInfo(): TlsInfo | null {
    return this.tls?.info ?? null;
  }

  get now(): { tsSec: number; tsNsec: number } {
    return { tsSec: this.tsSec, tsNsec: this.tsNsec };
  }

  plaintext(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    (side === 0 ? this.requests : this.responses).data(buf, off, len, frame, tsSec, tsNsec);
  }

  plaintextGap(side: TlsSide, bytes: number, frame: number): void {
    (side === 0 ? this.requests : this.responses).gap(bytes, frame);
  }

  // ---- deciding roles --------------------------------------------------------------------------

  private decide(clientDir: Direction): void {
    this.decided = true;
    this.clientDir = clientDir;
    if (clientDir === 1) {
      this.client = this.tcp.b;
      this.broker = this.tcp.a;
    }
    if (this.startSeen) this.opts.learnedBrokerPorts?.add(this.broker.port);
    this.listener.connectionStart(this, this.tcp.firstFrame, this.tcp.firstTsSec, this.tcp.firstTsNsec);
  }

  // Framers are made when their direction first carries bytes: a connection that never does (a SYN
  // flood, a port check) costs none.
  private get requests(): Framer {
    return (this.requestFramer ??= this.framer(new RequestSink(this), INITIAL_HEAD, MIN_REQUEST_BYTES, this.sasl.clientActive, this.keepTelemetryBytes));
  }

  private get responses(): Framer {
    return (this.responseFramer ??= this.framer(new ResponseSink(this), INITIAL_RESPONSE_HEAD, MIN_RESPONSE_BYTES, this.sasl.serverActive));
  }

  private framer(sink: FrameSink, initialHead: number, minFrameBytes: number, tokens: boolean, keepBytes = 0): Framer {
    return new Framer(sink, {
      maxFrameBytes: this.opts.maxFrameBytes,
      initialHead,
      maxPrefixBytes: Math.max(this.maxPrefix, keepBytes),
      minFrameBytes: tokens ? 0 : minFrameBytes,
    });
  }

  /** Unknown port: the probe keeps the first bytes until one side plainly sends Kafka requests. */
  private probeData(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    const probe = this.probe!;
    if (dir === 0 && this.startSeen && probe.empty && looksLikeTls(buf, off, len)) {
      // The client starts a TLS handshake: decrypted (with keys), its plaintext says whether it is Kafka.
      this.probe = null;
      this.startTls(this);
      this.tls!.data(0, buf, off, len, frame, tsSec, tsNsec);
      return;
    }
    const kept = probe.data(dir, buf, off, len, frame, tsSec, tsNsec);
    const verdict = probe.verdict();
    if (verdict === 'not-kafka') this.ignore();
    if (typeof verdict === 'string') return;
    this.probe = null;
    this.decide(verdict.client);
    probe.replay(
      (d, bytes, f, s, ns) => this.data(d, bytes, 0, bytes.length, f, s, ns),
      (d, bytes, f) => this.gap(d, bytes, f),
    );
    // The probe may have kept only part of this segment.
    if (kept < len) this.data(dir, buf, off + kept, len - kept, frame, tsSec, tsNsec);
  }

  // ---- requests ----------------------------------------------------------------------------------

  plausibleRequestStart(buf: Buffer, off: number, len: number): Plausibility {
    return plausibleRequest(buf, off, len, false, this.opts.maxFrameBytes);
  }

  requestHead(head: Buffer, at: number, headLen: number, size: number, frame: number, final = false): number {
    this.currentRequest = null;
    this.currentRequestIsToken = false;
    if (this.sasl.clientActive) {
      const correlation = headLen >= 8 ? head.readInt32BE(at + 4) : -1;
      const verdict = (): Plausibility => plausibleRequest(withSize(head, at, headLen, size), 0, headLen + 4, true, this.opts.maxFrameBytes);
      if (this.sasl.clientFrameIsToken(verdict, correlation)) {
        this.currentRequestIsToken = true;
        return headLen;
      }
      this.tokenFraming();
    }
    if (headLen < 8) return -1;
    const p = this.protocol;
    const apiKey = head.readInt16BE(at);
    const apiVersion = head.readInt16BE(at + 2);
    const known = p.isDefined(apiKey, apiVersion);
    const whole = headLen === size;
    const max = this.maxPrefix;
    let header: RequestHeader;
    try {
      // A version newer than the schemas is read with its API's newest header when the API is flexible
      // from some version on (Kafka never makes a flexible API inflexible again), so its tag 0 is still seen.
      header = decodeRequestHeader(head, at, at + headLen, whole, this.headerOptions);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      if (!whole && headLen < max) return Math.min(size, headLen * 4, max);
      return -1;
    }
    if (!known) {
      // An API kcid does not know (newer than its schemas) is kept if its header looks sane.
      if (apiKey < 0 || apiVersion < 0 || apiVersion > 200 || header.correlationId < 0) return -1;
    }
    const kept = known ? keptTelemetryPrefix(apiKey, headLen, size, this.keepTelemetryBytes) : null;
    if (kept !== null && !final && kept > headLen) return kept;
    const reads = known && readsBody('request', apiKey, apiVersion, this.full, p);
    // --bodies wants the whole frame (up to its cap) at once; the rules' few fields usually fit the first look.
    if (kept === null && reads && this.full && !final && headLen < size && headLen < max) return Math.min(size, max);
    let body: Struct | null = null;
    let bodyComplete = true;
    let bodyError: string | null = null;
    let bodyJson: Uint8Array | null = null;
    if (reads) {
      const bodyAt = at + header.headerLength;
      try {
        const d = decodeBody('request', apiKey, apiVersion, this.decodeAll, head, bodyAt, at + headLen, at + size, p);
        if (d !== null && !d.complete && !final && headLen < size && headLen < max) return Math.min(size, max, headLen * 4);
        if (d !== null) {
          body = d.body;
          bodyComplete = d.complete;
        }
      } catch (e) {
        if (!(e instanceof BodyError)) throw e;
        bodyError = e.message;
        // --bodies: the fields the rules read may still parse (a body malformed only after them).
        if (this.decodeAll) body = this.selective('request', apiKey, apiVersion, head, bodyAt, at + headLen, at + size)?.body ?? null;
      }
      if (this.json) {
        bodyJson = this.jsonOf('request', apiKey, apiVersion, head, bodyAt, at + headLen, at + size, body);
        bodyComplete = this.jsonComplete;
      }
    }
    if (header.clientInstanceId !== null) this.headerOptions.lastInstanceId = header.clientInstanceId;
    this.currentRequest = {
      frame,
      tsSec: 0,
      tsNsec: 0,
      size,
      header,
      body,
      bodyComplete,
      bodyError,
      bodyJson,
      metricsBlob: kept !== null && headLen === size && body !== null ? pushTelemetryMetrics(head, at + header.headerLength, at + headLen, apiVersion) : null,
      metricsBytes: apiKey === API_KEY.PushTelemetry && body !== null ? pushTelemetryMetricsSize(head, at + header.headerLength, at + headLen, at + size, apiVersion) : null,
      // acks=0: the broker sends no response.
      expectsResponse: !(apiKey === API_KEY.Produce && int(body, 'Acks') === 0),
      complete: false,
    };
    if (!known) {
      this.requestNote('unknown-api', frame, header,
        p.api(apiKey) === undefined
          ? `request with API key ${apiKey} unknown to kcid (version ${apiVersion})`
          : `request for ${p.name(apiKey)} v${apiVersion}, a version the schemas do not define (${p.name(apiKey)} ${definedRange(p, apiKey)})`);
    } else if (!p.isValid(apiKey, apiVersion)) {
      const api = p.api(apiKey)!;
      const removed = api.removed !== null && apiVersion >= api.removed.versions.lo && apiVersion <= api.removed.versions.hi ? `, removed in Kafka ${api.removed.release}` : '';
      this.requestNote('removed-version', frame, header,
        `${p.label(apiKey, apiVersion)} is not a version current Kafka accepts${removed} (it accepts ${p.name(apiKey)} ${p.validRange(apiKey)})`);
    }
    if (bodyError !== null) this.requestNote('malformed-body', frame, header, bodyError);
    return headLen;
  }

  /** The fields the rules read, or null when they do not parse either. */
  private selective(kind: 'request' | 'response', key: number, version: number, head: Buffer, start: number, end: number, size: number): DecodedBody | null {
    try {
      return decodeBody(kind, key, version, false, head, start, end, size, this.protocol);
    } catch (e) {
      if (e instanceof BodyError) return null;
      throw e;
    }
  }

  /** Whether the body {@link jsonOf} last wrote was whole (false: decoded as far as the prefix kept goes). */
  private jsonComplete = true;

  /**
   * --bodies as JSON: the body in buf[start, end) (the frame ends at frameEnd) as JSON bytes, written
   * from the wire (secrets.ts writeBodyJson). A body that way does not take (cut by the prefix kept,
   * or refused) is decoded into a value and written from that, as --bodies always wrote it (as far as
   * the prefix goes); a malformed one is written as what the rules' fields read of it (`selected`), or null.
   */
  private jsonOf(
    kind: 'request' | 'response',
    key: number,
    version: number,
    buf: Buffer,
    start: number,
    end: number,
    frameEnd: number,
    selected: Struct | null,
    scan: ScanResult | null = null,
  ): Uint8Array | null {
    const p = this.protocol;
    const out = JSON_OUT;
    JSON_KEPT.begin(out);
    const from = out.pos;
    this.jsonComplete = true;
    // A whole body is written from the wire; one cut by the prefix kept, or that way does not take, from its value.
    if (end === frameEnd) {
      const response = kind === 'response';
      // A response the scan read was looked up in the memo before the scan (responseHead).
      const seen = scan === null ? JSON_MEMO.find(p, response, key, version, buf, start, end) : null;
      if (seen !== null) return seen.json;
      if (writeBodyJson(kind, key, version, buf, start, end, out, p)) {
        const json = JSON_KEPT.end(out);
        JSON_MEMO.add(response, key, version, buf, start, end, json, scan?.errorCode ?? null, scan?.codes ?? null);
        return json;
      }
    }
    let value = selected;
    try {
      const d = decodeBody(kind, key, version, true, buf, start, end, frameEnd, p);
      if (d !== null) {
        value = d.body;
        this.jsonComplete = d.complete;
      }
    } catch (e) {
      if (!(e instanceof BodyError)) throw e;
    }
    if (value === null) return null;
    out.pos = from; // what the fast path wrote before it declined, if anything, is written over
    out.utf8(bodyJsonText(kind, key, version, value, p));
    return JSON_KEPT.end(out);
  }

  private requestNote(kind: 'unknown-api' | 'removed-version' | 'malformed-body', frame: number, header: RequestHeader, message: string): void {
    this.listener.note(this, {
      kind,
      frame,
      tsSec: this.tsSec,
      tsNsec: this.tsNsec,
      from: 'client',
      bytes: 0,
      message,
      apiKey: header.apiKey,
      apiVersion: header.apiVersion,
      correlationId: header.correlationId,
    });
  }

  requestEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    if (this.currentRequestIsToken) {
      this.currentRequestIsToken = false;
      this.tokenFraming();
      return;
    }
    const r = this.currentRequest;
    if (r === null) return;
    this.currentRequest = null;
    r.frame = frame;
    r.tsSec = complete ? tsSec : this.tsSec;
    r.tsNsec = complete ? tsNsec : this.tsNsec;
    r.complete = complete;
    if (!complete) this.noteTruncated('client', frame, r.size);
    if (r.expectsResponse) {
      const correlation = r.header.correlationId;
      const previous = this.pending.delete(correlation);
      if (previous !== undefined) this.listener.unanswered(this, previous);
      this.pending.add(correlation, r);
      if (this.pending.size > this.maxPending) this.listener.unanswered(this, this.pending.removeOldest()!);
    }
    this.sasl.request(r.header.apiKey, r.header.correlationId, r.header.apiKey === API_KEY.SaslHandshake ? (str(r.body, 'Mechanism') ?? null) : null);
    this.listener.request(this, r);
  }

  // ---- responses ---------------------------------------------------------------------------------

  plausibleResponse(buf: Buffer, off: number, len: number, segmentStart: boolean): Plausibility {
    if (len < 8) return NEED_MORE;
    const size = buf.readInt32BE(off);
    if (size < 4 || size > this.opts.maxFrameBytes) return IMPLAUSIBLE;
    const request = this.pending.get(buf.readInt32BE(off + 4));
    if (request === undefined) return IMPLAUSIBLE;
    // A segment start is a likely boundary; elsewhere the response must decode as this request's.
    if (segmentStart) return PLAUSIBLE;
    return responseStartsHere(buf, off, len, size, request.header.apiKey, request.header.apiVersion);
  }

  responseHead(head: Buffer, at: number, headLen: number, size: number, frame: number, final = false): number {
    this.currentResponse = null;
    this.currentResponseIsToken = false;
    if (this.sasl.serverActive) {
      if (this.sasl.serverFrameIsToken(size)) {
        this.currentResponseIsToken = true;
        return headLen;
      }
      this.tokenFraming();
    }
    if (headLen < 4) return -1;
    const correlationId = head.readInt32BE(at);
    const request = this.pending.get(correlationId) ?? null;
    let errorCode: number | null = null;
    let codes: readonly number[] = EMPTY_LIST;
    let body: Struct | null = null;
    let bodyComplete = true;
    let bodyError: string | null = null;
    let bodyJson: Uint8Array | null = null;
    let want = headLen;
    if (request !== null) {
      const p = this.protocol;
      const { apiKey, apiVersion } = request.header;
      const headerVersion = p.responseHeaderVersion(apiKey, apiVersion);
      if (headerVersion !== null && readsBody('response', apiKey, apiVersion, this.full, p)) {
        const max = this.maxPrefix;
        // --bodies wants the whole frame (up to its cap) at once; the rules' fields usually fit the first look.
        if (this.full && !final && headLen < size && headLen < max) return Math.min(size, max);
        // A small response is read whole at once: decoding a prefix that proves too short costs more than the copy.
        if (!final && headLen < size && headLen < SMALL_RESPONSE) return Math.min(size, SMALL_RESPONSE);
        const scan = this.decodeAll ? null : errorScanFor(apiKey, apiVersion, p);
        let scanned = false;
        /** --bodies: the memo's entry for this body, when it holds the scan's result too. */
        let seen: MemoEntry | null = null;
        let start = -1;
        try {
          start = at + responseHeaderLength(head, at, at + headLen, headerVersion, p);
          if (scan !== null && headLen === size) {
            // --bodies: a body seen a moment ago has its JSON and its codes in the memo (the same bytes, the same scan).
            if (this.json) {
              const e = JSON_MEMO.find(p, true, apiKey, apiVersion, head, start, at + size);
              if (e !== null && e.codes !== null) seen = e;
            }
            if (seen !== null) {
              scanned = true;
              errorCode = seen.errorCode;
              codes = seen.codes!;
            } else {
              // Read whole, and only its ErrorCodes wanted: the scan reads them, building nothing. A body it
              // does not accept goes on to the interpreter, which says what is wrong.
              const s = WHOLE_SCAN.reset(scan, at + size - start);
              s.feed(head, start, at + size - start);
              if (s.finish() === SCANNED) {
                scanned = true;
                errorCode = s.topErrorCode;
                codes = s.codes.length === 0 ? EMPTY_LIST : s.codes.slice();
              }
            }
          }
          const d = scanned ? null : decodeBody('response', apiKey, apiVersion, this.decodeAll, head, start, at + headLen, at + size, p);
          if (d !== null && !d.complete && !final && headLen < size && headLen < max) return Math.min(size, max);
          if (d !== null) {
            body = d.body;
            bodyComplete = d.complete;
            codes = d.errorCodes;
            errorCode = int(d.body, 'ErrorCode') ?? null;
            // Larger than the prefix kept: its ErrorCodes past the prefix are scanned as its bytes pass.
            if (!d.complete && !final && scan !== null && this.streamScan(scan, head, start, at + headLen, at + size)) want = STREAM;
          }
        } catch (e) {
          // A response header cut by the first look: ask for the body's first bytes.
          if (e instanceof DecodeError && !final && headLen < size) return Math.min(size, max, BODY_HEAD);
          if (e instanceof BodyError) {
            bodyError = e.message;
            if (this.decodeAll) {
              const some = this.selective('response', apiKey, apiVersion, head, start, at + headLen, at + size);
              if (some !== null) {
                codes = some.errorCodes;
                errorCode = int(some.body, 'ErrorCode') ?? null;
              }
            }
          } else if (!(e instanceof DecodeError)) throw e;
        }
        // A malformed response is written as null (not as its selected fields, as a request is).
        if (seen !== null) bodyJson = seen.json;
        else if (this.json && start >= 0) {
          bodyJson = this.jsonOf('response', apiKey, apiVersion, head, start, at + headLen, at + size, null, scanned ? { errorCode, codes } : null);
          bodyComplete = this.jsonComplete;
        }
      }
    }
    this.currentResponse = { frame, tsSec: 0, tsNsec: 0, size, correlationId, request, errorCode, errorCodes: codes, body, bodyComplete, bodyError, bodyJson, complete: false };
    return want;
  }

  /**
   * Starts the scan of a response the prefix does not hold whole, on the prefix buf[start, end) (the body
   * from its start; `frameEnd` where it ends): true when it goes on, so the framer is to hand over the
   * rest (STREAM). The prefix's codes, which the interpreter read, stand unless the scan reads the whole body.
   */
  private streamScan(plan: ErrorScanPlan, buf: Buffer, start: number, end: number, frameEnd: number): boolean {
    const scan = (this.streamScanner ??= new ErrorScan()).reset(plan, frameEnd - start);
    if (scan.feed(buf, start, end - start) !== SCANNING) return false;
    this.responseScan = scan;
    return true;
  }

  responseBytes(buf: Buffer, off: number, len: number): void {
    this.responseScan?.feed(buf, off, len);
  }

  responseHole(): void {
    this.responseScan = null;
  }

  responseEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    if (this.currentResponseIsToken) {
      this.currentResponseIsToken = false;
      this.tokenFraming();
      return;
    }
    const r = this.currentResponse;
    const scan = this.responseScan;
    this.responseScan = null;
    if (r === null) return;
    this.currentResponse = null;
    if (scan !== null && complete && scan.finish() === SCANNED) r.errorCodes = scan.codes.length === 0 ? EMPTY_LIST : scan.codes;
    r.frame = frame;
    r.tsSec = complete ? tsSec : this.tsSec;
    r.tsNsec = complete ? tsNsec : this.tsNsec;
    r.complete = complete;
    if (!complete) this.noteTruncated('broker', frame, r.size);
    if (r.request !== null) this.pending.delete(r.correlationId);
    if (r.request !== null && !this.sasl.active && this.sasl.response(r.request.header.apiKey, r.request.header.apiVersion, r.errorCode)) {
      // KIP-43: with SaslHandshake v0 the tokens that follow carry no Kafka header, and may be empty.
      this.tokenFraming();
    }
    this.listener.response(this, r);
  }

  /** Tokens may be empty frames; requests and responses never are. */
  private tokenFraming(): void {
    if (this.requestFramer !== null) this.requestFramer.minimumFrameBytes = this.sasl.clientActive ? 0 : MIN_REQUEST_BYTES;
    if (this.responseFramer !== null) this.responseFramer.minimumFrameBytes = this.sasl.serverActive ? 0 : MIN_RESPONSE_BYTES;
  }

  /** Bytes of a token exchange were lost: it can no longer be counted (see SaslTokens.lost). */
  private saslLost(): void {
    if (!this.sasl.active) return;
    this.sasl.lost();
    this.tokenFraming();
  }

  desync(from: 'client' | 'broker', skipped: number, reason: string, frame: number): void {
    this.saslLost();
    this.listener.note(this, {
      kind: 'desync',
      frame,
      tsSec: this.tsSec,
      tsNsec: this.tsNsec,
      from,
      bytes: skipped,
      message: `${skipped} bytes from the ${from} could not be framed as Kafka (${reason})`,
    });
  }

  private noteTruncated(from: 'client' | 'broker', frame: number, size: number): void {
    this.listener.note(this, {
      kind: 'truncated-frame',
      frame,
      tsSec: this.tsSec,
      tsNsec: this.tsNsec,
      from,
      bytes: size,
      message: `a ${size}-byte ${from === 'client' ? 'request' : 'response'} is incomplete in the capture`,
    });
  }
}

/** "3-13": the versions the schemas define for an API (its current ones and those Kafka removed). */
function definedRange(p: Protocol, key: number): string {
  const d = p.api(key)!.definedVersions;
  return d.lo === d.hi ? `${d.lo}` : `${d.lo}-${d.hi}`;
}

/** The head with its int32 size in front, for the plausibility check. */
function withSize(head: Buffer, at: number, headLen: number, size: number): Buffer {
  const b = Buffer.allocUnsafe(headLen + 4);
  b.writeInt32BE(size, 0);
  head.copy(b, 4, at, at + headLen);
  return b;
}

/** The one place that turns the TCP stage's connections into Kafka conversations. */
export class KafkaStreamFactory {
  private readonly opts: KafkaOptions;

  constructor(
    private readonly listener: KafkaListener,
    opts: KafkaOptions,
  ) {
    this.opts = { ...opts, learnedBrokerPorts: opts.learnedBrokerPorts ?? new Set() };
  }
  open(conn: TcpConnection): StreamHandler {
    return new KafkaConversation(conn, this.listener, this.opts);
  }
}
