/**
 * One TCP connection seen as a Kafka conversation: decides whether it is Kafka and which side is
 * the broker, frames both directions, decodes request headers and the bodies kcid needs, pairs
 * responses with requests by correlation ID, and follows SASL's headerless token exchange.
 */
import type { Direction, Endpoint, StreamHandler, TcpConnection } from '../tcp/types.js';
import { DONE, STREAM, type Framer, type HeadAnswer, type Plausibility } from './framer.js';
import type { RequestHeader } from './types.js';
import { str } from './fields.js';
import { API_KEY, protocol } from './protocol.js';
import { bodyForm, type BodyForm } from './body-form.js';
import { isRequest, RequestDecoder, type RequestNotes } from './request-decoder.js';
import { isResponse, ResponseDecoder } from './response-decoder.js';
import { clientByPort, KafkaDetector, plausibleRequest, plausibleRequestHead, type DetectorReplay, type Verdict } from './detect.js';
import type { KafkaConnection, KafkaListener, KafkaRequest, KafkaResponse, StreamNote } from './events.js';
import { PendingRequests } from './pending.js';
import { plausibleResponse } from './resync.js';
import { SaslTokens } from './sasl.js';
import { MIN_REQUEST_BYTES, MIN_RESPONSE_BYTES, requestFramer, responseFramer, type FrameHandlers } from './sinks.js';
import { looksLikeTls } from '../tls/sniff.js';
import type { KafkaOptions } from './options.js';
import type { TlsSession, TlsSide } from '../tls/session.js';
import type { TlsInfo } from '../tls/types.js';
import { startTls, type PlaintextSink, type TlsLink, type TlsProbeOwner } from './tls-link.js';

export type { KafkaOptions };

const DEFAULT_MAX_PENDING = 1024;

export class KafkaConversation implements StreamHandler, KafkaConnection, FrameHandlers, PlaintextSink, TlsProbeOwner, RequestNotes, DetectorReplay {
  client: Endpoint;
  broker: Endpoint;
  readonly startSeen: boolean;
  listenerState: unknown = null;
  /** Direction of client → broker bytes in TCP terms (0 when side A is the client). */
  private clientDir: Direction = 0;
  private decided = false;
  private ignored = false;
  /** Undecided on a port not known to be Kafka: its bytes so far. */
  private probe: KafkaDetector | null = null;
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
  private readonly sasl = new SaslTokens();
  private firstClientByte = true;
  /** The connection is TLS: its bytes go through the session, whose plaintext comes back to the framers. */
  private tls: TlsSession | null = null;
  private tlsLink: TlsLink | null = null;
  /** Made with the framers, when the connection first carries bytes. */
  private requestDecoder: RequestDecoder = null!;
  private responseDecoder: ResponseDecoder = null!;

  constructor(
    readonly tcp: TcpConnection,
    private readonly listener: KafkaListener,
    private readonly opts: KafkaOptions,
    /** What becomes of bodies: one strategy for every conversation of an analysis (KafkaStreamFactory). */
    private readonly bodies: BodyForm = bodyForm(protocol(), opts.maxBodyBytes, opts.bodyForm),
  ) {
    this.startSeen = tcp.synSeen;
    this.maxPending = opts.maxPendingRequests ?? DEFAULT_MAX_PENDING;
    this.keepTelemetryBytes = opts.keepTelemetryBytes ?? 0;
    this.client = tcp.a;
    this.broker = tcp.b;
    const byPort = clientByPort(tcp, opts.kafkaPorts, opts.learnedBrokerPorts, opts.detect);
    if (byPort === null) this.ignore();
    else if (byPort === 'probe') this.probe = new KafkaDetector(opts.maxFrameBytes, tcp, opts.learnedBrokerPorts);
    else this.decide(byPort.client);
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
        if (this.startSeen && looksLikeTls(buf, off, len)) this.startTls(null, null);
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
    if (!this.decided && this.tls === null) {
      this.probe!.gap(dir, bytes, frame, this.tsSec, this.tsNsec);
      this.act(this.probe!.verdict());
      return;
    }
    // Undecided TLS (an unknown port, so the SYN was seen and side A is the client): its link holds the note.
    this.firstClientByte = false;
    const from = dir === this.clientDir ? 'client' : 'broker';
    const note = this.noteOf('gap', frame, from, bytes, `${bytes} bytes from the ${from} are missing from the capture`);
    if (this.decided) this.listener.note(this, note);
    else this.tlsLink!.note(note);
    this.saslLost();
    if (this.tls !== null) this.tls.gap(dir === this.clientDir ? 0 : 1, bytes, frame);
    else (dir === this.clientDir ? this.requests : this.responses).gap(bytes, frame);
  }

  end(reason: 'closed' | 'reset' | 'idle' | 'evicted' | 'capture-end'): void {
    if (this.ignored) return;
    this.tlsLink?.end(); // TLS still undecided on an unknown port: its port decides now
    if (this.probe !== null) this.act(this.probe.settle()); // so do plaintext bytes that could not tell
    if (!this.decided || this.ignored) return;
    this.requestFramer?.end(this.tsSec, this.tsNsec);
    this.responseFramer?.end(this.tsSec, this.tsNsec);
    for (let r = this.pending.removeOldest(); r !== undefined; r = this.pending.removeOldest()) this.listener.unanswered(this, r);
    this.listener.connectionEnd(this, reason);
  }

  private ignore(): void {
    if (this.ignored) return;
    this.ignored = true;
    this.probe = null;
    this.tcp.ignore();
    const tally = this.opts.unrecognised;
    if (tally === undefined) return;
    const t = this.tcp;
    // Without the SYN the server's port is not known yet (another connection may show it later): both ports, while the tally is small.
    const key = t.synSeen ? t.b.port : tally.size < UNRECOGNISED_PAIRS ? 65536 * (1 + t.a.port) + t.b.port : Math.min(t.a.port, t.b.port);
    tally.set(key, (tally.get(key) ?? 0) + 1);
  }

  // ---- TLS: the session hands back plaintext ---------------------------------------------------

  private startTls(owner: TlsProbeOwner | null, detector: KafkaDetector | null): void {
    this.tlsLink = startTls(this, this.listener, this.opts.tlsKeys ?? null, owner, detector);
    this.tls = this.tlsLink.session;
  }

  tlsIsKafka(): void {
    this.firstClientByte = false;
    this.decide(0);
  }

  tlsIsNotKafka(): void {
    this.ignore();
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
    if (this.requestFramer === null) {
      this.requestDecoder = new RequestDecoder(protocol(), this.bodies, this.keepTelemetryBytes, this);
      this.requestFramer = requestFramer(this, this.opts.maxFrameBytes, Math.max(this.bodies.maxPrefix, this.keepTelemetryBytes), this.sasl.clientActive);
    }
    return this.requestFramer;
  }

  private get responses(): Framer {
    if (this.responseFramer === null) {
      this.responseDecoder = new ResponseDecoder(protocol(), this.bodies);
      this.responseFramer = responseFramer(this, this.opts.maxFrameBytes, this.bodies.maxPrefix, this.sasl.serverActive);
    }
    return this.responseFramer;
  }

  /** Unknown port: the detector keeps the first bytes until they (or, when they cannot tell, the port) decide. */
  private probeData(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    const probe = this.probe!;
    if (dir === 0 && this.startSeen && probe.empty && looksLikeTls(buf, off, len)) {
      // The client starts a TLS handshake: decrypted (with keys), its plaintext goes to the detector.
      this.probe = null;
      this.startTls(this, probe);
      this.tls!.data(0, buf, off, len, frame, tsSec, tsNsec);
      return;
    }
    // The detector may keep only part of this segment (a mid-stream scan lets go of bytes as it goes on): the rest follows.
    for (;;) {
      const kept = probe.data(dir, buf, off, len, frame, tsSec, tsNsec);
      const decided = this.act(probe.verdict());
      if (kept >= len || this.probe === null) {
        if (decided && kept < len) this.data(dir, buf, off + kept, len - kept, frame, tsSec, tsNsec);
        return;
      }
      if (kept === 0) return;
      off += kept;
      len -= kept;
    }
  }

  /** Acts on the detector's verdict: true when the connection is now Kafka (what the detector kept replayed). */
  private act(v: Verdict): boolean {
    const probe = this.probe;
    if (probe === null || v === 'undecided') return false;
    this.probe = null;
    if (v === 'not-kafka') {
      this.ignore();
      return false;
    }
    this.decide(v.client);
    probe.replay(this, v.client);
    return true;
  }

  replayData(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    this.data(dir, buf, off, len, frame, tsSec, tsNsec);
  }

  replayGap(dir: Direction, bytes: number, frame: number): void {
    this.gap(dir, bytes, frame);
  }

  replaySkipped(dir: Direction, bytes: number, frame: number): void {
    this.desync(dir === this.clientDir ? 'client' : 'broker', bytes, 'captured mid-stream: before the first frame detection found', frame);
  }

  // ---- requests ----------------------------------------------------------------------------------

  plausibleRequestStart(buf: Buffer, off: number, len: number): Plausibility {
    return plausibleRequest(buf, off, len, false, this.opts.maxFrameBytes);
  }

  requestHead(head: Buffer, at: number, headLen: number, size: number, frame: number, final = false): HeadAnswer {
    this.currentRequest = null;
    this.currentRequestIsToken = false;
    if (this.sasl.clientActive) {
      const correlation = headLen >= 8 ? head.readInt32BE(at + 4) : -1;
      const verdict = (): Plausibility => plausibleRequestHead(head, at, headLen, size, this.opts.maxFrameBytes);
      if (this.sasl.clientFrameIsToken(verdict, correlation)) {
        this.currentRequestIsToken = true;
        return DONE;
      }
      this.tokenFraming();
    }
    const r = this.requestDecoder.decode(head, at, headLen, size, frame, final);
    if (!isRequest(r)) return r;
    this.currentRequest = r;
    return DONE;
  }

  requestNote(kind: 'unknown-api' | 'removed-version' | 'malformed-body', frame: number, header: RequestHeader, message: string): void {
    const n: StreamNote = this.noteOf(kind, frame, 'client', 0, message);
    n.apiKey = header.apiKey;
    n.apiVersion = header.apiVersion;
    n.correlationId = header.correlationId;
    this.listener.note(this, n);
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
    return plausibleResponse(buf, off, len, segmentStart, this.pending, this.opts.maxFrameBytes);
  }

  responseHead(head: Buffer, at: number, headLen: number, size: number, frame: number, final = false): HeadAnswer {
    this.currentResponse = null;
    this.currentResponseIsToken = false;
    if (this.sasl.serverActive) {
      if (this.sasl.serverFrameIsToken(size)) {
        this.currentResponseIsToken = true;
        return DONE;
      }
      this.tokenFraming();
    }
    const request = headLen < 4 ? null : (this.pending.get(head.readInt32BE(at)) ?? null);
    const r = this.responseDecoder.decode(head, at, headLen, size, frame, final, request);
    if (!isResponse(r)) return r;
    this.currentResponse = r;
    return this.responseDecoder.streaming ? STREAM : DONE;
  }

  responseBytes(buf: Buffer, off: number, len: number): void {
    this.responseDecoder.feed(buf, off, len);
  }

  responseHole(): void {
    this.responseDecoder.hole();
  }

  responseEnd(frame: number, tsSec: number, tsNsec: number, complete: boolean): void {
    if (this.currentResponseIsToken) {
      this.currentResponseIsToken = false;
      this.tokenFraming();
      return;
    }
    const r = this.currentResponse;
    if (r === null) {
      this.responseDecoder.hole();
      return;
    }
    this.currentResponse = null;
    this.responseDecoder.finish(r, complete);
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
    this.listener.note(this, this.noteOf('desync', frame, from, skipped, `${skipped} bytes from the ${from} could not be framed as Kafka (${reason})`));
  }

  private noteTruncated(from: 'client' | 'broker', frame: number, size: number): void {
    this.listener.note(this, this.noteOf('truncated-frame', frame, from, size, `a ${size}-byte ${from === 'client' ? 'request' : 'response'} is incomplete in the capture`));
  }

  /** A note dated by the packet being processed. */
  private noteOf(kind: StreamNote['kind'], frame: number, from: 'client' | 'broker', bytes: number, message: string): StreamNote {
    return { kind, frame, tsSec: this.tsSec, tsNsec: this.tsNsec, from, bytes, message };
  }
}

/** The one place that turns the TCP stage's connections into Kafka conversations. */
/** Entries of the tally of connections not recognised as Kafka past which a connection without its SYN is put under its lower port. */
const UNRECOGNISED_PAIRS = 65536;

export class KafkaStreamFactory {
  private readonly opts: KafkaOptions;

  private readonly bodies: BodyForm;

  constructor(
    private readonly listener: KafkaListener,
    opts: KafkaOptions,
  ) {
    this.opts = { ...opts, learnedBrokerPorts: opts.learnedBrokerPorts ?? new Set() };
    this.bodies = bodyForm(protocol(), opts.maxBodyBytes, opts.bodyForm);
  }
  open(conn: TcpConnection): StreamHandler {
    return new KafkaConversation(conn, this.listener, this.opts, this.bodies);
  }
}
