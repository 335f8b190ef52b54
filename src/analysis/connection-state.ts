/**
 * What kcid remembers about one live Kafka connection. Small and bounded: counters, the IDs it
 * has seen, and a few deferred candidates; never the requests themselves. The connection rules see
 * it as a {@link RuleConnection} (rules/rule.ts), the part of it they read and keep.
 */
import type { KafkaConnection, KafkaRequest, KafkaResponse } from '../kafka/events.js';
import { EMPTY_LIST } from '../base/lists.js';
import { formatEndpoint } from '../net/address.js';
import { API_KEY, protocol } from '../kafka/protocol.js';
import { str, uuid } from '../kafka/fields.js';
import { isZeroUuid, uuidEquals, uuidToBase64 } from '../kafka/uuid.js';
import { toMicros } from '../base/time.js';
import { sameSoftware, withDistinct } from './distinct.js';
import type { SoftwareId } from './types.js';
import type { LatencyState } from './latency.js';
import type { RuleConnection } from './rules/rule.js';


export class ConnState implements LatencyState, RuleConnection {
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

  /**
   * Fold a request into the connection state, after the rules have seen the state before it
   * (`countApis`: count it per API, for the summary a run that does not judge does not make).
   */
  fold(r: KafkaRequest, countApis: boolean): void {
    const h = r.header;
    // The ClientId that names a connection is its first request's (the broker keeps it in the
    // connection context); when the capture missed the start, the first one seen.
    if (h.clientId !== null && this.clientIds.length === 0 && (this.requests === 0 || !this.conn.startSeen)) this.clientIds = [h.clientId];
    if (this.requests === 0) {
      this.firstRequestFrame = r.frame;
      this.firstRequestUs = toMicros(r.tsSec, r.tsNsec);
      // First and last seen are about Kafka traffic: the first request, the last request or response.
      this.firstUs = this.firstRequestUs;
      if (this.responses === 0) this.lastUs = this.firstRequestUs;
    }
    this.requests++;
    // A clock can step back inside a connection: its window runs from its earliest time to its latest.
    const us = toMicros(r.tsSec, r.tsNsec);
    if (us > this.lastUs) this.lastUs = us;
    if (us < this.firstUs) this.firstUs = us;
    if (countApis) this.countApi(h.apiKey);
    this.apiVersionsRetryAllowed = false;
    const id = h.clientInstanceId;
    if (id !== null) {
      this.sawTag0 = true;
      if (this.connectionId === null) this.connectionId = id;
      if (this.lastHeaderId === null || !uuidEquals(this.lastHeaderId, id)) {
        this.lastHeaderIdText = uuidToBase64(id);
        this.headerIds = withDistinct(this.headerIds, this.lastHeaderIdText);
      }
      this.lastHeaderId = id;
    }
    const b = r.body;
    if (b === null) return;
    const key = h.apiKey;
    if (key === API_KEY.ApiVersions) {
      const name = str(b, 'ClientSoftwareName') ?? null;
      const version = str(b, 'ClientSoftwareVersion') ?? null;
      if (name !== null || version !== null) this.software = withDistinct(this.software, { name: name ?? '', version: version ?? '' }, sameSoftware);
    }
    // A legacy client's own telemetry ID, sent in the body of a telemetry version that has one (KIP-714).
    if ((key === API_KEY.GetTelemetrySubscriptions || key === API_KEY.PushTelemetry) && id === null && this.telemetryId === null) {
      const bodyId = uuid(b, 'ClientInstanceId');
      if (bodyId != null && !isZeroUuid(bodyId)) this.telemetryId = uuidToBase64(bodyId);
    }
  }

  /** Learn from a response what its request's connection now allows or is (after the rules saw it). */
  learnFromResponse(q: KafkaRequest, r: KafkaResponse): void {
    // KIP-511: a client retries ApiVersions with a lower version after UNSUPPORTED_VERSION; while it is
    // still negotiating, the retry is part of the connection's first request.
    if (q.header.apiKey === API_KEY.ApiVersions && r.errorCode !== null && r.errorCode === protocol().errorCode('UNSUPPORTED_VERSION') && this.apis.length === 2 && this.apis[0] === API_KEY.ApiVersions) {
      this.apiVersionsRetryAllowed = true;
    }
    // KIP-714: the broker assigns a telemetry ID to a client that asked with a zero body ID.
    if (q.header.apiKey === API_KEY.GetTelemetrySubscriptions && q.header.clientInstanceId === null && this.telemetryId === null) {
      const assigned = uuid(r.body, 'ClientInstanceId');
      if (assigned != null && !isZeroUuid(assigned)) this.telemetryId = uuidToBase64(assigned);
    }
  }
}
