/**
 * What kcid remembers about one live Kafka connection. Small and bounded: counters, the IDs it
 * has seen, and a few deferred candidates; never the requests themselves.
 */
import type { KafkaConnection, KafkaRequest } from '../kafka/events.js';
import { EMPTY_LIST } from '../base/lists.js';
import { formatEndpoint } from '../net/address.js';
import { API_KEY } from '../kafka/protocol.js';
import type { SoftwareId } from './types.js';
import type { LatencyState } from './latency.js';

/** Distinct values kept per connection for lists such as ClientIds (a hostile client could send millions). */
export const MAX_DISTINCT_VALUES = 16;
/** client-id-after-first candidates kept while waiting to learn whether the connection sends tag 0. */
export const MAX_DEFERRED = 16;

export class ConnState implements LatencyState {
  readonly client: string;
  readonly broker: string;
  requests = 0;
  responses = 0;
  /** Responses that carry a non-zero error code (top level or per topic, partition, group). */
  errorResponses = 0;
  /** Non-zero error codes the responses carry, every one counted. */
  errors = 0;
  /** Requests per API as [apiKey, count, apiKey, count, ...] in order of first use (a handful of APIs). */
  apis: number[] = EMPTY_LIST;
  /** Header ClientInstanceIds (base64), in order of first appearance. */
  headerIds: string[] = EMPTY_LIST;
  /** The first header ID: the ID of the connection's context (KIP-1313). */
  connectionId: Uint8Array | null = null;
  /** The most recent header ID, and its base64 (made once per ID the connection sends, not per request). */
  lastHeaderId: Uint8Array | null = null;
  lastHeaderIdText: string | null = null;
  /** The client has sent tag 0 on this connection. */
  sawTag0 = false;
  telemetryId: string | null = null;
  clientIds: string[] = EMPTY_LIST;
  software: SoftwareId[] = EMPTY_LIST;
  gaps = 0;
  /** Findings raised on this connection so far. */
  findings = 0;
  gapBytes = 0;
  firstRequestFrame: number | null = null;
  firstRequestUs: number | null = null;
  firstUs: number;
  lastUs: number;
  /** Every request so far was an ApiVersions answered with UNSUPPORTED_VERSION: a retry still counts as first. */
  apiVersionsRetryAllowed = false;
  /** Requests with a non-null ClientId after the first, held until the connection is known to send tag 0. */
  deferredClientIds: KafkaRequest[] = EMPTY_LIST;
  deferredOverflow = 0;
  /** Error codes Kafka does not define that this connection's responses carried (each noted once). */
  unknownErrorCodes: number[] = EMPTY_LIST;
  /** A legacy client's first request with a ClientId other than the connection's (client-id-changed). */
  clientIdChange: KafkaRequest | null = null;
  /** Latency histogram as [bucket, count, ...] ascending by bucket (see latency.ts): a handful of buckets. */
  latency: number[] = EMPTY_LIST;
  /** Every latency as [apiKey, µs, ...] in arrival order while they are kept exactly, else null (see LatencyKeeper). */
  latencyUs: number[] | null = EMPTY_LIST;
  /**
   * One slot for a RequestObserver's own state of this connection (kcid requests keeps its rows
   * awaiting a response here): a field dies with the connection, where a Map keyed by request or
   * connection keeps dead entries reachable across garbage collections.
   */
  observerState: unknown = null;
  /**
   * One slot for the text a report makes once per connection and writes in each of its rows (kcid
   * requests' NDJSON keeps its endpoints as JSON bytes here), for the same reason.
   */
  textState: unknown = null;

  constructor(
    readonly conn: KafkaConnection,
    readonly input: number,
    firstUs: number,
  ) {
    this.client = formatEndpoint(conn.client.ip, conn.client.port);
    this.broker = formatEndpoint(conn.broker.ip, conn.broker.port);
    this.firstUs = firstUs;
    this.lastUs = firstUs;
  }

  /** Counts a request of this API. */
  countApi(apiKey: number): void {
    const a = this.apis;
    for (let i = 0; i < a.length; i += 2) {
      if (a[i] === apiKey) {
        a[i + 1]!++;
        return;
      }
    }
    if (a.length === 0) this.apis = [apiKey, 1];
    else a.push(apiKey, 1);
  }

  /** Counts a response whose latency fell in `bucket`. */
  countLatency(bucket: number): void {
    const h = this.latency;
    let i = 0;
    for (; i < h.length && h[i]! <= bucket; i += 2) {
      if (h[i] === bucket) {
        h[i + 1]!++;
        return;
      }
    }
    if (h.length === 0) {
      this.latency = [bucket, 1];
      return;
    }
    // A new bucket at i: the pairs after it move up by one.
    h.push(0, 0);
    for (let j = h.length - 1; j > i + 1; j--) h[j] = h[j - 2]!;
    h[i] = bucket;
    h[i + 1] = 1;
  }

  /** Requests of this API so far. */
  apiCount(apiKey: number): number {
    const a = this.apis;
    for (let i = 0; i < a.length; i += 2) if (a[i] === apiKey) return a[i + 1]!;
    return 0;
  }
}

/**
 * Is this the connection's first request? The first one, or an ApiVersions retried after UNSUPPORTED_VERSION
 * (KIP-511: the client is still negotiating, so the retry is part of the first request).
 */
export function isFirstRequest(s: ConnState, r: KafkaRequest): boolean {
  return s.requests === 0 || (r.header.apiKey === API_KEY.ApiVersions && s.apiVersionsRetryAllowed);
}

/** The same software name and version (a client sends them in ApiVersions). */
export const sameSoftware = (a: SoftwareId, b: SoftwareId): boolean => a.name === b.name && a.version === b.version;

/**
 * `list` with `value` added unless already there or the list is full (MAX_DISTINCT_VALUES): the
 * same array, or a new one-element array when `list` is empty (possibly the shared empty one).
 */
export function withDistinct<T>(list: T[], value: T, same: (a: T, b: T) => boolean = Object.is): T[] {
  if (list.length === 0) return [value];
  addDistinct(list, value, same);
  return list;
}

export function addDistinct<T>(list: T[], value: T, same: (a: T, b: T) => boolean = Object.is): void {
  if (list.length >= MAX_DISTINCT_VALUES) return;
  for (const v of list) if (same(v, value)) return;
  list.push(value);
}
