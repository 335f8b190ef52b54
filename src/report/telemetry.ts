/**
 * `kcid telemetry`: per client instance, its KIP-714 subscriptions, each push (codec, sizes,
 * metrics, interval, the broker's answer) and the metrics it pushed; as tables or JSON. The JSON
 * shape (telemetryJson) is also the `telemetry` member of `kcid analyze --format json`.
 */
import Table from 'cli-table3';
import type { Report } from '../analysis/report.js';
import type { TelemetryConversation } from '../analysis/telemetry-conversations.js';
import type { Finding, TelemetryPushEvent, TelemetrySubscriptionEvent } from '../analysis/types.js';
import { errorName } from '../kafka/errors.js';
import { compressionName } from '../telemetry/index.js';
import { sanitize } from '../base/sanitize.js';
import { isoMicros } from '../base/time.js';
import { safeJson } from '../base/json-text.js';
import type { Style } from './style.js';

const TELEMETRY_FORMAT_VERSION = 1;

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
function intervalMs(c: TelemetryConversation, i: number): number | null {
  const prev = c.pushes[i]!.previous;
  return prev === null ? null : Math.round(c.pushes[i]!.push.timeUs - prev.timeUs) / 1000;
}

function subscriptionJson(s: TelemetrySubscriptionEvent) {
  return {
    input: s.input,
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
    input: p.input,
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
    ...(payload === null ? {} : { resource: Object.fromEntries(payload.resource), scopes: payload.scopes, metricList: payload.metrics }),
    ...(p.payloadError === null ? {} : { payloadError: p.payloadError.message }),
  };
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

const TELEMETRY_API_KEYS = new Set([71, 72]);

function telemetryFindings(report: Report): Finding[] {
  return report.findings.filter((f) => f.apiKey !== null && TELEMETRY_API_KEYS.has(f.apiKey));
}

export function renderTelemetryJson(report: Report): string {
  const findings = telemetryFindings(report);
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const pushes = report.telemetry.reduce((n, c) => n + c.pushes.length, 0);
  const decoded = report.telemetry.reduce((n, c) => n + c.pushes.filter((p) => p.push.payload !== null).length, 0);
  const subscriptions = report.telemetry.reduce((n, c) => n + c.events.length - c.pushes.length, 0);
  const doc = {
    version: TELEMETRY_FORMAT_VERSION,
    inputs: report.inputs.map((i) => i.file),
    summary: { instances: report.telemetry.length, subscriptions, pushes, decoded, findings: counts },
    instances: telemetryJson(report.telemetry),
    findings: findings.map((f) => ({
      rule: f.rule,
      severity: f.severity,
      message: f.message,
      frame: f.frame,
      time: f.timeUs === null ? null : isoMicros(f.timeUs),
      client: f.client,
      broker: f.broker,
      clientInstanceId: f.clientInstanceId,
      input: f.input,
    })),
  };
  return `${safeJson(doc, 2)}\n`;
}

function table(head: string[], style: Style): Table.Table {
  return new Table({
    head: head.map((h) => style.bold(h)),
    style: { head: [], border: [], compact: true },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
}

const num = (n: number | null): string => (n === null ? '-' : n.toLocaleString('en-US'));
const err = (code: number | null): string => (code === null ? '-' : code === 0 ? '0' : `${code} ${errorName(code)}`);
const plural = (n: number, word: string, many = `${word}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`;
const clock = (us: number): string => isoMicros(us).slice(11, 23);

export function renderTelemetryTable(report: Report, style: Style): string {
  const convs = report.telemetry;
  const findings = telemetryFindings(report);
  const pushes = convs.reduce((n, c) => n + c.pushes.length, 0);
  const decoded = convs.reduce((n, c) => n + c.pushes.filter((p) => p.push.payload !== null).length, 0);
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const lines: string[] = [
    `${plural(convs.length, 'client instance')} with telemetry, ${plural(pushes, 'push', 'pushes')} (${decoded.toLocaleString('en-US')} decoded): ` +
      `${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}, ${plural(counts.info, 'note')}`,
  ];
  const multiple = report.inputs.length > 1;
  const frame = (input: number, f: number | null) => (f === null ? '-' : multiple ? `${input}:${f}` : String(f));
  for (const c of convs) {
    lines.push('', style.bold(`Client instance ${c.instanceId ?? '(none)'}`) + `  ${sanitize(c.clientId ?? '(no ClientId)')}  ${c.clientIp}`);
    const latest = [...c.pushes].reverse().find((p) => p.push.payload !== null)?.push.payload ?? null;
    if (latest !== null && latest.resource.length > 0) {
      lines.push(`Resource: ${latest.resource.map(([k, v]) => `${sanitize(k)}=${sanitize(v)}`).join(', ')}`);
    }
    if (latest !== null && latest.scopes.length > 0) lines.push(`Scope: ${latest.scopes.map(sanitize).join(', ')}`);
    const subs = c.events.filter((e): e is TelemetrySubscriptionEvent => e.kind === 'subscription');
    if (subs.length > 0) {
      const t = table(['Frame', 'Time', 'Broker', 'Error', 'SubscriptionId', 'PushIntervalMs', 'TelemetryMaxBytes', 'Accepted codecs', 'Delta', 'RequestedMetrics'], style);
      for (const s of subs) {
        t.push([
          frame(s.input, s.responseFrame ?? s.frame),
          clock(s.timeUs),
          s.broker,
          err(s.errorCode),
          String(s.subscriptionId),
          num(s.pushIntervalMs),
          num(s.telemetryMaxBytes),
          s.acceptedCompressionTypes.map(compressionName).join(', ') || '-',
          String(s.deltaTemporality),
          s.requestedMetrics.length === 0 ? '(none)' : s.requestedMetrics.map((m) => (m === '' ? '(all)' : sanitize(m))).join('\n'),
        ]);
      }
      lines.push('Subscriptions', t.toString());
    }
    if (c.pushes.length > 0) {
      const t = table(['Frame', 'Time', 'Broker', 'SubId', 'Codec', 'Bytes', 'Decompressed', 'Metrics', 'Points', 'Interval ms', 'Error', 'Terminating'], style);
      c.pushes.forEach((p, i) => {
        const e = p.push;
        const payload = e.payload;
        t.push([
          frame(e.input, e.frame),
          clock(e.timeUs),
          e.broker,
          String(e.subscriptionId),
          compressionName(e.compressionType),
          num(e.metricsBytes),
          payload === null ? (e.payloadError === null ? '-' : 'not decoded') : num(payload.decompressedBytes),
          num(payload?.metricCount ?? null),
          num(payload?.points ?? null),
          num(intervalMs(c, i)),
          err(e.errorCode),
          e.terminating ? 'yes' : '',
        ]);
      });
      lines.push('Pushes', t.toString());
    }
    const metrics = metricRollup(c);
    if (metrics.length > 0) {
      const t = table(['Metric', 'Type', 'Temporality', 'Pushes', 'Points', 'Attributes'], style);
      for (const m of metrics) {
        const type = m.type === 'sum' ? (m.monotonic ? 'sum (monotonic)' : 'sum') : m.type;
        t.push([sanitize(m.name), type, m.temporality ?? '-', num(m.pushes), num(m.points), m.attributes.map(sanitize).join(', ') || '-']);
      }
      lines.push('Metrics', t.toString());
    }
  }
  if (findings.length > 0) {
    const t = table(['Severity', 'Rule', 'Frame', 'Client -> Broker', 'Message'], style);
    for (const f of findings) t.push([style.severity(f.severity), f.rule, frame(f.input, f.frame), `${f.client} -> ${f.broker}`, sanitize(f.message)]);
    lines.push('', 'Findings', t.toString());
  }
  return `${lines.join('\n')}\n`;
}
