/**
 * A connection's {@link ConnectionSummary}, made when it ends, and the {@link Interner} that lets the
 * summaries of many connections share what they have in common (broker, ClientIds, API counts).
 */
import type { Endpoint } from '../tcp/types.js';
import { EMPTY_LIST } from '../base/lists.js';
import type { TlsInfo } from '../tls/types.js';
import type { ConnState } from './connection-state.js';
import { sortedPairs } from './latency.js';
import type { ConnectionSummary, SoftwareId } from './types.js';

/**
 * A summary lives until the report, one per connection, so it is kept small: arrays are copied
 * to their exact length (an array grown by push keeps room for 16 more) and sorted without
 * Array#sort's scratch copy, and what many connections have in common is stored once.
 */
export function summarize(s: ConnState, shared: Interner): ConnectionSummary {
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
export class Interner {
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
