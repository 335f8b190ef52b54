/**
 * The per-capture analyzer: listens to Kafka conversations as the capture streams by, keeps a
 * small state per live connection, runs the connection rules on every request and response, and
 * turns each connection into a {@link ConnectionSummary} when it ends.
 */
import type { KafkaConnection, KafkaListener, KafkaRequest, KafkaResponse, StreamNote } from '../kafka/events.js';
import type { Endpoint } from '../tcp/types.js';
import { API_KEY, protocol } from '../kafka/protocol.js';
import { str, uuid } from '../kafka/fields.js';
import { isZeroUuid, uuidEquals, uuidToBase64 } from '../kafka/uuid.js';
import { toMicros } from '../base/time.js';
import { ConnState, sameSoftware, withDistinct } from './connection-state.js';
import { LatencyKeeper, sortedPairs } from './latency.js';
import { CONNECTION_RULES } from './rules/index.js';
import type { ConnectionRule, RuleHit, StreamRule } from './rules/rule.js';
import { captureGap, malformedBody, removedApiVersion, streamDesync, tlsAlert, tlsOnKafkaPort, tlsRecordAuthFailed, tlsRecordUnreadable, unknownApiKey } from './rules/stream-rules.js';
import { makeFinding } from './finding.js';
import { requestOwner } from './owner.js';
import { EMPTY_LIST } from '../base/lists.js';
import type { ConnectionSummary, Finding, SoftwareId } from './types.js';
import type { TlsInfo } from '../tls/types.js';
import { TelemetryCollector, type TelemetryDecoding } from './telemetry-events.js';
import { DEFAULT_MAX_TELEMETRY_BYTES } from '../telemetry/names.js';


/** Connection summaries kept per input by default (about 0.4 KB each: 399 B measured, the heap before and after). */
export const DEFAULT_MAX_SUMMARIES = 250_000;

/** Receives findings as they are made (follow mode prints them at once). */
export type FindingSink = (f: Finding) => void;

/** Optional hooks for commands that want every request (kcid requests). */
export interface RequestObserver {
  /** The first packet of the input arrived (µs since the epoch). */
  captureStart?(us: number): void;
  request?(s: ConnState, r: KafkaRequest): void;
  response?(s: ConnState, r: KafkaResponse): void;
  unanswered?(s: ConnState, r: KafkaRequest): void;
  connectionEnd?(s: ConnState): void;
}

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

export class CaptureAnalyzer implements KafkaListener {
  readonly connections: ConnectionSummary[] = [];
  readonly kafkaPorts = new Set<number>();
  /** Connections with a state (made on their first Kafka event, dropped at their end). */
  private liveStates = 0;
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

  /**
   * @param maxSummaries connections kept as summaries for the report (instances, listing); the
   *   ones that end after that are counted in {@link unlisted} instead, so memory stays bounded
   *   whatever the number of connections.
   */
  constructor(
    private readonly input: number,
    private readonly onFinding: FindingSink,
    private readonly observer: RequestObserver = {},
    private readonly maxSummaries = DEFAULT_MAX_SUMMARIES,
    telemetry: TelemetryDecoding = { collect: false, decode: 'none', maxBytes: DEFAULT_MAX_TELEMETRY_BYTES, read: null, load: null },
    /**
     * False for a command that shows the requests only (kcid requests): no rule is run, no finding
     * made, no latency kept and no connection summarised; each connection's state is still kept for
     * the observer (its endpoints, ClientIds and client instance ID).
     */
    private readonly judge = true,
  ) {
    this.telemetry = new TelemetryCollector(input, telemetry);
    this.telemetryOn = telemetry.collect && judge;
  }

  /** Collect the KIP-714 conversation for the telemetry rules (every command that judges rules). */
  private readonly telemetryOn: boolean;

  /** KIP-714 telemetry requests, for the summary (see telemetry-events.ts). */
  readonly telemetry: TelemetryCollector;

  /** Connections beyond maxSummaries, with their requests and responses: counted, not kept. */
  readonly unlisted = { connections: 0, requests: 0, responses: 0 };

  connectionStart(c: KafkaConnection): void {
    this.kafkaPorts.add(c.broker.port);
  }

  /**
   * The connection's state, made on its first Kafka event: a connection that never carries one (a
   * SYN flood, a health check that connects and leaves) costs no state at all.
   */
  private state(c: KafkaConnection): ConnState {
    let s = c.listenerState as ConnState | null;
    if (s === null) {
      s = new ConnState(c, this.input, toMicros(c.tcp.firstTsSec, c.tcp.firstTsNsec));
      c.listenerState = s;
      this.liveStates++;
    }
    return s;
  }

  request(c: KafkaConnection, r: KafkaRequest): void {
    const s = this.state(c);
    if (this.judge) {
      this.judging(s, r);
      const { fns, reports } = this.onRequest;
      for (let i = 0; i < fns.length; i++) fns[i]!(s, r, reports[i]!);
    }
    this.update(s, r);
    if (this.telemetryOn && r.header.apiKey === API_KEY.PushTelemetry) this.telemetry.request(s, r);
    this.observer.request?.(s, r);
  }

  response(c: KafkaConnection, r: KafkaResponse): void {
    const s = this.state(c);
    if (!this.judge) {
      s.responses++;
      this.observer.response?.(s, r);
      return;
    }
    this.judging(s, r);
    const { fns, reports } = this.onResponse;
    for (let i = 0; i < fns.length; i++) fns[i]!(s, r, reports[i]!);
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
      this.learnFromResponse(s, q, r);
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
    const s = this.state(c);
    if (n.kind === 'gap') {
      s.gaps++;
      s.gapBytes += n.bytes;
    }
    const rule = STREAM_NOTE_RULES[n.kind];
    if (rule === null || !this.judge) return;
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

  connectionEnd(c: KafkaConnection, _reason: string): void {
    const s = c.listenerState as ConnState | null;
    if (s === null) {
      this.emptyConnections++;
      return;
    }
    c.listenerState = null;
    this.liveStates--;
    if (!this.judge) {
      this.passedConnections++;
      this.observer.connectionEnd?.(s);
      return;
    }
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

  /** Without judging: Kafka connections that ended (none is summarised), for the progress line. */
  passedConnections = 0;

  /** Kafka connections that ended without a request, a response, a gap or a finding. */
  emptyConnections = 0;

  /** Connections still open at the end of the capture are ended by the TCP stage's finish(). */
  get liveConnections(): number {
    return this.liveStates;
  }

  /** The connection and message the rules are judging, for {@link reporters}. */
  private judging(s: ConnState, at: KafkaRequest | KafkaResponse | null): void {
    this.judged = s;
    this.judgedAt = at;
  }

  private emit(rule: ConnectionRule, s: ConnState, hit: RuleHit, at: KafkaRequest | KafkaResponse | null): void {
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

  /** Fold a request into the connection state, after the rules have seen the state before it. */
  private update(s: ConnState, r: KafkaRequest): void {
    const h = r.header;
    // The ClientId that names a connection is its first request's (the broker keeps it in the
    // connection context); when the capture missed the start, the first one seen.
    if (h.clientId !== null && s.clientIds.length === 0 && (s.requests === 0 || !s.conn.startSeen)) s.clientIds = [h.clientId];
    if (s.requests === 0) {
      s.firstRequestFrame = r.frame;
      s.firstRequestUs = toMicros(r.tsSec, r.tsNsec);
      // First and last seen are about Kafka traffic: the first request, the last request or response.
      s.firstUs = s.firstRequestUs;
      if (s.responses === 0) s.lastUs = s.firstRequestUs;
    }
    s.requests++;
    const us = toMicros(r.tsSec, r.tsNsec);
    if (us > s.lastUs) s.lastUs = us;
    if (us < s.firstUs) s.firstUs = us;
    // Per-API counts feed the connection's summary, which a run that does not judge does not make.
    if (this.judge) s.countApi(h.apiKey);
    s.apiVersionsRetryAllowed = false;
    const id = h.clientInstanceId;
    if (id !== null) {
      s.sawTag0 = true;
      if (s.connectionId === null) s.connectionId = id;
      if (s.lastHeaderId === null || !uuidEquals(s.lastHeaderId, id)) {
        s.lastHeaderIdText = uuidToBase64(id);
        s.headerIds = withDistinct(s.headerIds, s.lastHeaderIdText);
      }
      s.lastHeaderId = id;
    }
    const b = r.body;
    if (b === null) return;
    const key = h.apiKey;
    if (key === API_KEY.ApiVersions) {
      const name = str(b, 'ClientSoftwareName') ?? null;
      const version = str(b, 'ClientSoftwareVersion') ?? null;
      if (name !== null || version !== null) s.software = withDistinct(s.software, { name: name ?? '', version: version ?? '' }, sameSoftware);
    }
    // A legacy client's own telemetry ID, sent in the body of a telemetry version that has one (KIP-714).
    if ((key === API_KEY.GetTelemetrySubscriptions || key === API_KEY.PushTelemetry) && id === null && s.telemetryId === null) {
      const bodyId = uuid(b, 'ClientInstanceId');
      if (bodyId != null && !isZeroUuid(bodyId)) s.telemetryId = uuidToBase64(bodyId);
    }
  }

  private learnFromResponse(s: ConnState, q: KafkaRequest, r: KafkaResponse): void {
    // KIP-511: a client retries ApiVersions with a lower version after UNSUPPORTED_VERSION; while it is
    // still negotiating, the retry is part of the connection's first request.
    if (q.header.apiKey === API_KEY.ApiVersions && r.errorCode !== null && r.errorCode === protocol().errorCode('UNSUPPORTED_VERSION') && allApiVersions(s)) {
      s.apiVersionsRetryAllowed = true;
    }
    // KIP-714: the broker assigns a telemetry ID to a client that asked with a zero body ID.
    if (q.header.apiKey === API_KEY.GetTelemetrySubscriptions && q.header.clientInstanceId === null && s.telemetryId === null) {
      const assigned = uuid(r.body, 'ClientInstanceId');
      if (assigned != null && !isZeroUuid(assigned)) s.telemetryId = uuidToBase64(assigned);
    }
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

function allApiVersions(s: ConnState): boolean {
  return s.apis.length === 2 && s.apis[0] === API_KEY.ApiVersions;
}

/**
 * A summary lives until the report, one per connection, so it is kept small: arrays are copied
 * to their exact length (an array grown by push keeps room for 16 more) and sorted without
 * Array#sort's scratch copy, and what many connections have in common is stored once.
 */
function summarize(s: ConnState, shared: Interner): ConnectionSummary {
  return new Summary(s, shared);
}

/**
 * A class rather than an object literal: the CPU profile of the analysis without inlining put
 * 2.5 µs per summary in the literal (V8's allocation site for these long-lived objects was on its
 * slow path) and 0.2 µs in a constructor; the analysis of 100,000 connections ran 0.1-0.2 s
 * faster, A/B. The fields are declared in the order the JSON formats list them, and declared
 * again rather than merged from the interface: so TypeScript checks that the constructor assigns
 * every one.
 */
class Summary implements ConnectionSummary {
  input: number;
  id: number;
  client: string;
  clientIp: string;
  broker: string;
  startSeen: boolean;
  firstFrame: number;
  firstUs: number;
  lastUs: number;
  headerInstanceIds: string[];
  telemetryInstanceId: string | null;
  clientIds: string[];
  software: SoftwareId[];
  requests: number;
  responses: number;
  errorResponses: number;
  errors: number;
  apis: [number, number][];
  gaps: number;
  gapBytes: number;
  firstRequestFrame: number | null;
  firstRequestUs: number | null;
  latency: number[];
  latencyUs: number[] | undefined;
  tls: TlsInfo | undefined;

  constructor(s: ConnState, shared: Interner) {
    this.input = s.input;
    this.id = s.conn.tcp.id;
    this.client = flat(s.client);
    this.clientIp = s.conn.client.ip;
    this.broker = shared.endpoint(s.conn.broker, s.broker);
    this.startSeen = s.conn.startSeen;
    this.firstFrame = s.conn.tcp.firstFrame;
    this.firstUs = s.firstUs;
    this.lastUs = s.lastUs;
    this.headerInstanceIds = shared.strings(s.headerIds);
    this.telemetryInstanceId = s.telemetryId;
    this.clientIds = shared.strings(s.clientIds);
    this.software = shared.softwareIds(s.software);
    this.requests = s.requests;
    this.responses = s.responses;
    this.errorResponses = s.errorResponses;
    this.errors = s.errors;
    this.apis = apiCounts(s, shared);
    this.gaps = s.gaps;
    this.gapBytes = s.gapBytes;
    this.firstRequestFrame = s.firstRequestFrame;
    this.firstRequestUs = s.firstRequestUs;
    // One or the other: every latency (the histogram is derived when needed), or the histogram.
    this.latency = s.latencyUs !== null || s.latency.length === 0 ? EMPTY_LIST : s.latency.slice();
    this.latencyUs = s.latencyUs === null ? undefined : sortedPairs(s.latencyUs);
    this.tls = s.conn.tlsInfo ?? undefined;
  }
}

/** [apiKey, count] pairs ascending by key, the list and its pairs shared with other connections. */
function apiCounts(s: ConnState, shared: Interner): [number, number][] {
  const keys = sortedApis(s.apis);
  const pairs = new Array<[number, number]>(keys.length);
  for (let i = 0; i < keys.length; i++) pairs[i] = shared.pair(keys[i]!, s.apiCount(keys[i]!));
  return shared.list(pairs, hashPairs(pairs), samePair);
}

const samePair = (a: readonly [number, number], b: readonly [number, number]): boolean => a[0] === b[0] && a[1] === b[1];

/** FNV-1a over the (key, count) pairs: cheap, and no key string to build and hash per connection. */
function hashPairs(pairs: readonly (readonly [number, number])[]): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < pairs.length; i++) h = Math.imul(Math.imul(h ^ pairs[i]![0], 0x01000193) ^ pairs[i]![1], 0x01000193);
  return h & 0x3fffffff;
}

/** The API keys of [key, count, ...] pairs, ascending. */
function sortedApis(pairs: readonly number[]): number[] {
  const keys = new Array<number>(pairs.length / 2);
  for (let p = 0; p < pairs.length; p += 2) keys[p / 2] = pairs[p]!;
  return ascending(keys);
}

/** `keys` sorted in place, ascending (insertion sort: a handful of keys, and no scratch copy). */
function ascending(keys: number[]): number[] {
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i;
    for (; j > 0 && keys[j - 1]! > key; j--) keys[j] = keys[j - 1]!;
    keys[j] = key;
  }
  return keys;
}

/** Values kept at most by an {@link Interner} (a hostile capture may make every one distinct). */
const MAX_INTERNED = 65_536;

/**
 * Values that many connections share (broker, ClientId, software), kept once per capture rather
 * than once per connection. Past MAX_INTERNED values, new ones are kept as they come. (Client
 * and broker addresses are shared already: the TCP stage makes one string per address.)
 */
class Interner {
  private readonly known = new Map<string, string>();
  private readonly endpoints = new Map<string, Map<number, string>>();
  private readonly software = new Map<string, Map<string, SoftwareId>>();
  private readonly pairs = new Map<number, Map<number, [number, number]>>();
  private readonly lists = new Map<number, unknown[][]>();
  private readonly singles = new Map<string, string[]>();
  private readonly softwareSingles = new Map<SoftwareId, SoftwareId[]>();
  private count = 0;

  /** `text` ('ip:port') of an endpoint, found by its address string (shared) and port: no string hashing. */
  endpoint(e: Endpoint, text: string): string {
    let byPort = this.endpoints.get(e.ip);
    const known = byPort?.get(e.port);
    if (known !== undefined) return known;
    if (this.count >= MAX_INTERNED) return text;
    this.count++;
    if (byPort === undefined) this.endpoints.set(e.ip, (byPort = new Map()));
    byPort.set(e.port, flat(text));
    return text;
  }

  string(text: string): string {
    const known = this.known.get(text);
    if (known !== undefined) return known;
    if (this.count >= MAX_INTERNED) return text;
    this.count++;
    this.known.set(text, text);
    return text;
  }

  /** [key, count] (an API and its request count): most connections share a few of these. Frozen: shared. */
  pair(key: number, count: number): [number, number] {
    let byCount = this.pairs.get(key);
    const known = byCount?.get(count);
    if (known !== undefined) return known;
    const pair = Object.freeze([key, count]) as [number, number];
    if (this.count >= MAX_INTERNED) return pair;
    this.count++;
    if (byCount === undefined) this.pairs.set(key, (byCount = new Map()));
    byCount.set(count, pair);
    return pair;
  }

  /** The texts, each shared, in a list shared with the connections that have the same one text. */
  strings(texts: readonly string[]): string[] {
    if (texts.length === 0) return EMPTY_LIST;
    if (texts.length === 1) {
      // One ClientId, one header ID: the common case, looked up by the text itself.
      const known = this.singles.get(texts[0]!);
      if (known !== undefined) return known;
      const one = [this.string(texts[0]!)];
      if (this.count < MAX_INTERNED) {
        this.count++;
        this.singles.set(one[0]!, one);
      }
      return one;
    }
    const out = new Array<string>(texts.length);
    for (let i = 0; i < texts.length; i++) out[i] = this.string(texts[i]!);
    return out;
  }

  /**
   * One shared list per content (not frozen: freezing an array changes its elements kind, which
   * costs more than the sharing saves; nothing mutates a summary's lists): the connections of one
   * client share their API counts. `hash` is of the content; equal lists compare `same` item by item.
   */
  list<T>(items: T[], hash: number, same: (a: T, b: T) => boolean): T[] {
    let bucket = this.lists.get(hash) as T[][] | undefined;
    if (bucket !== undefined) {
      for (const known of bucket) if (sameList(known, items, same)) return known;
    }
    if (this.count >= MAX_INTERNED) return items;
    this.count++;
    if (bucket === undefined) this.lists.set(hash, (bucket = []));
    bucket.push(items);
    return items;
  }

  softwareIds(ids: readonly SoftwareId[]): SoftwareId[] {
    if (ids.length === 0) return EMPTY_LIST;
    const out = new Array<SoftwareId>(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      let byVersion = this.software.get(id.name);
      let known = byVersion?.get(id.version);
      if (known === undefined) {
        known = id;
        if (this.count < MAX_INTERNED) {
          this.count++;
          if (byVersion === undefined) this.software.set(id.name, (byVersion = new Map()));
          byVersion.set(id.version, id);
        }
      }
      out[i] = known;
    }
    if (out.length === 1) {
      // One software name and version: the list itself is shared by the connections that sent it.
      const single = this.softwareSingles.get(out[0]!);
      if (single !== undefined) return single;
      if (this.count < MAX_INTERNED) {
        this.count++;
        this.softwareSingles.set(out[0]!, out);
      }
    }
    return out;
  }
}

function sameList<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!same(a[i]!, b[i]!)) return false;
  return true;
}

/**
 * The same text as one flat string. Text built by concatenation ('ip:port') is a V8 "cons string"
 * (two pointers to its parts) of about twice the size; reading a character flattens it, and the
 * garbage collector then drops the cons wrapper.
 */
function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}
