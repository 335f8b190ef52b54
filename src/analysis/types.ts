/**
 * Analysis types. A {@link CaptureSummary} is what one capture contributes: per-connection
 * summaries and the findings judged on single connections. It is plain data (JSON-safe), so
 * summaries of many captures (one per broker) merge by concatenation, and the rules that look
 * across connections run once on the merged whole.
 */
import type { TlsInfo } from '../tls/types.js';

export type Severity = 'error' | 'warning' | 'info';
export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info'];

export interface Finding {
  rule: string;
  severity: Severity;
  message: string;
  /** Frame number within its input (1-based), or null for findings about the whole input. */
  frame: number | null;
  /** Microseconds since the epoch, or null. */
  timeUs: number | null;
  client: string | null;
  broker: string | null;
  apiKey: number | null;
  apiVersion: number | null;
  correlationId: number | null;
  /** Kafka's base64 form of the client instance ID the finding is about, when known. */
  clientInstanceId: string | null;
  /** Index into the inputs. */
  input: number;
}

export interface InputSummary {
  file: string;
  format: 'pcap' | 'pcapng';
  gzip: boolean;
  packets: number;
  bytes: number;
  /** Broker ports of the Kafka connections found, ascending. */
  kafkaPorts: number[];
  tcpPackets: number;
  nonTcpPackets: number;
  unknownLinkTypePackets: number;
  malformedPackets: number;
  truncatedPackets: number;
  /** Frame at which the file was cut off mid-record, or 0. */
  truncatedAtFrame: number;
  damagedRecords: number;
  notes: string[];
  /** Time of the first packet (µs since the epoch), or null for an input without packets. */
  startUs: number | null;
  /** What the listing caps left out but counted (absent when nothing was left out). */
  notListed?: NotListed;
  /** Traffic over time, when collected (`--format html`, `summary-json`; absent otherwise). */
  activity?: InputActivity;
}

/**
 * Counted but not kept: connections beyond --max-connection-summaries (their requests and
 * responses still count), and findings beyond --max-findings of one rule, as [rule, count]
 * pairs ascending by rule id.
 */
export interface NotListed {
  connections: number;
  requests: number;
  responses: number;
  findings: [string, number][];
}

export interface SoftwareId {
  name: string;
  version: string;
}

export interface ConnectionSummary {
  input: number;
  /** TCP connection number within its input. */
  id: number;
  client: string;
  clientIp: string;
  broker: string;
  startSeen: boolean;
  firstFrame: number;
  firstUs: number;
  lastUs: number;
  /** Header ClientInstanceIds (KIP-1313 tag 0), base64, in order of first appearance. */
  headerInstanceIds: string[];
  /** The telemetry (KIP-714) client instance ID of a client that sends none in its headers. */
  telemetryInstanceId: string | null;
  /** Non-null ClientIds, in order of first appearance. */
  clientIds: string[];
  software: SoftwareId[];
  requests: number;
  responses: number;
  /** Responses that carry a non-zero error code anywhere (top level, per topic, partition or group). */
  errorResponses: number;
  /** Every non-zero error code of those responses (absent in summaries written before kcid counted them). */
  errors?: number;
  /** [apiKey, count] ascending by key. */
  apis: [number, number][];
  gaps: number;
  gapBytes: number;
  /** Frame and time of the first request (for findings about the connection as a whole). */
  firstRequestFrame: number | null;
  firstRequestUs: number | null;
  /**
   * Request latencies in microseconds, log-bucketed (see analysis/latency.ts). In memory it is empty
   * when `latencyUs` holds them (connectionHistogram derives it); summary files carry both.
   */
  latency: number[];
  /** Every latency as [apiKey, µs, ...] ascending by API, then latency, when the connection kept them all. */
  latencyUs?: number[];
  /** For a connection over TLS: what its handshake showed (absent for plaintext connections). */
  tls?: TlsInfo;
}

export interface CaptureSummary {
  version: 1;
  inputs: InputSummary[];
  connections: ConnectionSummary[];
  findings: Finding[];
  /** KIP-714 telemetry requests answered (or never answered), in capture order per input; absent when there are none. */
  telemetry?: TelemetryEvent[];
}

/** Where a telemetry request was seen, and whose it is. */
interface TelemetryEventBase {
  input: number;
  /** TCP connection number within its input. */
  connection: number;
  client: string;
  clientIp: string;
  broker: string;
  /** The connection's first ClientId (a KIP-1313 client sends it on the first request only). */
  clientId: string | null;
  /**
   * The client instance ID, base64: the request header's (KIP-1313 tag 0), else the v0 body's,
   * else the one the broker assigned on this connection; null when none is known.
   */
  instanceId: string | null;
  apiVersion: number;
  correlationId: number;
  /** Frame and time of the request. */
  frame: number;
  timeUs: number;
  /** Frame and time of the broker's answer, null when the capture has none. */
  responseFrame: number | null;
  responseUs: number | null;
  /** The answer's ErrorCode, null without one. */
  errorCode: number | null;
  /** The capture saw the connection's SYN (so it holds everything the client sent on it). */
  startSeen: boolean;
}

export interface TelemetrySubscriptionEvent extends TelemetryEventBase {
  kind: 'subscription';
  subscriptionId: number;
  acceptedCompressionTypes: number[];
  pushIntervalMs: number;
  telemetryMaxBytes: number;
  deltaTemporality: boolean;
  /** Prefixes of the metric names asked for (null on the wire is shown as ""). */
  requestedMetrics: string[];
}

export interface TelemetryMetric {
  name: string;
  type: 'gauge' | 'sum' | 'histogram' | 'exponentialHistogram' | 'summary' | 'none';
  temporality: 'unspecified' | 'delta' | 'cumulative' | null;
  monotonic: boolean | null;
  points: number;
  attributes: string[];
  startUs: number | null;
  endUs: number | null;
}

export interface TelemetryPushEvent extends TelemetryEventBase {
  kind: 'push';
  subscriptionId: number;
  terminating: boolean;
  compressionType: number;
  /** Size of the Metrics blob as sent (compressed), null when Metrics is null. */
  metricsBytes: number | null;
  /**
   * The decoded blob, when it was decoded and decoded well. Decoded for the rules only (plain analyze,
   * the rules that read metrics on), each metric has no attribute keys or times (`attributes` empty,
   * `startUs`/`endUs` null) and the lists are shared between pushes that carried the same; decoded
   * for an output (kcid telemetry, --telemetry, clients --instance), everything is there.
   */
  payload: {
    decompressedBytes: number;
    metricCount: number;
    points: number;
    resource: [string, string][];
    scopes: string[];
    metrics: TelemetryMetric[];
  } | null;
  /** Why the blob was not decoded, when decoding was asked for: kind and message. */
  payloadError: { kind: 'too-large' | 'invalid' | 'unknown-codec' | 'not-metrics' | 'not-kept'; message: string } | null;
}

export type TelemetryEvent = TelemetrySubscriptionEvent | TelemetryPushEvent;

/**
 * Traffic over time (activity.ts makes it). One request drawn as a tick: [connection id, frame, time µs, apiKey, apiVersion, correlationId,
 * errorCode (null when unanswered or not decoded), latency µs (null when unanswered)].
 */
export type Tick = [number, number, number, number, number, number, number | null, number | null];

export interface InputActivity {
  /** Bucket b of width bucketUs covers [b * bucketUs, (b + 1) * bucketUs) µs since the epoch. */
  bucketUs: number;
  /** [broker, [bucket, requests, errors, bucket, requests, errors, ...] ascending by bucket], ascending by broker. */
  brokers: [string, number[]][];
  /** [apiKey, flattened latency histogram (latency.ts)], ascending by key. */
  latency: [number, number[]][];
  /** In request order. */
  ticks: Tick[];
  /** Requests counted in the buckets but not kept as ticks. */
  ticksNotKept: number;
}
