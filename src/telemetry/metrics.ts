/**
 * OTLP MetricsData (the decompressed PushTelemetry blob) decoded with protobufjs from the schema
 * in otlp-schema.ts, and summarised into what kcid shows and judges: resource attributes, scopes,
 * and per metric its name, type, temporality, monotonicity, point count, point attribute keys and
 * time range. Values are not kept.
 */
import protobuf from 'protobufjs/light.js';
import { OTLP_METRICS_RULES_SCHEMA, OTLP_METRICS_SCHEMA, TEMPORALITY } from './otlp-schema.js';

export type MetricType = 'gauge' | 'sum' | 'histogram' | 'exponentialHistogram' | 'summary' | 'none';
export type Temporality = (typeof TEMPORALITY)[number];

export interface MetricInfo {
  name: string;
  type: MetricType;
  /** Sums and (exponential) histograms; null for gauges, summaries and metrics without data. */
  temporality: Temporality | null;
  /** Sums only. */
  monotonic: boolean | null;
  points: number;
  /** Distinct attribute keys of its data points, sorted. */
  attributes: string[];
  /** Earliest start and latest time of its points, µs since the epoch (null when none is set). */
  startUs: number | null;
  endUs: number | null;
}

export interface MetricsPayload {
  /** Resource attributes as [key, value text], in wire order (of every ResourceMetrics). */
  resource: [string, string][];
  /** Instrumentation scopes, "name version". */
  scopes: string[];
  /** In wire order; at most MAX_METRICS, and MAX_PUSH_TEXT characters of names and keys, kept (metricCount counts them all). */
  metrics: MetricInfo[];
  metricCount: number;
  points: number;
}

/**
 * Metrics listed per push (a hostile payload may have millions of tiny ones; metricCount stays
 * exact, and the JSON says how many were not listed). Real clients push 10 to 200.
 */
export const MAX_METRICS = 1_000;
/** Characters of metric names and point attribute keys listed per push: past it, further metrics are counted, not listed. */
export const MAX_PUSH_TEXT = 64 * 1024;
/** Distinct names and keys shared between pushes (the same client pushes the same names every interval). */
const MAX_INTERNED = 65_536;
/** Characters kept of a metric name, an attribute key or value. */
const MAX_TEXT = 1024;
/** Resource attributes kept per push. */
const MAX_RESOURCE_ATTRIBUTES = 256;
/** Distinct point attribute keys kept per metric. */
const MAX_KEYS = 64;

export class MetricsDecodeError extends Error {
  override readonly name = 'MetricsDecodeError';
}

/**
 * 'full': everything below; 'rules': what the telemetry rules read (data points counted but not
 * opened: every metric's attribute keys empty and times null), several times faster on real pushes.
 */
export type MetricsView = 'full' | 'rules';

let metricsData: protobuf.Type | null = null;
let metricsDataForRules: protobuf.Type | null = null;

function schema(view: MetricsView): protobuf.Type {
  if (view === 'rules') return (metricsDataForRules ??= protobuf.Root.fromJSON(OTLP_METRICS_RULES_SCHEMA).lookupType('MetricsData'));
  return (metricsData ??= protobuf.Root.fromJSON(OTLP_METRICS_SCHEMA).lookupType('MetricsData'));
}

interface LongLike {
  low: number;
  high: number;
}
interface KeyValueMsg {
  key?: string;
  value?: AnyValueMsg | null;
}
interface AnyValueMsg {
  /** protobufjs's oneof property: the name of the field set (message fields carry defaults on their prototype). */
  value?: string;
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | LongLike;
  doubleValue?: number;
  arrayValue?: Uint8Array;
  kvlistValue?: Uint8Array;
  bytesValue?: Uint8Array;
}
interface PointMsg {
  attributes?: KeyValueMsg[];
  startTimeUnixNano?: number | LongLike;
  timeUnixNano?: number | LongLike;
}
interface SeriesMsg {
  dataPoints?: PointMsg[];
  aggregationTemporality?: number;
  isMonotonic?: boolean;
}
interface MetricMsg {
  name?: string;
  gauge?: SeriesMsg;
  sum?: SeriesMsg;
  histogram?: SeriesMsg;
  exponentialHistogram?: SeriesMsg;
  summary?: SeriesMsg;
}
interface MetricsDataMsg {
  resourceMetrics?: {
    resource?: { attributes?: KeyValueMsg[] } | null;
    scopeMetrics?: { scope?: { name?: string; version?: string } | null; metrics?: MetricMsg[] }[];
  }[];
}

/** Decodes MetricsData; throws MetricsDecodeError when the bytes are not one. */
export function decodeMetrics(bytes: Uint8Array, view: MetricsView = 'full'): MetricsPayload {
  let msg: MetricsDataMsg;
  try {
    msg = schema(view).decode(bytes) as unknown as MetricsDataMsg;
  } catch (e) {
    throw new MetricsDecodeError(`OTLP MetricsData does not parse: ${(e as Error).message}`);
  }
  const out: MetricsPayload = { resource: [], scopes: [], metrics: [], metricCount: 0, points: 0 };
  let listedText = 0;
  for (const rm of msg.resourceMetrics ?? []) {
    for (const kv of rm.resource?.attributes ?? []) {
      if (out.resource.length < MAX_RESOURCE_ATTRIBUTES) out.resource.push([text(kv.key ?? ''), valueText(kv.value)]);
    }
    for (const sm of rm.scopeMetrics ?? []) {
      if (sm.scope != null && out.scopes.length < MAX_RESOURCE_ATTRIBUTES) {
        const scope = [sm.scope.name ?? '', sm.scope.version ?? ''].filter((s) => s !== '').join(' ');
        if (scope !== '' && !out.scopes.includes(scope)) out.scopes.push(text(scope));
      }
      for (const m of sm.metrics ?? []) {
        const info = metricInfo(m);
        out.metricCount++;
        out.points += info.points;
        if (out.metrics.length >= MAX_METRICS) continue;
        let cost = info.name.length;
        for (const a of info.attributes) cost += a.length;
        if (listedText + cost > MAX_PUSH_TEXT) continue;
        listedText += cost;
        info.name = intern(info.name);
        for (let i = 0; i < info.attributes.length; i++) info.attributes[i] = intern(info.attributes[i]!);
        out.metrics.push(info);
      }
    }
  }
  return out;
}

function metricInfo(m: MetricMsg): MetricInfo {
  const [type, series]: [MetricType, SeriesMsg | undefined] =
    m.gauge != null ? ['gauge', m.gauge]
    : m.sum != null ? ['sum', m.sum]
    : m.histogram != null ? ['histogram', m.histogram]
    : m.exponentialHistogram != null ? ['exponentialHistogram', m.exponentialHistogram]
    : m.summary != null ? ['summary', m.summary]
    : ['none', undefined];
  const points = series?.dataPoints ?? [];
  const keys = new Set<string>();
  let startUs: number | null = null;
  let endUs: number | null = null;
  for (const p of points) {
    for (const kv of p.attributes ?? []) if (keys.size < MAX_KEYS) keys.add(text(kv.key ?? ''));
    const s = nanosToMicros(p.startTimeUnixNano);
    const t = nanosToMicros(p.timeUnixNano);
    if (s !== null && (startUs === null || s < startUs)) startUs = s;
    if (t !== null && (endUs === null || t > endUs)) endUs = t;
  }
  const hasTemporality = type === 'sum' || type === 'histogram' || type === 'exponentialHistogram';
  return {
    name: text(m.name ?? ''),
    type,
    temporality: hasTemporality ? (TEMPORALITY[series?.aggregationTemporality ?? 0] ?? 'unspecified') : null,
    monotonic: type === 'sum' ? series?.isMonotonic === true : null,
    points: points.length,
    attributes: [...keys].sort(),
    startUs,
    endUs,
  };
}

/** fixed64 nanoseconds (a protobufjs Long, or a number without one) to whole µs; null for 0 (unset). */
function nanosToMicros(v: number | LongLike | undefined): number | null {
  if (v === undefined) return null;
  const ns = typeof v === 'number' ? BigInt(Math.trunc(v)) : (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  if (ns === 0n) return null;
  return Number(ns / 1000n);
}

function valueText(v: AnyValueMsg | null | undefined): string {
  switch (v?.value) {
    case 'stringValue':
      return text(v!.stringValue!);
    case 'boolValue':
      return String(v!.boolValue);
    case 'intValue': {
      const i = v!.intValue!;
      return typeof i === 'number' ? String(i) : String(BigInt.asIntN(64, (BigInt(i.high >>> 0) << 32n) | BigInt(i.low >>> 0)));
    }
    case 'doubleValue':
      return String(v!.doubleValue);
    case 'arrayValue':
      return '(array)';
    case 'kvlistValue':
      return '(key-value list)';
    case 'bytesValue':
      return `(${v!.bytesValue!.length} bytes)`;
    default:
      return '';
  }
}

const interned = new Map<string, string>();

/** One string for every push that names the same metric or key (up to MAX_INTERNED of them). */
function intern(s: string): string {
  const known = interned.get(s);
  if (known !== undefined) return known;
  if (interned.size < MAX_INTERNED) interned.set(s, s);
  return s;
}

function text(s: string): string {
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s;
}
