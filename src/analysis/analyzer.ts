/**
 * The per-capture analyzer, the judging listener: as the capture streams by it runs the connection
 * rules on every request and response of each live connection (its state kept by the tracker),
 * turns stream notes into findings, keeps latencies and the KIP-714 conversation, and turns each
 * connection into a {@link ConnectionSummary} (summary.ts) when it ends. A command that only shows
 * the requests listens with a RequestWatcher (tracker.ts) instead.
 */
import type { KafkaConnection, KafkaRequest, KafkaResponse, StreamNote } from '../kafka/events.js';
import { API_KEY } from '../kafka/protocol.js';
import { uuidToBase64 } from '../kafka/uuid.js';
import { toMicros } from '../base/time.js';
import type { ConnState } from './connection-state.js';
import { LatencyKeeper } from './latency.js';
import type { LiveChecks } from './live-checks.js';
import { CONNECTION_RULES } from './rules/index.js';
import type { ConnectionRule, RuleHit, RuleMeta, StreamRule } from './rules/rule.js';
import { responseBodyMessage } from './rules/short-response-tolerated.js';
import { captureGap, malformedBody, removedApiVersion, streamDesync, tlsAlert, tlsOnKafkaPort, tlsRecordAuthFailed, tlsRecordUnreadable, unknownApiKey } from './rules/stream-rules.js';
import { makeFinding } from './finding.js';
import { requestOwner } from './owner.js';
import type { FindingSink, RequestObserver } from './observer.js';
import { Interner, summarize } from './summary.js';
import { ConnectionTracker } from './tracker.js';
import type { ConnectionSummary } from './types.js';
import { TelemetryCollector, type TelemetryDecoding } from './telemetry-events.js';
import { DEFAULT_MAX_TELEMETRY_BYTES } from '../telemetry/names.js';

export type { FindingSink, RequestObserver } from './observer.js';

/** Connection summaries kept per input by default (about 0.4 KB each: 399 B measured, the heap before and after). */
export const DEFAULT_MAX_SUMMARIES = 250_000;

/** The registry's rule for each kind of stream note. */
const STREAM_NOTE_RULES: Record<StreamNote['kind'], StreamRule | null> = {
  gap: captureGap,
  desync: streamDesync,
  tls: tlsOnKafkaPort,
  'tls-auth': tlsRecordAuthFailed,
  'tls-record': tlsRecordUnreadable,
  'tls-alert': tlsAlert,
  'unknown-api': unknownApiKey,
  'removed-version': removedApiVersion,
  'malformed-body': malformedBody,
  // A frame cut short is the consequence of a gap or of the capture ending: the gap says it.
  'truncated-frame': null,
};

export class CaptureAnalyzer extends ConnectionTracker {
  readonly connections: ConnectionSummary[] = [];
  private readonly shared = new Interner();
  /** Exact latencies within the capture's budget (latency.ts). */
  private readonly latencies = new LatencyKeeper();
  private judged: ConnState | null = null;
  private judgedAt: KafkaRequest | KafkaResponse | null = null;
  /**
   * One report callback per connection rule, made once rather than per request: rules report
   * while they are called, so the connection and message they judge are read from fields.
   */
  private readonly reporters = CONNECTION_RULES.map(
    (rule) => (hit: RuleHit) => this.emit(rule, this.judged!, hit, this.judgedAt),
  );
  /**
   * Each hook of the connection rules in a list of its own, beside its rule's reporter: a loop that read
   * `rule.onRequest` across the rules (one object shape each) made that load megamorphic, V8's slowest.
   */
  private readonly onRequest = hooks(CONNECTION_RULES, this.reporters, (r) => r.onRequest);
  private readonly onResponse = hooks(CONNECTION_RULES, this.reporters, (r) => r.onResponse);
  private readonly onEnd = hooks(CONNECTION_RULES, this.reporters, (r) => r.onEnd);

  /** Collect the KIP-714 conversation for the telemetry rules. */
  private readonly telemetryOn: boolean;

  /** KIP-714 telemetry requests, for the summary (see telemetry-events.ts). */
  readonly telemetry: TelemetryCollector;

  /** Connections beyond maxSummaries, with their requests and responses: counted, not kept. */
  readonly unlisted = { connections: 0, requests: 0, responses: 0 };

  /** Only a RequestWatcher (tracker.ts) passes connections by unsummarised: for the progress line. */
  readonly passedConnections = 0;

  /**
   * @param maxSummaries connections kept as summaries for the report (instances, listing); the
   *   ones that end after that are counted in {@link unlisted} instead, so memory stays bounded
   *   whatever the number of connections.
   */
  constructor(
    input: number,
    private readonly onFinding: FindingSink,
    private readonly observer: RequestObserver = {},
    private readonly maxSummaries = DEFAULT_MAX_SUMMARIES,
    telemetry: TelemetryDecoding = { collect: false, decode: 'none', maxBytes: DEFAULT_MAX_TELEMETRY_BYTES, read: null, load: null },
    /** Follow mode: the checks across connections, told when a connection shows its header ID. */
    private readonly live: LiveChecks | null = null,
  ) {
    super(input);
    this.telemetry = new TelemetryCollector(input, telemetry);
    this.telemetryOn = telemetry.collect;
  }

  request(c: KafkaConnection, r: KafkaRequest): void {
    const s = this.state(c);
    this.judging(s, r);
    const { fns, reports } = this.onRequest;
    for (let i = 0; i < fns.length; i++) fns[i]!(s, r, reports[i]!);
    const known = s.connectionId !== null;
    s.fold(r, true);
    if (this.live !== null && !known && s.connectionId !== null) this.live.connection(s);
    if (this.telemetryOn && r.header.apiKey === API_KEY.PushTelemetry) this.telemetry.request(s, r);
    this.observer.request?.(s, r);
  }

  response(c: KafkaConnection, r: KafkaResponse): void {
    const s = this.state(c);
    this.judging(s, r);
    const { fns, reports } = this.onResponse;
    for (let i = 0; i < fns.length; i++) fns[i]!(s, r, reports[i]!);
    // A response that ends early or does not parse, unless a known client accepts it (short-response-tolerated);
    // an ApiVersions response read as v0 that leaves bytes over.
    if (r.bodyError !== null) {
      if (r.bodyTolerated === undefined) this.emit(malformedBody, s, { message: responseBodyMessage(r, 'does not parse') }, r);
    } else if (r.bodyLeftover !== undefined && r.bodyTolerated !== undefined) {
      this.emit(malformedBody, s, { message: responseBodyMessage(r, 'leaves bytes over', r.bodyTolerated ?? '') }, r);
    }
    s.responses++;
    // A clock can step back inside a connection: its window runs from its earliest time to its latest.
    const us = toMicros(r.tsSec, r.tsNsec);
    if (us > s.lastUs) s.lastUs = us;
    if (s.requests > 0 && us < s.firstUs) s.firstUs = us;
    if (r.errorCodes.length > 0) {
      s.errorResponses++;
      s.errors += r.errorCodes.length;
    }
    const q = r.request;
    if (q !== null) {
      this.latencies.add(s, q.header.apiKey, s.lastUs - toMicros(q.tsSec, q.tsNsec));
      s.learnFromResponse(q, r);
      const key = q.header.apiKey;
      if (this.telemetryOn && (key === API_KEY.PushTelemetry || key === API_KEY.GetTelemetrySubscriptions)) this.telemetry.response(s, q, r);
    }
    this.observer.response?.(s, r);
  }

  unanswered(c: KafkaConnection, r: KafkaRequest): void {
    const s = c.listenerState as ConnState | null;
    if (this.telemetryOn && r.header.apiKey === API_KEY.PushTelemetry) this.telemetry.unanswered(r);
    if (s !== null) this.observer.unanswered?.(s, r);
  }

  note(c: KafkaConnection, n: StreamNote): void {
    const s = this.noted(c, n);
    const rule = STREAM_NOTE_RULES[n.kind];
    if (rule === null) return;
    s.findings++;
    this.onFinding(makeFinding(rule, n.message, {
      frame: n.frame,
      timeUs: toMicros(n.tsSec, n.tsNsec),
      client: s.client,
      broker: s.broker,
      apiKey: n.apiKey ?? null,
      apiVersion: n.apiVersion ?? null,
      correlationId: n.correlationId ?? null,
      clientInstanceId: s.connectionId === null ? null : uuidToBase64(s.connectionId),
      input: this.input,
    }));
  }

  connectionEnd(c: KafkaConnection): void {
    const s = this.ended(c);
    if (s === null) return;
    this.judging(s, null);
    const { fns, reports } = this.onEnd;
    for (let i = 0; i < fns.length; i++) fns[i]!(s, reports[i]!);
    this.observer.connectionEnd?.(s);
    // A connection that carried no Kafka message and raised nothing (a SYN, a port scan, a client
    // that connected and left) is counted, not kept: a million of them must not cost a million summaries.
    if (s.requests === 0 && s.responses === 0 && s.gaps === 0 && s.findings === 0 && c.tlsInfo === null) this.emptyConnections++;
    else if (this.connections.length < this.maxSummaries) this.connections.push(summarize(s, this.shared));
    else {
      this.latencies.release(s);
      this.unlisted.connections++;
      this.unlisted.requests += s.requests;
      this.unlisted.responses += s.responses;
    }
  }

  /** The connection and message the rules are judging, for {@link reporters}. */
  private judging(s: ConnState, at: KafkaRequest | KafkaResponse | null): void {
    this.judged = s;
    this.judgedAt = at;
  }

  private emit(rule: RuleMeta, s: ConnState, hit: RuleHit, at: KafkaRequest | KafkaResponse | null): void {
    const about = hit.request ?? at;
    const request = about === null ? null : 'header' in about ? about : about.request;
    // The request's owner (owner.ts), else the ID the current request just revealed (a judgement
    // held until the connection showed its ID).
    const current = at !== null && 'header' in at ? at.header.clientInstanceId : null;
    const id = requestOwner(request?.header.clientInstanceId ?? null, s.connectionId) ?? current;
    s.findings++;
    this.onFinding(makeFinding(rule, hit.message, {
      frame: about?.frame ?? null,
      timeUs: about === null ? null : toMicros(about.tsSec, about.tsNsec),
      client: s.client,
      broker: s.broker,
      apiKey: request?.header.apiKey ?? null,
      apiVersion: request?.header.apiVersion ?? null,
      correlationId: request?.header.correlationId ?? null,
      clientInstanceId: id === null ? null : uuidToBase64(id),
      input: this.input,
    }));
  }
}

type Report = (hit: RuleHit) => void;

/** The rules' `hook`s (in rule order, bound to their rule) and each one's reporter. */
function hooks<F extends (...args: never[]) => void>(
  rules: readonly ConnectionRule[],
  reporters: readonly Report[],
  hook: (r: ConnectionRule) => F | undefined,
): { fns: F[]; reports: Report[] } {
  const fns: F[] = [];
  const reports: Report[] = [];
  rules.forEach((rule, i) => {
    const fn = hook(rule);
    if (fn === undefined) return;
    fns.push(fn.bind(rule) as F);
    reports.push(reporters[i]!);
  });
  return { fns, reports };
}
