/**
 * The rule API: what a rule is, and what it sees. A stable id, default severity, a one-line summary, a paragraph of explanation
 * citing the spec, and hooks. Connection rules see one connection's requests and responses as
 * they stream by; report rules run once over the merged summary of every capture.
 */
import type { KafkaConnection, KafkaRequest, KafkaResponse } from '../../kafka/events.js';
import { API_KEY } from '../../kafka/protocol.js';
import type { Severity } from '../types.js';
import type { Kip1313Revision } from '../../kafka/protocol.js';
import type { InstanceModel } from '../instances.js';
import type { TelemetryConversation } from '../telemetry-conversations.js';
import type { TelemetryEvent } from '../types.js';

export interface RuleMeta {
  id: string;
  severity: Severity;
  /** One line for `kcid rules`. */
  summary: string;
  /** One paragraph: what the rule checks and why, citing the spec. */
  explanation: string;
  /** The spec text the rule comes from (quoted, with its source). */
  spec: string;
  /**
   * For KIP-1313's rules, the revision the rule comes from: the voting one (request header v2, tag 0 on
   * every request), the accepted one (request header v3, the ID on a connection's first request only),
   * or both (what the two revisions share). `kcid rules` shows it.
   */
  revision?: Kip1313Revision | 'both';
}

/** What a rule reports; the analyzer fills in connection, time and instance. */
export interface RuleHit {
  message: string;
  /** The request the finding is about, when not the one being looked at (a deferred judgement). */
  request?: KafkaRequest;
}

/** client-id-after-first candidates kept while waiting to learn whether the connection sends tag 0. */
export const MAX_DEFERRED = 16;

/**
 * What a connection rule sees of its connection: what the requests before this one showed (the
 * analyzer updates it after the rules), and the few fields rules keep there themselves.
 */
export interface RuleConnection {
  readonly conn: Pick<KafkaConnection, 'startSeen'>;
  /** Requests before this one. */
  readonly requests: number;
  /** The connection's ClientId (its first request's), when it sent one. */
  readonly clientIds: readonly string[];
  /** The first header ID: the ID of the connection's context (KIP-1313). */
  readonly connectionId: Uint8Array | null;
  /** The most recent header ID. */
  readonly lastHeaderId: Uint8Array | null;
  /** The client has sent tag 0 on this connection. */
  readonly sawTag0: boolean;
  /** Every request so far was an ApiVersions answered with UNSUPPORTED_VERSION: a retry still counts as first. */
  readonly apiVersionsRetryAllowed: boolean;
  /** client-id-after-first: requests with a ClientId after the first, held until the connection is known to send tag 0. */
  deferredClientIds: KafkaRequest[];
  deferredOverflow: number;
  /** unknown-error-code: the codes this connection's responses carried (each noted once). */
  unknownErrorCodes: number[];
  /** client-id-changed: a legacy client's first request with a ClientId other than the connection's. */
  clientIdChange: KafkaRequest | null;
}

/**
 * Is this the connection's first request? The first one, or an ApiVersions retried after UNSUPPORTED_VERSION
 * (KIP-511: the client is still negotiating, so the retry is part of the first request).
 */
export function isFirstRequest(s: RuleConnection, r: KafkaRequest): boolean {
  return s.requests === 0 || (r.header.apiKey === API_KEY.ApiVersions && s.apiVersionsRetryAllowed);
}

export interface ConnectionRule extends RuleMeta {
  kind: 'connection';
  /** Called before the connection state is updated with this request. */
  onRequest?(s: RuleConnection, r: KafkaRequest, report: (hit: RuleHit) => void): void;
  onResponse?(s: RuleConnection, r: KafkaResponse, report: (hit: RuleHit) => void): void;
  /** Called when the connection ends, before its state is dropped. */
  onEnd?(s: RuleConnection, report: (hit: RuleHit) => void): void;
}

/** A finding about an instance as a whole, anchored at one of its connections. */
export interface InstanceHit {
  message: string;
  /** Index into instance.connections of the connection that shows the problem. */
  connection: number;
}

export interface ReportRule extends RuleMeta {
  kind: 'report';
  check(instance: InstanceModel, report: (hit: InstanceHit) => void): void;
}

/** A finding about one telemetry request of a KIP-714 conversation. */
export interface TelemetryHit {
  message: string;
  event: TelemetryEvent;
}

/** Judges one client's KIP-714 conversation across every connection and broker of the merged summary. */
export interface TelemetryRule extends RuleMeta {
  kind: 'telemetry';
  /**
   * The rule reads what is inside the pushes (metric names, temporality, whether they decode): the
   * analysis decodes PushTelemetry's metrics only while such a rule is on (or an output shows them).
   */
  readsMetrics?: true;
  check(c: TelemetryConversation, report: (hit: TelemetryHit) => void): void;
}

/** Findings produced by the stream layers rather than by a rule's hook (gaps, desync, TLS...). */
export interface StreamRule extends RuleMeta {
  kind: 'stream';
}

export type Rule = ConnectionRule | ReportRule | TelemetryRule | StreamRule;
