/**
 * What a rule is: stable id, default severity, a one-line summary, a paragraph of explanation
 * citing the spec, and hooks. Connection rules see one connection's requests and responses as
 * they stream by; report rules run once over the merged summary of every capture.
 */
import type { KafkaRequest, KafkaResponse } from '../../kafka/events.js';
import type { ConnState } from '../connection-state.js';
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

export interface ConnectionRule extends RuleMeta {
  kind: 'connection';
  /** Called before the connection state is updated with this request. */
  onRequest?(s: ConnState, r: KafkaRequest, report: (hit: RuleHit) => void): void;
  onResponse?(s: ConnState, r: KafkaResponse, report: (hit: RuleHit) => void): void;
  /** Called when the connection ends, before its state is dropped. */
  onEnd?(s: ConnState, report: (hit: RuleHit) => void): void;
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
