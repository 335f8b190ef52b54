/**
 * The per-capture analyzer: listens to Kafka conversations as the capture streams by, keeps a
 * small state per live connection, runs the connection rules on every request and response, and
 * turns each connection into a {@link ConnectionSummary} when it ends.
 */
import type { KafkaConnection, KafkaListener, KafkaRequest, KafkaResponse, StreamNote } from '../kafka/conversation.js';
import { API } from '../kafka/messages.js';
import { isZeroUuid, uuidEquals, uuidToBase64 } from '../kafka/uuid.js';
import { toMicros } from '../report/time.js';
import { addDistinct, ConnState } from './connection-state.js';
import { latencyBucket } from './latency.js';
import { CONNECTION_RULES } from './rules/index.js';
import type { ConnectionRule, RuleHit } from './rules/rule.js';
import type { ConnectionSummary, Finding, Severity } from './types.js';

/** KIP-511: the broker answers an ApiVersions version it does not support with UNSUPPORTED_VERSION. */
const UNSUPPORTED_VERSION = 35;

/** Receives findings as they are made (follow mode prints them at once). */
export type FindingSink = (f: Finding) => void;

/** Optional hooks for commands that want every request (kcid requests). */
export interface RequestObserver {
  request?(s: ConnState, r: KafkaRequest): void;
  response?(s: ConnState, r: KafkaResponse): void;
  unanswered?(s: ConnState, r: KafkaRequest): void;
  connectionEnd?(s: ConnState): void;
}

const STREAM_NOTE_RULES: Record<StreamNote['kind'], { id: string; severity: Severity } | null> = {
  gap: { id: 'capture-gap', severity: 'info' },
  desync: { id: 'stream-desync', severity: 'warning' },
  tls: { id: 'tls-on-kafka-port', severity: 'info' },
  'unknown-api': { id: 'unknown-api-key', severity: 'info' },
  // A frame cut short is the consequence of a gap or of the capture ending: the gap says it.
  'truncated-frame': null,
};

export class CaptureAnalyzer implements KafkaListener {
  readonly connections: ConnectionSummary[] = [];
  readonly kafkaPorts = new Set<number>();
  private readonly live = new Map<KafkaConnection, ConnState>();

  constructor(
    private readonly input: number,
    private readonly onFinding: FindingSink,
    private readonly observer: RequestObserver = {},
  ) {}

  connectionStart(c: KafkaConnection, _frame: number, tsSec: number, tsNsec: number): void {
    this.live.set(c, new ConnState(c, this.input, toMicros(tsSec, tsNsec)));
    this.kafkaPorts.add(c.broker.port);
  }

  request(c: KafkaConnection, r: KafkaRequest): void {
    const s = this.live.get(c);
    if (s === undefined) return;
    this.runRules(s, r, (rule, report) => rule.onRequest?.(s, r, report));
    this.update(s, r);
    this.observer.request?.(s, r);
  }

  response(c: KafkaConnection, r: KafkaResponse): void {
    const s = this.live.get(c);
    if (s === undefined) return;
    this.runRules(s, r, (rule, report) => rule.onResponse?.(s, r, report));
    s.responses++;
    s.lastUs = toMicros(r.tsSec, r.tsNsec);
    if (r.errorCode !== null && r.errorCode !== 0) s.errorResponses++;
    const q = r.request;
    if (q !== null) {
      const latency = s.lastUs - toMicros(q.tsSec, q.tsNsec);
      const bucket = latencyBucket(latency);
      s.latency.set(bucket, (s.latency.get(bucket) ?? 0) + 1);
      this.learnFromResponse(s, q, r);
    }
    this.observer.response?.(s, r);
  }

  unanswered(c: KafkaConnection, r: KafkaRequest): void {
    const s = this.live.get(c);
    if (s !== undefined) this.observer.unanswered?.(s, r);
  }

  note(c: KafkaConnection, n: StreamNote): void {
    const s = this.live.get(c);
    if (s === undefined) return;
    if (n.kind === 'gap') {
      s.gaps++;
      s.gapBytes += n.bytes;
    }
    const rule = STREAM_NOTE_RULES[n.kind];
    if (rule === null) return;
    this.onFinding({
      rule: rule.id,
      severity: rule.severity,
      message: n.message,
      frame: n.frame,
      timeUs: toMicros(n.tsSec, n.tsNsec),
      client: s.client,
      broker: s.broker,
      apiKey: n.apiKey ?? null,
      apiVersion: n.apiVersion ?? null,
      correlationId: n.correlationId ?? null,
      clientInstanceId: s.connectionId === null ? null : uuidToBase64(s.connectionId),
      input: this.input,
    });
  }

  connectionEnd(c: KafkaConnection, _reason: string): void {
    const s = this.live.get(c);
    if (s === undefined) return;
    this.live.delete(c);
    for (const rule of CONNECTION_RULES) {
      if (rule.onEnd !== undefined) rule.onEnd(s, (hit) => this.emit(rule, s, hit, null));
    }
    this.observer.connectionEnd?.(s);
    this.connections.push(summarize(s));
  }

  /** Connections still open at the end of the capture are ended by the TCP stage's finish(). */
  get liveConnections(): number {
    return this.live.size;
  }

  private runRules(
    s: ConnState,
    at: KafkaRequest | KafkaResponse,
    call: (rule: ConnectionRule, report: (hit: RuleHit) => void) => void,
  ): void {
    for (const rule of CONNECTION_RULES) call(rule, (hit) => this.emit(rule, s, hit, at));
  }

  private emit(rule: ConnectionRule, s: ConnState, hit: RuleHit, at: KafkaRequest | KafkaResponse | null): void {
    const about = hit.request ?? at;
    const request = about === null ? null : 'header' in about ? about : about.request;
    // The request's own ID, else the connection's (v1 headers), else the one the current request
    // just revealed (a judgement held until the connection showed its ID).
    const current = at !== null && 'header' in at ? at.header.clientInstanceId : null;
    const id = request?.header.clientInstanceId ?? s.connectionId ?? current;
    this.onFinding({
      rule: rule.id,
      severity: rule.severity,
      message: hit.message,
      frame: about?.frame ?? null,
      timeUs: about === null ? null : toMicros(about.tsSec, about.tsNsec),
      client: s.client,
      broker: s.broker,
      apiKey: request?.header.apiKey ?? null,
      apiVersion: request?.header.apiVersion ?? null,
      correlationId: request?.header.correlationId ?? null,
      clientInstanceId: id === null ? null : uuidToBase64(id),
      input: this.input,
    });
  }

  /** Fold a request into the connection state, after the rules have seen the state before it. */
  private update(s: ConnState, r: KafkaRequest): void {
    const h = r.header;
    if (s.requests === 0) {
      s.firstRequestFrame = r.frame;
      s.firstRequestUs = toMicros(r.tsSec, r.tsNsec);
      // First and last seen are about Kafka traffic: the first request, the last request or response.
      s.firstUs = s.firstRequestUs;
    }
    s.requests++;
    s.lastUs = toMicros(r.tsSec, r.tsNsec);
    s.apis.set(h.apiKey, (s.apis.get(h.apiKey) ?? 0) + 1);
    s.apiVersionsRetryAllowed = false;
    if (h.clientId !== null) addDistinct(s.clientIds, h.clientId);
    const id = h.clientInstanceId;
    if (id !== null) {
      s.sawTag0 = true;
      if (s.connectionId === null) s.connectionId = id;
      if (s.lastHeaderId === null || !uuidEquals(s.lastHeaderId, id)) addDistinct(s.headerIds, uuidToBase64(id));
      s.lastHeaderId = id;
    }
    const b = r.body;
    if (b === null) return;
    if (b.kind === 'ApiVersions' && (b.softwareName !== null || b.softwareVersion !== null)) {
      const sw = { name: b.softwareName ?? '', version: b.softwareVersion ?? '' };
      addDistinct(s.software, sw, (x, y) => x.name === y.name && x.version === y.version);
    }
    // A legacy client's own telemetry ID, sent in a v0 telemetry body (KIP-714).
    if ((b.kind === 'GetTelemetrySubscriptions' || b.kind === 'PushTelemetry') && id === null && s.telemetryId === null) {
      if (b.clientInstanceId !== null && !isZeroUuid(b.clientInstanceId)) s.telemetryId = uuidToBase64(b.clientInstanceId);
    }
  }

  private learnFromResponse(s: ConnState, q: KafkaRequest, r: KafkaResponse): void {
    // KIP-511: a client retries ApiVersions with a lower version after UNSUPPORTED_VERSION; while it is
    // still negotiating, the retry is part of the connection's first request.
    if (q.header.apiKey === API.ApiVersions && r.errorCode === UNSUPPORTED_VERSION && allApiVersions(s)) {
      s.apiVersionsRetryAllowed = true;
    }
    // KIP-714: the broker assigns a telemetry ID to a client that asked with a zero body ID.
    const b = r.body;
    if (b !== null && b.kind === 'GetTelemetrySubscriptions' && q.header.clientInstanceId === null && s.telemetryId === null) {
      if (b.clientInstanceId !== null && !isZeroUuid(b.clientInstanceId)) s.telemetryId = uuidToBase64(b.clientInstanceId);
    }
  }
}

function allApiVersions(s: ConnState): boolean {
  return s.apis.size === 1 && s.apis.has(API.ApiVersions);
}

function summarize(s: ConnState): ConnectionSummary {
  return {
    input: s.input,
    id: s.conn.tcp.id,
    client: s.client,
    clientIp: s.conn.client.ip,
    broker: s.broker,
    startSeen: s.conn.startSeen,
    firstFrame: s.conn.tcp.firstFrame,
    firstUs: s.firstUs,
    lastUs: s.lastUs,
    headerInstanceIds: s.headerIds,
    telemetryInstanceId: s.telemetryId,
    clientIds: s.clientIds,
    software: s.software,
    requests: s.requests,
    responses: s.responses,
    errorResponses: s.errorResponses,
    apis: [...s.apis].sort((a, b) => a[0] - b[0]),
    gaps: s.gaps,
    gapBytes: s.gapBytes,
    firstRequestFrame: s.firstRequestFrame,
    firstRequestUs: s.firstRequestUs,
    latency: [...s.latency].sort((a, b) => a[0] - b[0]).flat(),
  };
}
