/**
 * `kcid telemetry`: per client instance, its KIP-714 subscriptions, each push (codec, sizes,
 * metrics, interval, the broker's answer) and the metrics it pushed; as tables or JSON. The JSON
 * shape (telemetryJson) is also the `telemetry` member of `kcid analyze --format json`.
 */
import { wrap } from './wrap.js';
import { intervalMs, metricRollup, telemetryJson } from './telemetry-json.js';
import type { Report } from '../analysis/report.js';
import type { Finding, TelemetrySubscriptionEvent } from '../analysis/types.js';
import type { TelemetryConversation } from '../analysis/telemetry-conversations.js';
import { errorLabel } from '../kafka/protocol.js';
import { compressionName } from '../telemetry/names.js';
import { sanitize } from '../base/sanitize.js';
import { isoMicros } from '../base/time.js';
import { writeJson } from '../base/json-text.js';
import type { Style } from './style.js';
import { fittedTable, inputLegendLines } from './table.js';
import { makeClock, type Clock } from './clock.js';
import { groupDigits } from '../base/digits.js';

const TELEMETRY_FORMAT_VERSION = 1;

export { telemetryJson };

const TELEMETRY_API_KEYS = new Set([71, 72]);

function telemetryFindings(report: Report): Finding[] {
  return report.findings.filter((f) => f.apiKey !== null && TELEMETRY_API_KEYS.has(f.apiKey));
}

/**
 * `kcid telemetry --format json`, written in pieces, never one string: down to each push, each
 * subscription and each metric rollup of an instance (a push's text is at most MAX_METRICS
 * metrics and MAX_PUSH_TEXT characters of names, telemetry/metrics.ts). Same bytes as one
 * JSON.stringify of the document.
 */
export function writeTelemetryJson(report: Report, write: (s: string) => void): void {
  writeJson(telemetryDoc(report), 2, write, 4);
}

export function renderTelemetryJson(report: Report): string {
  const parts: string[] = [];
  writeTelemetryJson(report, (s) => parts.push(s));
  return parts.join('');
}

function telemetryDoc(report: Report) {
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
      input: f.input + 1,
    })),
  };
  return doc;
}


const num = (n: number | null): string => (n === null ? '-' : groupDigits(n));
/** An error code by name and number, as every table shows it: UNSUPPORTED_VERSION (35), NONE (0). */
const err = (code: number | null): string => (code === null ? '-' : errorLabel(code));
const plural = (n: number, word: string, many = `${word}s`): string => `${groupDigits(n)} ${n === 1 ? word : many}`;

/**
 * `kcid telemetry` as tables. `width`: the terminal's columns (200 into a pipe): each table drops
 * its least needed columns, then wraps its long ones, to fit, as the other tables do. `clock`: -t.
 */
export function renderTelemetryTable(report: Report, style: Style, width = 200, clock: Clock = makeClock('a')): string {
  const convs = report.telemetry;
  const findings = telemetryFindings(report);
  const pushes = convs.reduce((n, c) => n + c.pushes.length, 0);
  const decoded = convs.reduce((n, c) => n + c.pushes.filter((p) => p.push.payload !== null).length, 0);
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const lines: string[] = [
    `${plural(convs.length, 'client instance')} with telemetry, ${plural(pushes, 'push', 'pushes')} (${groupDigits(decoded)} decoded): ` +
      `${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}, ${plural(counts.info, 'note')}`,
  ];
  lines.push(...inputLegendLines(report));
  const multiple = report.inputs.length > 1;
  // Inputs counted from 1, as the legend and every other table number them.
  const frame = (input: number, f: number | null) => (f === null ? '-' : multiple ? `${input + 1}:${f}` : String(f));
  for (const c of convs) {
    lines.push('', style.bold(`Client instance ${c.instanceId ?? '(none)'}`) + `  ${sanitize(c.clientId ?? '(no ClientId)')}  ${c.clientIp}`);
    const latest = [...c.pushes].reverse().find((p) => p.push.payload !== null)?.push.payload ?? null;
    if (latest !== null && latest.resource.length > 0) {
      lines.push(`Resource: ${latest.resource.map(([k, v]) => `${sanitize(k)}=${sanitize(v)}`).join(', ')}`);
    }
    if (latest !== null && latest.scopes.length > 0) lines.push(`Scope: ${latest.scopes.map(sanitize).join(', ')}`);
    const subs = c.events.filter((e): e is TelemetrySubscriptionEvent => e.kind === 'subscription');
    if (subs.length > 0) {
      const rows: string[][] = [];
      for (const s of subs) {
        rows.push([
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
      lines.push('Subscriptions', fittedTable(SUBSCRIPTION_HEAD, rows, ['Delta', 'TelemetryMaxBytes', 'SubscriptionId', 'Accepted codecs', 'Time'], style, width, ['RequestedMetrics', 'Broker']));
    }
    if (c.pushes.length > 0) {
      const rows: string[][] = [];
      c.pushes.forEach((p, i) => {
        const e = p.push;
        const payload = e.payload;
        rows.push([
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
      lines.push('Pushes', fittedTable(PUSH_HEAD, rows, ['SubId', 'Terminating', 'Points', 'Decompressed', 'Interval ms', 'Codec', 'Time'], style, width, ['Broker', 'Error']));
    }
    const metrics = metricRollup(c);
    if (metrics.length > 0) {
      const rows = metrics.map((m) => {
        const type = m.type === 'sum' ? (m.monotonic ? 'sum (monotonic)' : 'sum') : m.type;
        return [sanitize(m.name), type, m.temporality ?? '-', num(m.pushes), num(m.points), m.attributes.map(sanitize).join(', ') || '-'];
      });
      lines.push('Metrics', fittedTable(['Metric', 'Type', 'Temporality', 'Pushes', 'Points', 'Attributes'], rows, ['Temporality', 'Pushes'], style, width, ['Metric', 'Attributes', 'Type']));
    }
  }
  if (findings.length > 0) {
    const rows = findings.map((f) => [style.severity(f.severity), f.rule, frame(f.input, f.frame), `${f.client} -> ${f.broker}`, sanitize(f.message)]);
    lines.push('', 'Findings', fittedTable(['Severity', 'Rule', 'Frame', 'Client -> Broker', 'Message'], rows, ['Client -> Broker', 'Frame'], style, width, ['Message', 'Rule']));
  }
  return `${lines.map((l) => (l.includes('\n') ? l : fitLine(l, width))).join('\n')}\n`;
}

const SUBSCRIPTION_HEAD = ['Frame', 'Time', 'Broker', 'Error', 'SubscriptionId', 'PushIntervalMs', 'TelemetryMaxBytes', 'Accepted codecs', 'Delta', 'RequestedMetrics'];
const PUSH_HEAD = ['Frame', 'Time', 'Broker', 'SubId', 'Codec', 'Bytes', 'Decompressed', 'Metrics', 'Points', 'Interval ms', 'Error', 'Terminating'];

/**
 * A few lines for `kcid clients --instance`: the instance's subscriptions and pushes in brief, each
 * wrapped at spaces to `width` (a terminal's; Infinity into a pipe), its continuation indented.
 */
export function renderTelemetrySummary(conversations: readonly TelemetryConversation[], style: Style, width = Infinity): string {
  if (conversations.length === 0) return '';
  const lines = ['', style.bold('Telemetry (KIP-714)')];
  for (const c of conversations) {
    if (conversations.length > 1) lines.push(`  ${sanitize(c.clientId ?? '(no ClientId)')} at ${c.clientIp}`);
    for (const s of c.events) {
      if (s.kind !== 'subscription') continue;
      const asked = s.requestedMetrics.length === 0 ? 'no metrics' : s.requestedMetrics.map((m) => (m === '' ? '(all)' : sanitize(m))).join(', ');
      lines.push(
        `  subscription ${s.subscriptionId} (frame ${s.responseFrame ?? s.frame}${s.errorCode === 0 ? '' : `, error ${err(s.errorCode)}`}): push every ${num(s.pushIntervalMs)} ms, ` +
          `at most ${num(s.telemetryMaxBytes)} bytes, codecs ${s.acceptedCompressionTypes.map(compressionName).join(', ') || 'none'}, ` +
          `${s.deltaTemporality ? 'delta' : 'cumulative'}, metrics ${asked}`,
      );
    }
    const pushes = c.pushes.map((p) => p.push);
    if (pushes.length > 0) {
      const sent = pushes.reduce((n, p) => n + (p.metricsBytes ?? 0), 0);
      const decoded = pushes.filter((p) => p.payload !== null);
      const raw = decoded.reduce((n, p) => n + p.payload!.decompressedBytes, 0);
      const points = decoded.reduce((n, p) => n + p.payload!.points, 0);
      const errors = pushes.filter((p) => p.errorCode !== null && p.errorCode !== 0).length;
      const codecs = [...new Set(pushes.map((p) => compressionName(p.compressionType)))].join(', ');
      lines.push(
        `  ${plural(pushes.length, 'push', 'pushes')} (frames ${pushes[0]!.frame}-${pushes[pushes.length - 1]!.frame}, ${codecs}): ${num(sent)} bytes sent, ` +
          `${num(raw)} decompressed, ${plural(metricRollup(c).length, 'metric')}, ${plural(points, 'point')}` +
          `${errors > 0 ? `, ${plural(errors, 'error answer')}` : ''}${pushes[pushes.length - 1]!.terminating ? '; the last one Terminating' : ''}`,
      );
    }
  }
  return `${lines.map((l) => fitLine(l, width)).join('\n')}\n`;
}

/** A line wrapped at spaces to `width`, its continuation lines indented two more. */
function fitLine(line: string, width: number): string {
  if (line.length <= width) return line;
  const indent = line.length - line.trimStart().length;
  return wrap(line.trimStart(), Math.max(20, width - indent - 2))
    .map((l, i) => ' '.repeat(i === 0 ? indent : indent + 2) + l)
    .join('\n');
}
