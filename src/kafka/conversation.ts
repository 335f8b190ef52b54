/**
 * One TCP connection seen as a Kafka conversation: decides whether it is Kafka and which side is
 * the broker, frames both directions, decodes request headers and the bodies kcid needs, pairs
 * responses with requests by correlation ID, and follows SASL's headerless token exchange.
 */
import type { Direction, Endpoint, StreamHandler, TcpConnection } from '../tcp/types.js';
import { Framer, IMPLAUSIBLE, NEED_MORE, PLAUSIBLE, SCAN_WINDOW, type FrameSink, type Plausibility } from './framer.js';
import { apiInfo, isValidVersion } from './apis.js';
import { DecodeError } from './reader.js';
import { decodeRequestHeader, responseHeaderVersion } from './headers.js';
import { EMPTY_LIST } from '../base/lists.js';
import type { RequestHeader } from './types.js';
import { uuidEquals } from './uuid.js';
import { keptTelemetryPrefix, pushTelemetryMetrics } from './telemetry-frame.js';
import {
  bodyPrefixWanted,
  decodeRequestBody,
  decodeResponseBody,
  responsePrefixWanted,
  type RequestBody,
  type ResponseBody,
} from './messages.js';

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
  /**
   * Keep PushTelemetry requests up to this many bytes whole and hand over their Metrics blob
   * (`KafkaRequest.metricsBlob`); 0 or absent: the blob is sized, never copied (telemetry-frame.ts).
   */
  keepTelemetryBytes?: number;
}

export interface KafkaRequest {
  /** Frame in which the request's last byte arrived (as Wireshark reports a reassembled PDU). */
  frame: number;
  tsSec: number;
  tsNsec: number;
  /** Frame size in bytes, without the 4-byte size prefix. */
  size: number;
  header: RequestHeader;
  body: RequestBody | null;
  /** Why the body could not be decoded, when kcid tried. */
  bodyError: string | null;
  /** PushTelemetry's Metrics bytes (a copy), when KafkaOptions.keepTelemetryBytes kept this frame whole. */
  metricsBlob: Uint8Array | null;
  /** False for Produce with acks=0: the broker sends no response. */
  expectsResponse: boolean;
  /** False when a gap or the end of the capture cut the frame short. */
  complete: boolean;
}

export interface KafkaResponse {
  frame: number;
  tsSec: number;
  tsNsec: number;
  size: number;
  correlationId: number;
  /** The request this answers, or null when the capture missed it. */
  request: KafkaRequest | null;
  /** Top-level ErrorCode where the API's layout lets kcid read it cheaply. */
  errorCode: number | null;
  body: ResponseBody | null;
  complete: boolean;
}

export type StreamNoteKind = 'gap' | 'desync' | 'tls' | 'unknown-api' | 'truncated-frame';

export interface StreamNote {
  kind: StreamNoteKind;
  frame: number;
  tsSec: number;
  tsNsec: number;
  /** 'client' for bytes from the client, 'broker' for bytes from the broker. */
  from: 'client' | 'broker';
  /** Bytes missing (gap) or skipped (desync). */
  bytes: number;
  message: string;
  /** For unknown-api: the API key and version. */
  apiKey?: number;
  apiVersion?: number;
  correlationId?: number;
}

/** A Kafka connection with roles settled: who is the client, who is the broker. */
export interface KafkaConnection {
  readonly tcp: TcpConnection;
  readonly client: Endpoint;
  readonly broker: Endpoint;
  /** The capture saw the SYN, so the connection's first bytes are in the capture. */
  readonly startSeen: boolean;
  /**
   * One slot for the listener's own state of this connection. A Map keyed by connection would do,
   * but measured on 100,000 short connections it made V8 promote about 100 MB more to the old
   * generation (its entries kept dead connections' state reachable from an old table until the
   * next full collection): a field dies with its connection.
   */
  listenerState: unknown;
}

export interface KafkaListener {
  connectionStart(c: KafkaConnection, frame: number, tsSec: number, tsNsec: number): void;
  request(c: KafkaConnection, r: KafkaRequest): void;
  response(c: KafkaConnection, r: KafkaResponse): void;
  /** A request that will never be matched: evicted from the pending table, or pending at the end. */
  unanswered(c: KafkaConnection, r: KafkaRequest): void;
  note(c: KafkaConnection, n: StreamNote): void;
  connectionEnd(c: KafkaConnection, reason: string): void;
}

/** Bytes of each frame handed to the first decode attempt: enough for nearly every request header. */
const INITIAL_HEAD = 96;
/**
 * The same for responses: the correlation id, the header's tagged fields and a top-level ErrorCode
 * fit; the few bodies kcid reads ask for more. Copying no more than that matters on small frames.
 */
const INITIAL_RESPONSE_HEAD = 16;
/** The largest prefix of one frame kcid ever keeps (headers with huge ClientIds or tags, and the bodies it reads). */
const MAX_PREFIX = 64 * 1024;
/** Smallest request: int16 key, int16 version, int32 correlation id (header v0). */
const MIN_REQUEST_BYTES = 8;
/** Smallest response: int32 correlation id. */
const MIN_RESPONSE_BYTES = 4;
/** Bytes kept per direction while deciding whether an unknown port carries Kafka. */
const PROBE_BYTES = 4096;
/**
 * Pieces kept while deciding. Data pieces are bounded by PROBE_BYTES, but a gap costs no bytes:
 * a run of bare ACKs acknowledging bytes never captured would otherwise grow the probe forever.
 */
const MAX_PROBE_CHUNKS = 1024;
const DEFAULT_MAX_PENDING = 1024;

/** KIP-43 / KIP-152: after SaslHandshake v0 the client and broker exchange bare size-prefixed tokens. */
const SASL_HANDSHAKE = 17;

type ProbeChunk = { dir: Direction; bytes: Buffer | null; gap: number; frame: number; tsSec: number; tsNsec: number };

export class KafkaConversation implements StreamHandler, KafkaConnection {
  client: Endpoint;
  broker: Endpoint;
  readonly startSeen: boolean;
  listenerState: unknown = null;
  /** Direction of client → broker bytes in TCP terms (0 when side A is the client). */
  private clientDir: Direction = 0;
  private decided = false;
  private ignored = false;
  private probe: ProbeChunk[] | null = null;
  private probeBytes: [number, number] = [0, 0];
  private requestFramer: Framer | null = null;
  private responseFramer: Framer | null = null;
  private readonly pending = new PendingRequests();
  private readonly maxPending: number;
  private tsSec = 0;
  private tsNsec = 0;
  // Frame in progress, one per direction.
  private currentRequest: KafkaRequest | null = null;
  private currentRequestIsToken = false;
  private currentResponse: KafkaResponse | null = null;
  private currentResponseIsToken = false;
  /** SASL token exchange in progress (after a successful SaslHandshake v0). */
  private saslRaw = false;
  private saslHandshakeCorrelation = 0;
  private firstClientByte = true;
  private readonly keepTelemetryBytes: number;
  /** The last request header's ClientInstanceId, as kept by keepInstanceId(). */
  private lastInstanceId: Uint8Array | null = null;

  constructor(
    readonly tcp: TcpConnection,
    private readonly listener: KafkaListener,
    private readonly opts: KafkaOptions,
  ) {
    this.startSeen = tcp.synSeen;
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
    } else if (opts.detect) {
      // A port already seen as a broker (the target of a SYN that carried Kafka) settles the roles of a
      // connection whose start the capture missed, where its first bytes could be a response.
      const learned = opts.learnedBrokerPorts;
      if (learned?.has(tcp.b.port) === true && !learned.has(tcp.a.port)) this.decide(0);
      else if (learned?.has(tcp.a.port) === true && !learned.has(tcp.b.port)) this.decide(1);
      else this.probe = [];
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
      this.probeData(dir, buf, off, len, frame, tsSec, tsNsec);
      return;
    }
    if (dir === this.clientDir) {
      if (this.firstClientByte) {
        this.firstClientByte = false;
        if (this.startSeen && looksLikeTls(buf, off, len)) {
          this.noteTls(frame);
          return;
        }
      }
      this.requests.data(buf, off, len, frame, tsSec, tsNsec);
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
      if (this.probe!.length >= MAX_PROBE_CHUNKS) this.ignore();
      else this.probe!.push({ dir, bytes: null, gap: bytes, frame, tsSec: this.tsSec, tsNsec: this.tsNsec });
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
    (dir === this.clientDir ? this.requests : this.responses).gap(bytes, frame);
  }

  end(reason: 'closed' | 'reset' | 'idle' | 'evicted' | 'capture-end'): void {
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

  private noteTls(frame: number): void {
    this.listener.note(this, {
      kind: 'tls',
      frame,
      tsSec: this.tsSec,
      tsNsec: this.tsNsec,
      from: 'client',
      bytes: 0,
      message: 'TLS handshake on a Kafka connection: its contents cannot be analysed',
    });
    this.ignored = true;
    this.listener.connectionEnd(this, 'tls');
    this.tcp.ignore();
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
    return (this.requestFramer ??= this.framer(new RequestSink(this), INITIAL_HEAD, MIN_REQUEST_BYTES, this.keepTelemetryBytes));
  }

  private get responses(): Framer {
    return (this.responseFramer ??= this.framer(new ResponseSink(this), INITIAL_RESPONSE_HEAD, MIN_RESPONSE_BYTES));
  }

  private framer(sink: FrameSink, initialHead: number, minFrameBytes: number, keepBytes = 0): Framer {
    return new Framer(sink, {
      maxFrameBytes: this.opts.maxFrameBytes,
      initialHead,
      maxPrefixBytes: Math.max(MAX_PREFIX, keepBytes),
      minFrameBytes: this.saslRaw ? 0 : minFrameBytes,
    });
  }

  /**
   * Unknown port: keep the first bytes of each direction until one of them starts with a
   * plausible Kafka request (sane size, known API key, valid version, ClientId decodes). That
   * side is the client. Then replay what was kept, in capture order.
   */
  private probeData(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    const keep = Math.min(len, PROBE_BYTES - this.probeBytes[dir]);
    if (keep > 0) {
      this.probe!.push({ dir, bytes: Buffer.from(buf.subarray(off, off + keep)), gap: 0, frame, tsSec, tsNsec });
      this.probeBytes[dir] += keep;
    }
    for (const d of [0, 1] as const) {
      const verdict = this.probeVerdict(d);
      if (verdict === PLAUSIBLE) {
        const chunks = this.probe!;
        this.probe = null;
        this.decide(d);
        for (const c of chunks) {
          if (c.bytes !== null) this.data(c.dir, c.bytes, 0, c.bytes.length, c.frame, c.tsSec, c.tsNsec);
          else this.gap(c.dir, c.gap, c.frame);
        }
        // The probe may have kept only part of this segment.
        if (keep < len) this.data(dir, buf, off + keep, len - keep, frame, tsSec, tsNsec);
        return;
      }
    }
    if (this.probeBytes[0] >= PROBE_BYTES || this.probeBytes[1] >= PROBE_BYTES) this.ignore();
  }

  /** Does direction d's kept stream start with a plausible request? (From its first byte, before any gap.) */
  private probeVerdict(d: Direction): Plausibility {
    const parts: Buffer[] = [];
    for (const c of this.probe!) {
      if (c.dir !== d) continue;
      if (c.bytes === null) break;
      parts.push(c.bytes);
    }
    if (parts.length === 0) return NEED_MORE;
    const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (looksLikeTls(joined, 0, joined.length)) return IMPLAUSIBLE;
    return this.plausibleRequest(joined, 0, Math.min(joined.length, PROBE_BYTES), true);
  }

  // ---- requests ----------------------------------------------------------------------------------

  /**
   * A request plausibly starts at buf[off]: int32 size, int16 API key known to kcid, a valid
   * version, a non-negative correlation id and a ClientId (int16 length, -1 for null) of
   * printable characters that fits the frame. `strict` (port detection) also insists the whole
   * header decodes from the bytes available.
   */
  plausibleRequest(buf: Buffer, off: number, len: number, strict: boolean): Plausibility {
    if (len < 4) return NEED_MORE;
    const size = buf.readInt32BE(off);
    if (size < 10 || size > this.opts.maxFrameBytes) return IMPLAUSIBLE;
    if (len < 8) return NEED_MORE;
    const key = buf.readInt16BE(off + 4);
    const version = buf.readInt16BE(off + 6);
    if (!isValidVersion(key, version)) return IMPLAUSIBLE;
    if (len < 14) return NEED_MORE;
    if (buf.readInt32BE(off + 8) < 0) return IMPLAUSIBLE;
    const idLen = buf.readInt16BE(off + 12);
    if (idLen < -1 || idLen > size - 10) return IMPLAUSIBLE;
    const idEnd = off + 14 + Math.max(idLen, 0);
    const checkEnd = Math.min(idEnd, off + len);
    for (let i = off + 14; i < checkEnd; i++) {
      const b = buf[i]!;
      if (b < 0x20 || b > 0x7e) return IMPLAUSIBLE;
    }
    if (idEnd > off + len) return len < SCAN_WINDOW || strict ? NEED_MORE : PLAUSIBLE;
    if (!strict) return PLAUSIBLE;
    const frameEnd = off + 4 + size;
    const available = Math.min(frameEnd, off + len);
    try {
      const h = decodeRequestHeader(buf, off + 4, available, available === frameEnd);
      if (h.problems.length > 0) return IMPLAUSIBLE;
      return PLAUSIBLE;
    } catch (e) {
      if (e instanceof DecodeError) return available < frameEnd ? NEED_MORE : IMPLAUSIBLE;
      throw e;
    }
  }

  requestHead(head: Buffer, headLen: number, size: number, frame: number, final = false): number {
    this.currentRequest = null;
    this.currentRequestIsToken = false;
    if (this.saslRaw) {
      // A token, unless it is plainly the next request after authentication finished.
      const verdict = this.plausibleRequest(withSize(head, headLen, size), 0, headLen + 4, true);
      const correlation = headLen >= 8 ? head.readInt32BE(4) : -1;
      if (verdict !== PLAUSIBLE || correlation <= this.saslHandshakeCorrelation) {
        this.currentRequestIsToken = true;
        return headLen;
      }
      this.setSaslRaw(false);
    }
    if (headLen < 8) return -1;
    const apiKey = head.readInt16BE(0);
    const apiVersion = head.readInt16BE(2);
    const known = isValidVersion(apiKey, apiVersion);
    const whole = headLen === size;
    let header: RequestHeader;
    try {
      // A version newer than kcid's table is read as header v2 when its API is flexible from some
      // version on (Kafka never makes a flexible API inflexible again), so its tag 0 is still seen.
      header = decodeRequestHeader(head, 0, headLen, whole, { inferNewerVersions: true });
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      if (!whole && headLen < MAX_PREFIX) return Math.min(size, headLen * 4, MAX_PREFIX);
      return -1;
    }
    if (header.clientInstanceId !== null) header.clientInstanceId = this.keepInstanceId(header.clientInstanceId);
    if (!known) {
      // An API kcid does not know (newer than its table) is kept if its header looks sane.
      if (apiKey < 0 || apiVersion < 0 || apiVersion > 200 || header.correlationId < 0) return -1;
    }
    const kept = known ? keptTelemetryPrefix(apiKey, headLen, size, this.keepTelemetryBytes) : null;
    if (kept !== null) {
      if (!final && kept > headLen) return kept;
    } else {
      const wanted = known ? bodyPrefixWanted(apiKey, header.headerLength, size) : header.headerLength;
      if (!final && wanted > headLen && headLen < size && headLen < MAX_PREFIX) return wanted;
    }
    let body: RequestBody | null = null;
    let bodyError: string | null = null;
    let expectsResponse = true;
    if (known) {
      try {
        body = decodeRequestBody(apiKey, apiVersion, head, header.headerLength, headLen, size);
        if (body !== null && body.kind === 'Produce') expectsResponse = body.acks !== 0;
      } catch (e) {
        if (!(e instanceof DecodeError)) throw e;
        bodyError = e.message;
      }
    }
    this.currentRequest = {
      frame,
      tsSec: 0,
      tsNsec: 0,
      size,
      header,
      body,
      bodyError,
      metricsBlob: kept !== null && headLen === size && body !== null ? pushTelemetryMetrics(head, header.headerLength, headLen, apiVersion) : null,
      expectsResponse,
      complete: false,
    };
    if (!known) {
      this.listener.note(this, {
        kind: 'unknown-api',
        frame,
        tsSec: this.tsSec,
        tsNsec: this.tsNsec,
        from: 'client',
        bytes: 0,
        message:
          apiInfo(apiKey) === undefined
            ? `request with API key ${apiKey} unknown to kcid (version ${apiVersion})`
            : `request for ${apiInfo(apiKey)!.name} v${apiVersion}, a version unknown to kcid`,
        apiKey,
        apiVersion,
        correlationId: header.correlationId,
      });
    }
    return headLen;
  }

  /**
   * A header's UUID points into the framer's prefix buffer, which the next frame reuses, so it is
   * copied (not .slice(): on a Buffer that is a view). A client repeats the same ID on every
   * request of a connection: an ID equal to the last one is that same copy, made once.
   */
  private keepInstanceId(id: Uint8Array): Uint8Array {
    const last = this.lastInstanceId;
    if (last !== null && uuidEquals(last, id)) return last;
    this.lastInstanceId = new Uint8Array(id);
    return this.lastInstanceId;
  }

  requestEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    if (this.currentRequestIsToken) {
      this.currentRequestIsToken = false;
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
    if (r.header.apiKey === SASL_HANDSHAKE) this.saslHandshakeCorrelation = r.header.correlationId;
    this.listener.request(this, r);
  }

  // ---- responses ---------------------------------------------------------------------------------

  plausibleResponse(buf: Buffer, off: number, len: number): Plausibility {
    if (len < 8) return NEED_MORE;
    const size = buf.readInt32BE(off);
    if (size < 4 || size > this.opts.maxFrameBytes) return IMPLAUSIBLE;
    return this.pending.has(buf.readInt32BE(off + 4)) ? PLAUSIBLE : IMPLAUSIBLE;
  }

  responseHead(head: Buffer, headLen: number, size: number, frame: number, final = false): number {
    this.currentResponse = null;
    this.currentResponseIsToken = false;
    if (this.saslRaw) {
      this.currentResponseIsToken = true;
      return headLen;
    }
    if (headLen < 4) return -1;
    const correlationId = head.readInt32BE(0);
    const request = this.pending.get(correlationId) ?? null;
    let errorCode: number | null = null;
    let body: ResponseBody | null = null;
    if (request !== null) {
      const { apiKey, apiVersion } = request.header;
      const headerVersion = responseHeaderVersion(apiKey, apiVersion);
      if (headerVersion !== null) {
        const wanted = responsePrefixWanted(apiKey, apiVersion, headerVersion, size);
        if (!final && wanted > headLen && headLen < size && headLen < MAX_PREFIX) return wanted;
        try {
          const decoded = decodeResponseBody(apiKey, apiVersion, headerVersion, head, headLen, headLen === size);
          errorCode = decoded.errorCode;
          body = decoded.body;
        } catch (e) {
          if (!(e instanceof DecodeError)) throw e;
        }
      }
    }
    this.currentResponse = { frame, tsSec: 0, tsNsec: 0, size, correlationId, request, errorCode, body, complete: false };
    return headLen;
  }

  responseEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    if (this.currentResponseIsToken) {
      this.currentResponseIsToken = false;
      return;
    }
    const r = this.currentResponse;
    if (r === null) return;
    this.currentResponse = null;
    r.frame = frame;
    r.tsSec = complete ? tsSec : this.tsSec;
    r.tsNsec = complete ? tsNsec : this.tsNsec;
    r.complete = complete;
    if (!complete) this.noteTruncated('broker', frame, r.size);
    if (r.request !== null) this.pending.delete(r.correlationId);
    if (r.request !== null && r.request.header.apiKey === SASL_HANDSHAKE && r.request.header.apiVersion === 0 && r.errorCode === 0) {
      // KIP-43: with SaslHandshake v0 the tokens that follow carry no Kafka header, and may be empty.
      this.setSaslRaw(true);
    }
    this.listener.response(this, r);
  }

  private setSaslRaw(on: boolean): void {
    this.saslRaw = on;
    if (this.requestFramer !== null) this.requestFramer.minimumFrameBytes = on ? 0 : MIN_REQUEST_BYTES;
    if (this.responseFramer !== null) this.responseFramer.minimumFrameBytes = on ? 0 : MIN_RESPONSE_BYTES;
  }

  desync(from: 'client' | 'broker', skipped: number, reason: string, frame: number): void {
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

/**
 * Requests awaiting their response, oldest first. A broker answers the requests of a connection in
 * the order they were sent (protocol guide, "Network"), so the one looked for is nearly always the
 * first: two arrays searched from the front, rather than a Map whose table a set and a delete per
 * request keep reallocating. The owner bounds the count (maxPendingRequests), so searches stay short.
 */
class PendingRequests {
  // Most connections have one request in flight at a time: the arrays are made on the first add
  // and kept when they empty, for the next request.
  private ids: number[] = EMPTY_LIST;
  private requests: KafkaRequest[] = EMPTY_LIST;

  get size(): number {
    return this.ids.length;
  }

  get(correlationId: number): KafkaRequest | undefined {
    const i = this.ids.indexOf(correlationId);
    return i < 0 ? undefined : this.requests[i];
  }

  has(correlationId: number): boolean {
    return this.ids.indexOf(correlationId) >= 0;
  }

  add(correlationId: number, r: KafkaRequest): void {
    if (this.ids === EMPTY_LIST) {
      this.ids = [correlationId];
      this.requests = [r];
      return;
    }
    this.ids.push(correlationId);
    this.requests.push(r);
  }

  /** Removes the request with this correlation id; returns it, or undefined when none waits. */
  delete(correlationId: number): KafkaRequest | undefined {
    const i = this.ids.indexOf(correlationId);
    if (i < 0) return undefined;
    if (i === 0) {
      this.ids.shift();
      return this.requests.shift();
    }
    this.ids.splice(i, 1);
    return this.requests.splice(i, 1)[0];
  }

  removeOldest(): KafkaRequest | undefined {
    if (this.ids.length === 0) return undefined;
    this.ids.shift();
    return this.requests.shift();
  }
}

class RequestSink implements FrameSink {
  constructor(private readonly c: KafkaConversation) {}
  frameHead(head: Buffer, headLen: number, size: number, frame: number, final: boolean): number {
    return this.c.requestHead(head, headLen, size, frame, final);
  }
  frameEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    this.c.requestEnd(frame, tsSec, tsNsec, complete);
  }
  plausibleStart(buf: Buffer, off: number, len: number): Plausibility {
    return this.c.plausibleRequest(buf, off, len, false);
  }
  desync(skipped: number, reason: string, frame: number): void {
    this.c.desync('client', skipped, reason, frame);
  }
}

class ResponseSink implements FrameSink {
  constructor(private readonly c: KafkaConversation) {}
  frameHead(head: Buffer, headLen: number, size: number, frame: number, final: boolean): number {
    return this.c.responseHead(head, headLen, size, frame, final);
  }
  frameEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    this.c.responseEnd(frame, tsSec, tsNsec, complete);
  }
  plausibleStart(buf: Buffer, off: number, len: number): Plausibility {
    return this.c.plausibleResponse(buf, off, len);
  }
  desync(skipped: number, reason: string, frame: number): void {
    this.c.desync('broker', skipped, reason, frame);
  }
}

/** A TLS record header: content type 22 (handshake), version 3.x (RFC 8446 §5.1). */
function looksLikeTls(buf: Buffer, off: number, len: number): boolean {
  return len >= 3 && buf[off] === 0x16 && buf[off + 1] === 0x03 && buf[off + 2]! <= 0x04;
}

/** The head with its int32 size in front, for the plausibility check. */
function withSize(head: Buffer, headLen: number, size: number): Buffer {
  const b = Buffer.allocUnsafe(headLen + 4);
  b.writeInt32BE(size, 0);
  head.copy(b, 4, 0, headLen);
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
