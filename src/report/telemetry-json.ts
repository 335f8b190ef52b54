/**
 * The JSON shape of KIP-714 conversations: `kcid telemetry --format json`'s instances, and the
 * `telemetry` member of `kcid analyze --telemetry --format json` (README, JSON). No table code here,
 * so the JSON report loads none.
 */
import type { TelemetryConversation } from '../analysis/telemetry-conversations.js';
import type { TelemetryPushEvent, TelemetrySubscriptionEvent } from '../analysis/types.js';
import { compressionName } from '../telemetry/names.js';
import type { MetricsPayload, PushMetricsResult } from '../telemetry/index.js';
import { isoMicros } from '../base/time.js';
import { groupDigits } from '../base/digits.js';

/** One metric over all the pushes of a conversation. */
export interface MetricRollup {
  name: string;
  type: string;
  temporality: string | null;
  monotonic: boolean | null;
  /** Pushes that carried it. */
  pushes: number;
  points: number;
  attributes: string[];
}

export function metricRollup(c: TelemetryConversation): MetricRollup[] {
  const byName = new Map<string, MetricRollup>();
  for (const p of c.pushes) {
    const seen = new Set<MetricRollup>();
    for (const m of p.push.payload?.metrics ?? []) {
      const key = `${m.name}\u0000${m.type}\u0000${m.temporality}`;
      let r = byName.get(key);
      if (r === undefined) {
        byName.set(key, (r = { name: m.name, type: m.type, temporality: m.temporality, monotonic: m.monotonic, pushes: 0, points: 0, attributes: [] }));
      }
      if (!seen.has(r)) r.pushes++;
      seen.add(r);
      r.points += m.points;
      for (const a of m.attributes) if (!r.attributes.includes(a) && r.attributes.length < 64) r.attributes.push(a);
    }
  }
  const out = [...byName.values()];
  for (const r of out) r.attributes.sort();
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Milliseconds from the previous push of the conversation, or null for its first. */
export function intervalMs(c: TelemetryConversation, i: number): number | null {
  const prev = c.pushes[i]!.previous;
  return prev === null ? null : Math.round(c.pushes[i]!.push.timeUs - prev.timeUs) / 1000;
}

function subscriptionJson(s: TelemetrySubscriptionEvent) {
  return {
    input: s.input + 1,
    frame: s.frame,
    responseFrame: s.responseFrame,
    time: isoMicros(s.timeUs),
    client: s.client,
    broker: s.broker,
    apiVersion: s.apiVersion,
    errorCode: s.errorCode,
    subscriptionId: s.subscriptionId,
    pushIntervalMs: s.pushIntervalMs,
    telemetryMaxBytes: s.telemetryMaxBytes,
    acceptedCompressionTypes: s.acceptedCompressionTypes.map(compressionName),
    deltaTemporality: s.deltaTemporality,
    requestedMetrics: s.requestedMetrics,
  };
}

function pushJson(p: TelemetryPushEvent, interval: number | null) {
  const payload = p.payload;
  return {
    input: p.input + 1,
    frame: p.frame,
    responseFrame: p.responseFrame,
    time: isoMicros(p.timeUs),
    client: p.client,
    broker: p.broker,
    apiVersion: p.apiVersion,
    subscriptionId: p.subscriptionId,
    terminating: p.terminating,
    compression: compressionName(p.compressionType),
    compressedBytes: p.metricsBytes,
    decompressedBytes: payload?.decompressedBytes ?? null,
    metrics: payload?.metricCount ?? null,
    points: payload?.points ?? null,
    intervalMs: interval,
    errorCode: p.errorCode,
    ...(payload === null ? {} : { resource: Object.fromEntries(payload.resource), scopes: payload.scopes, metricList: payload.metrics, ...notListed(payload) }),
    ...(p.payloadError === null ? {} : { payloadError: p.payloadError.message }),
  };
}

/**
 * One PushTelemetry's metrics as `kcid requests --bodies` writes them beside the request body: the
 * payload members of a push in `kcid telemetry --format json` (same names), or the problem.
 */
export function pushMetricsJson(compressionType: number, compressedBytes: number, result: PushMetricsResult) {
  const head = { compression: compressionName(compressionType), compressedBytes };
  if (!result.ok) return { ...head, payloadError: result.message };
  const m = result.metrics;
  return {
    ...head,
    decompressedBytes: result.decompressedBytes,
    metrics: m.metricCount,
    points: m.points,
    resource: Object.fromEntries(m.resource),
    scopes: m.scopes,
    metricList: m.metrics,
    ...notListed(m),
  };
}

/** `metricsNotListed`, only for a push whose metrics were not all kept (MAX_METRICS, MAX_PUSH_TEXT): absent otherwise. */
function notListed(m: MetricsPayload): { metricsNotListed?: number } {
  return m.metricCount > m.metrics.length ? { metricsNotListed: m.metricCount - m.metrics.length } : {};
}

/** The same in a few words, for the table form of `kcid requests --bodies`: "zstd 538 -> 2,041 bytes, 14 metrics, 14 points". */
export function pushMetricsSummary(compressionType: number, compressedBytes: number, result: PushMetricsResult): string {
  const codec = compressionName(compressionType);
  const n = (x: number) => groupDigits(x);
  if (!result.ok) return `${codec} ${n(compressedBytes)} bytes, ${result.kind === 'not-kept' ? '' : 'not decoded: '}${result.message}`;
  const m = result.metrics;
  const plural = (x: number, one: string) => `${n(x)} ${one}${x === 1 ? '' : 's'}`;
  return `${codec} ${n(compressedBytes)} -> ${n(result.decompressedBytes)} bytes, ${plural(m.metricCount, 'metric')}, ${plural(m.points, 'point')}`;
}

/** The documented shape (README, `kcid telemetry --format json`): one object per conversation. */
export function telemetryJson(conversations: readonly TelemetryConversation[]): unknown[] {
  return conversations.map((c) => ({
    clientInstanceId: c.instanceId,
    clientAddress: c.clientIp,
    clientId: c.clientId,
    subscriptions: c.events.filter((e): e is TelemetrySubscriptionEvent => e.kind === 'subscription').map(subscriptionJson),
    pushes: c.pushes.map((p, i) => pushJson(p.push, intervalMs(c, i))),
    metrics: metricRollup(c),
  }));
}

