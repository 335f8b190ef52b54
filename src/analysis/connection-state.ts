/**
 * What kcid remembers about one live Kafka connection. Small and bounded: counters, the IDs it
 * has seen, and a few deferred candidates; never the requests themselves.
 */
import type { KafkaConnection, KafkaRequest } from '../kafka/conversation.js';
import { formatEndpoint } from '../net/address.js';
import type { SoftwareId } from './types.js';

/** Distinct values kept per connection for lists such as ClientIds (a hostile client could send millions). */
export const MAX_DISTINCT_VALUES = 16;
/** client-id-after-first candidates kept while waiting to learn whether the connection sends tag 0. */
export const MAX_DEFERRED = 16;

export class ConnState {
  readonly client: string;
  readonly broker: string;
  requests = 0;
  responses = 0;
  errorResponses = 0;
  readonly apis = new Map<number, number>();
  /** Header ClientInstanceIds (base64), in order of first appearance. */
  readonly headerIds: string[] = [];
  /** The first header ID: the ID of the connection's context (KIP-1313). */
  connectionId: Uint8Array | null = null;
  /** The most recent header ID. */
  lastHeaderId: Uint8Array | null = null;
  /** The client has sent tag 0 on this connection. */
  sawTag0 = false;
  telemetryId: string | null = null;
  readonly clientIds: string[] = [];
  readonly software: SoftwareId[] = [];
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
  readonly deferredClientIds: KafkaRequest[] = [];
  deferredOverflow = 0;
  /** Latency histogram (bucket index → count); see latency.ts. */
  readonly latency = new Map<number, number>();

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
}

export function addDistinct<T>(list: T[], value: T, same: (a: T, b: T) => boolean = Object.is): void {
  if (list.length >= MAX_DISTINCT_VALUES) return;
  for (const v of list) if (same(v, value)) return;
  list.push(value);
}
