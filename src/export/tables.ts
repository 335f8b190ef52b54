/**
 * The tables kcid exports, as column lists. Names are snake_case (what SQL engines expect
 * unquoted); each table starts with the capture it came from. Client instance IDs come twice:
 * `client_instance_id`, Kafka's 22-character base64 text (what broker logs print), and
 * `client_instance_uuid`, the 16 bytes as plain binary (what joins want; not a Parquet UUID,
 * which Spark refuses: parquet.ts). Addresses are split into ip (text: IPv4 dotted, IPv6 as RFC 5952) and port.
 */
import type { InstanceModel } from '../analysis/instances.js';
import type { ConnectionSummary, Finding, TelemetryMetric, TelemetryPushEvent } from '../analysis/types.js';
import { apiName, errorName } from '../kafka/protocol.js';
import { parseUuid } from '../kafka/uuid.js';
import type { RequestRow } from '../report/requests.js';
import { compressionName } from '../telemetry/names.js';
import type { Column, Table } from './parquet.js';

/** Which capture a row comes from: the file as given, and the name its partition carries. */
export interface Origin {
  file: string;
  capture: string;
}

/** `ip:port` or `[ip]:port` → [ip, port]. */
export function splitEndpoint(endpoint: string): [string, number] {
  const at = endpoint.lastIndexOf(':');
  const host = endpoint.slice(0, at);
  const ip = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return [ip, Number(endpoint.slice(at + 1))];
}

/**
 * The last tens of thousands of results of a function of a string: a connection's rows repeat its
 * addresses and ID, and a row group then holds one ip string and one UUID array per connection
 * rather than one per row.
 */
function memo<T>(f: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let v = cache.get(key);
    if (v === undefined) {
      if (cache.size >= 65_536) cache.clear();
      cache.set(key, (v = f(key)));
    }
    return v;
  };
}

const NO_TAGS: readonly { tag: number; size: number }[] = Object.freeze([]);

/** An endpoint's ip or port, from the text (a short-lived slice, which the row group's dictionary of distinct values then replaces). */
function endpointPart(endpoint: string, i: 0 | 1): string | number {
  const at = endpoint.lastIndexOf(':');
  if (i === 1) return Number(endpoint.slice(at + 1));
  return endpoint.charCodeAt(0) === 91 /* [ */ ? endpoint.slice(1, at - 1) : endpoint.slice(0, at);
}
const uuidParts = memo(parseUuid);
const uuidOf = (id: string | null): Uint8Array | null => (id === null ? null : uuidParts(id));

/** Columns of an origin, for the rows that carry one. */
function originColumns<R extends { origin: Origin; input: number }>(): Column<R>[] {
  return [
    { name: 'capture', type: 'string', nullable: false, get: (r) => r.origin.capture },
    { name: 'input_file', type: 'string', nullable: false, get: (r) => r.origin.file, statistics: false },
    { name: 'input', type: 'int32', nullable: false, get: (r) => r.input },
  ];
}

/** Columns of a client -> broker pair of addresses. */
function addressColumns<R>(client: (r: R) => string | null, broker: (r: R) => string | null, nullable: boolean): Column<R>[] {
  const part = <T extends 0 | 1>(f: (r: R) => string | null, i: T) => (r: R) => {
    const e = f(r);
    return e === null ? null : endpointPart(e, i);
  };
  return [
    { name: 'client_ip', type: 'string', nullable, get: part(client, 0) },
    { name: 'client_port', type: 'int32', nullable, get: part(client, 1) },
    { name: 'broker_ip', type: 'string', nullable, get: part(broker, 0) },
    { name: 'broker_port', type: 'int32', nullable, get: part(broker, 1) },
  ];
}

/** A request row, with the time it was sent (µs) and its capture. One holder is reused for every row. */
export interface RequestRecord {
  row: RequestRow;
  us: number;
  origin: Origin;
  input: number;
}

/** `requests`: the columns of `kcid requests --format ndjson`, typed, plus the capture. */
export const REQUESTS: Table<RequestRecord> = {
  name: 'requests',
  columns: [
    ...originColumns<RequestRecord>(),
    { name: 'frame', type: 'int64', nullable: false, get: (r) => r.row.frame, distinct: true },
    { name: 'time', type: 'timestamp', nullable: false, get: (r) => r.us, distinct: true },
    ...addressColumns<RequestRecord>((r) => r.row.client, (r) => r.row.broker, false),
    { name: 'api_key', type: 'int16', nullable: false, get: (r) => r.row.apiKey },
    { name: 'api_name', type: 'string', nullable: false, get: (r) => r.row.apiName },
    { name: 'api_version', type: 'int16', nullable: false, get: (r) => r.row.apiVersion },
    { name: 'header_version', type: 'int16', nullable: true, get: (r) => r.row.headerVersion },
    { name: 'correlation_id', type: 'int32', nullable: false, get: (r) => r.row.correlationId, distinct: true, statistics: false },
    { name: 'client_id', type: 'string', nullable: true, get: (r) => r.row.clientId },
    { name: 'client_instance_id', type: 'string', nullable: true, get: (r) => r.row.clientInstanceId },
    { name: 'client_instance_uuid', type: 'uuid', nullable: true, get: (r) => uuidOf(r.row.clientInstanceId) },
    // What the header's tag 0 carried (null without one); client_instance_id is the request's owner.
    { name: 'header_client_instance_id', type: 'string', nullable: true, get: (r) => r.row.headerClientInstanceId },
    // Nearly every row has none: one shared empty list, so a row group does not keep each row's.
    { name: 'other_tags', type: 'tags', nullable: false, get: (r) => (r.row.otherTags.length === 0 ? NO_TAGS : r.row.otherTags) },
    { name: 'response_frame', type: 'int64', nullable: true, get: (r) => r.row.responseFrame, distinct: true, statistics: false },
    { name: 'error_code', type: 'int16', nullable: true, get: (r) => r.row.errorCode },
    { name: 'error_name', type: 'string', nullable: true, get: (r) => (r.row.errorCode === null ? null : errorName(r.row.errorCode)) },
    { name: 'latency_ms', type: 'double', nullable: true, get: (r) => r.row.latencyMs, distinct: true, statistics: false },
  ],
};

export interface ConnectionRecord {
  c: ConnectionSummary;
  /** Index of its instance in the capture's `instances` table, or null (a connection without requests). */
  instance: number | null;
  origin: Origin;
  input: number;
}

/** `connections`: one row per TCP connection that carried Kafka (those kept as summaries). */
export const CONNECTIONS: Table<ConnectionRecord> = {
  name: 'connections',
  columns: [
    ...originColumns<ConnectionRecord>(),
    { name: 'connection', type: 'int32', nullable: false, get: (r) => r.c.id },
    { name: 'instance', type: 'int32', nullable: true, get: (r) => r.instance },
    ...addressColumns<ConnectionRecord>((r) => r.c.client, (r) => r.c.broker, false),
    { name: 'client_instance_id', type: 'string', nullable: true, get: (r) => r.c.headerInstanceIds[0] ?? r.c.telemetryInstanceId },
    { name: 'client_instance_uuid', type: 'uuid', nullable: true, get: (r) => uuidOf(r.c.headerInstanceIds[0] ?? r.c.telemetryInstanceId) },
    { name: 'header_instance_ids', type: 'strings', nullable: false, get: (r) => r.c.headerInstanceIds },
    { name: 'telemetry_instance_id', type: 'string', nullable: true, get: (r) => r.c.telemetryInstanceId },
    { name: 'client_ids', type: 'strings', nullable: false, get: (r) => r.c.clientIds },
    { name: 'software', type: 'strings', nullable: false, get: (r) => r.c.software.map((s) => `${s.name} ${s.version}`) },
    { name: 'start_seen', type: 'bool', nullable: false, get: (r) => r.c.startSeen },
    { name: 'first_frame', type: 'int64', nullable: false, get: (r) => r.c.firstFrame },
    { name: 'first_seen', type: 'timestamp', nullable: false, get: (r) => r.c.firstUs },
    { name: 'last_seen', type: 'timestamp', nullable: false, get: (r) => r.c.lastUs },
    { name: 'requests', type: 'int64', nullable: false, get: (r) => r.c.requests },
    { name: 'responses', type: 'int64', nullable: false, get: (r) => r.c.responses },
    { name: 'error_responses', type: 'int64', nullable: false, get: (r) => r.c.errorResponses },
    { name: 'gaps', type: 'int64', nullable: false, get: (r) => r.c.gaps },
    { name: 'gap_bytes', type: 'int64', nullable: false, get: (r) => r.c.gapBytes },
  ],
};

export interface InstanceRecord {
  x: InstanceModel;
  instance: number;
  origin: Origin;
  input: number;
}

/** `instances`: the client instances of one capture, as `kcid analyze --format json` lists them. */
export const INSTANCES: Table<InstanceRecord> = {
  name: 'instances',
  columns: [
    ...originColumns<InstanceRecord>(),
    { name: 'instance', type: 'int32', nullable: false, get: (r) => r.instance },
    { name: 'client_instance_id', type: 'string', nullable: true, get: (r) => r.x.clientInstanceId },
    { name: 'client_instance_uuid', type: 'uuid', nullable: true, get: (r) => uuidOf(r.x.clientInstanceId) },
    { name: 'source', type: 'string', nullable: false, get: (r) => r.x.source },
    { name: 'client_ids', type: 'strings', nullable: false, get: (r) => r.x.clientIds },
    { name: 'software', type: 'strings', nullable: false, get: (r) => r.x.software.map((s) => `${s.name} ${s.version}`) },
    { name: 'client_ips', type: 'strings', nullable: false, get: (r) => r.x.clientAddresses },
    { name: 'brokers', type: 'strings', nullable: false, get: (r) => r.x.brokers },
    { name: 'connections', type: 'int32', nullable: false, get: (r) => r.x.connections.length },
    { name: 'requests', type: 'int64', nullable: false, get: (r) => r.x.requests },
    { name: 'responses', type: 'int64', nullable: false, get: (r) => r.x.responses },
    { name: 'error_responses', type: 'int64', nullable: false, get: (r) => r.x.errorResponses },
    { name: 'apis', type: 'strings', nullable: false, get: (r) => [...r.x.apis].map(([key, n]) => `${apiName(key)}=${n}`) },
    { name: 'first_seen', type: 'timestamp', nullable: false, get: (r) => r.x.firstUs },
    { name: 'last_seen', type: 'timestamp', nullable: false, get: (r) => r.x.lastUs },
  ],
};

export interface FindingRecord {
  f: Finding;
  origin: Origin;
  input: number;
}

/** `findings`: what the rules found, at the severities the run applied. */
export const FINDINGS: Table<FindingRecord> = {
  name: 'findings',
  columns: [
    ...originColumns<FindingRecord>(),
    { name: 'rule', type: 'string', nullable: false, get: (r) => r.f.rule },
    { name: 'severity', type: 'string', nullable: false, get: (r) => r.f.severity },
    { name: 'message', type: 'string', nullable: false, get: (r) => r.f.message },
    { name: 'frame', type: 'int64', nullable: true, get: (r) => r.f.frame },
    { name: 'time', type: 'timestamp', nullable: true, get: (r) => r.f.timeUs },
    ...addressColumns<FindingRecord>((r) => r.f.client, (r) => r.f.broker, true),
    { name: 'api_key', type: 'int16', nullable: true, get: (r) => r.f.apiKey },
    { name: 'api_name', type: 'string', nullable: true, get: (r) => (r.f.apiKey === null ? null : apiName(r.f.apiKey)) },
    { name: 'api_version', type: 'int16', nullable: true, get: (r) => r.f.apiVersion },
    { name: 'correlation_id', type: 'int32', nullable: true, get: (r) => r.f.correlationId },
    { name: 'client_instance_id', type: 'string', nullable: true, get: (r) => r.f.clientInstanceId },
    { name: 'client_instance_uuid', type: 'uuid', nullable: true, get: (r) => uuidOf(r.f.clientInstanceId) },
  ],
};

/** A PushTelemetry, with the milliseconds since its conversation's previous push (null for the first). */
export interface TelemetryRecord {
  p: TelemetryPushEvent;
  intervalMs: number | null;
  origin: Origin;
  input: number;
}

/**
 * `telemetry`: one row per PushTelemetry (KIP-714), as `kcid telemetry --format json` lists the
 * pushes. The sizes, counts and `decode_problem` say whether the metrics decoded: counts are null
 * when they did not (or Metrics was null on the wire), and `decode_problem` says why.
 */
export const TELEMETRY: Table<TelemetryRecord> = {
  name: 'telemetry',
  columns: [
    ...originColumns<TelemetryRecord>(),
    { name: 'frame', type: 'int64', nullable: false, get: (r) => r.p.frame },
    { name: 'time', type: 'timestamp', nullable: false, get: (r) => r.p.timeUs },
    { name: 'connection', type: 'int32', nullable: false, get: (r) => r.p.connection },
    ...addressColumns<TelemetryRecord>((r) => r.p.client, (r) => r.p.broker, false),
    { name: 'client_id', type: 'string', nullable: true, get: (r) => r.p.clientId },
    { name: 'client_instance_id', type: 'string', nullable: true, get: (r) => r.p.instanceId },
    { name: 'client_instance_uuid', type: 'uuid', nullable: true, get: (r) => uuidOf(r.p.instanceId) },
    { name: 'api_version', type: 'int16', nullable: false, get: (r) => r.p.apiVersion },
    { name: 'correlation_id', type: 'int32', nullable: false, get: (r) => r.p.correlationId, statistics: false },
    { name: 'subscription_id', type: 'int32', nullable: false, get: (r) => r.p.subscriptionId },
    { name: 'terminating', type: 'bool', nullable: false, get: (r) => r.p.terminating },
    { name: 'codec', type: 'string', nullable: false, get: (r) => compressionName(r.p.compressionType) },
    { name: 'compressed_bytes', type: 'int32', nullable: true, get: (r) => r.p.metricsBytes },
    { name: 'decompressed_bytes', type: 'int32', nullable: true, get: (r) => r.p.payload?.decompressedBytes ?? null },
    { name: 'metrics', type: 'int32', nullable: true, get: (r) => r.p.payload?.metricCount ?? null },
    { name: 'points', type: 'int64', nullable: true, get: (r) => r.p.payload?.points ?? null },
    { name: 'interval_ms', type: 'double', nullable: true, get: (r) => r.intervalMs, statistics: false },
    { name: 'response_frame', type: 'int64', nullable: true, get: (r) => r.p.responseFrame, statistics: false },
    { name: 'error_code', type: 'int16', nullable: true, get: (r) => r.p.errorCode },
    { name: 'error_name', type: 'string', nullable: true, get: (r) => (r.p.errorCode === null ? null : errorName(r.p.errorCode)) },
    { name: 'decode_problem', type: 'string', nullable: true, get: (r) => r.p.payloadError?.message ?? null },
  ],
};

/** One metric of a decoded push. */
export interface TelemetryMetricRecord {
  p: TelemetryPushEvent;
  m: TelemetryMetric;
  origin: Origin;
  input: number;
}

/**
 * `telemetry_metrics`: one row per metric per decoded push, keyed to its push by
 * (capture, input, frame): what each instance reported, its type and temporality (what the
 * telemetry rules judge), and how many data points.
 */
export const TELEMETRY_METRICS: Table<TelemetryMetricRecord> = {
  name: 'telemetry_metrics',
  columns: [
    ...originColumns<TelemetryMetricRecord>(),
    { name: 'frame', type: 'int64', nullable: false, get: (r) => r.p.frame },
    { name: 'time', type: 'timestamp', nullable: false, get: (r) => r.p.timeUs },
    { name: 'client_instance_id', type: 'string', nullable: true, get: (r) => r.p.instanceId },
    { name: 'client_instance_uuid', type: 'uuid', nullable: true, get: (r) => uuidOf(r.p.instanceId) },
    { name: 'name', type: 'string', nullable: false, get: (r) => r.m.name },
    { name: 'type', type: 'string', nullable: false, get: (r) => r.m.type },
    { name: 'temporality', type: 'string', nullable: true, get: (r) => r.m.temporality },
    { name: 'monotonic', type: 'bool', nullable: true, get: (r) => r.m.monotonic },
    { name: 'points', type: 'int64', nullable: false, get: (r) => r.m.points },
    { name: 'attributes', type: 'strings', nullable: false, get: (r) => r.m.attributes },
    { name: 'start_time', type: 'timestamp', nullable: true, get: (r) => r.m.startUs },
    { name: 'end_time', type: 'timestamp', nullable: true, get: (r) => r.m.endUs },
  ],
};
