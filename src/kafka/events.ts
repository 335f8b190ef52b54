/**
 * What the Kafka stage tells the analysis: a connection's requests, responses and notes, with roles
 * settled (who is the client, who is the broker).
 */
import type { Endpoint, TcpConnection } from '../tcp/types.js';
import type { Struct } from './fields.js';
import type { RequestHeader } from './types.js';
import type { TlsInfo } from '../tls/types.js';

export interface KafkaRequest {
  /** Frame in which the request's last byte arrived (as Wireshark reports a reassembled PDU). */
  frame: number;
  tsSec: number;
  tsNsec: number;
  /** Frame size in bytes, without the 4-byte size prefix. */
  size: number;
  header: RequestHeader;
  /**
   * The body's fields, by the schema's names: those kcid reads (see bodies.ts), or all of them with
   * `kcid requests --bodies`; null when none is read or the body did not parse.
   */
  body: Struct | null;
  /** False when the frame's prefix kept ended before the body did (decoded as far as it goes). */
  bodyComplete: boolean;
  /** Why the body could not be decoded, when kcid tried (the path and the problem). */
  bodyError: string | null;
  /**
   * With KafkaOptions.bodyForm 'json': the body's JSON as UTF-8 (Kafka's converter form, secrets
   * hidden); null otherwise, or when there is none (a version kcid does not know, a body that did not parse).
   */
  bodyJson: Uint8Array | null;
  /** PushTelemetry's Metrics bytes (a copy), when KafkaOptions.keepTelemetryBytes kept this frame whole. */
  metricsBlob: Uint8Array | null;
  /** PushTelemetry: the Metrics blob's declared size (never copied for this), null when null or unreadable; null for other APIs. */
  metricsBytes: number | null;
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
  /** The top-level ErrorCode, when the response version has one (null otherwise, or when not decoded). */
  errorCode: number | null;
  /** Every non-zero ErrorCode the response carries (top level, then per topic, partition, group), in wire order. */
  errorCodes: readonly number[];
  /** The body's fields (as for requests); null when none is read or the body did not parse. */
  body: Struct | null;
  bodyComplete: boolean;
  /** Where the body broke ("malformed at offset 14: ApiVersions v1 response: ThrottleTimeMs: needs 4 bytes, ..."); `body` and `errorCodes` hold what was read before. */
  bodyError: string | null;
  /**
   * With bodyError: why a known client accepts the short body (bodies.ts, toleratedShortBody). Without:
   * an ApiVersions response read as v0 after the version sent failed, and why (KIP-511). Absent otherwise.
   */
  bodyTolerated?: string;
  /** ApiVersions: bytes the frame holds after the body as read (as sent, or as v0 after the fallback); absent when none. */
  bodyLeftover?: number;
  /** As for requests. */
  bodyJson: Uint8Array | null;
  complete: boolean;
}

export type StreamNoteKind = 'gap' | 'desync' | 'tls' | 'tls-auth' | 'tls-record' | 'tls-alert' | 'unknown-api' | 'removed-version' | 'malformed-body' | 'truncated-frame';

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
  /** For unknown-api, removed-version and malformed-body: the API key and version. */
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
  /** What the TLS handshake showed, for a connection over TLS; else null. */
  readonly tlsInfo: TlsInfo | null;
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
