/** `kcid clients`: one row per client instance, or one instance in detail with a timeline. */
import type { InstanceModel } from '../analysis/instances.js';
import { latencyPercentiles } from '../analysis/latency.js';
import type { Report } from '../analysis/report.js';
import type { Finding, Severity } from '../analysis/types.js';
import { safeJson } from '../base/json-text.js';
import type { RequestRow } from './requests.js';
import { quoted, sanitize } from '../base/sanitize.js';
import type { TlsInfo } from '../tls/types.js';
import { fittedTable, inputLegendLines } from './table.js';
import { wrap } from './wrap.js';
import { makeClock, type Clock } from './clock.js';
import type { Style } from './style.js';

export interface ClientStats {
  instance: InstanceModel;
  errorResponses: number;
  /** Every non-zero error code the instance's responses carry (top level and per topic, partition, group). */
  errors: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** The percentiles are exact latencies, not bucket bounds (analysis/latency.ts). */
  latencyExact: boolean;
  findings: Record<Severity, number>;
}

const connKey = (input: number, client: string | null, broker: string | null) => `${input}\u0000${client}\u0000${broker}`;

/** The findings that concern an instance: about its ID, or on one of its connections. */
export function instanceFindings(report: Report, inst: InstanceModel): Finding[] {
  const conns = new Set(inst.connections.map((c) => connKey(c.input, c.client, c.broker)));
  return report.findings.filter(
    (f) => (inst.clientInstanceId !== null && f.clientInstanceId === inst.clientInstanceId) || conns.has(connKey(f.input, f.client, f.broker)),
  );
}

export function clientStats(report: Report): ClientStats[] {
  return report.instances.map((instance) => {
    const latency = latencyPercentiles(instance.connections);
    const findings = { error: 0, warning: 0, info: 0 };
    for (const f of instanceFindings(report, instance)) findings[f.severity]++;
    return { instance, errorResponses: instance.errorResponses, errors: instance.errors, p50Ms: latency.p50Ms, p99Ms: latency.p99Ms, latencyExact: latency.exact, findings };
  });
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
/** A percentile: exact to the microsecond, or a bucket bound marked ≈ (within 5%, see latency.ts). */
export const percentileText = (v: number | null, exact: boolean): string => (v === null ? '-' : exact ? v.toFixed(3) : `≈${v.toFixed(v < 10 ? 2 : 1)}`);
const list = (values: readonly string[]): string => (values.length === 0 ? '-' : values.map(sanitize).join('\n'));

const CLIENTS_HEAD = ['Client instance ID', 'ClientId', 'Software', 'Hosts', 'Brokers', 'Conns', 'Requests', 'Errors', 'p50 ms', 'p99 ms', 'Findings'];
/** Columns a narrow terminal loses first, in order; the ID, ClientId, requests, p99 and findings stay. */
const CLIENTS_DROP_ORDER = ['Brokers', 'Software', 'Conns', 'p50 ms', 'Errors', 'Hosts'];

/** One row per client instance; on a terminal narrower than the table, the least needed columns go. */
export function renderClientsTable(report: Report, style: Style, width = Infinity): string {
  const stats = clientStats(report);
  if (stats.length === 0) return 'No client instances.\n';
  const rows: string[][] = [];
  for (const s of stats) {
    const i = s.instance;
    const f = s.findings;
    rows.push([
      i.clientInstanceId ?? style.dim('(none)'),
      list(i.clientIds),
      list(i.software.map((x) => `${x.name} ${x.version}`.trim())),
      list(i.clientAddresses),
      list(i.brokers),
      String(i.connections.length),
      String(i.requests),
      String(s.errors),
      percentileText(s.p50Ms, s.latencyExact),
      percentileText(s.p99Ms, s.latencyExact),
      f.error + f.warning + f.info === 0 ? '-' : [f.error && style.severity('error', plural(f.error, 'error')), f.warning && style.severity('warning', plural(f.warning, 'warning')), f.info && style.severity('info', plural(f.info, 'note'))].filter(Boolean).join('\n'),
    ]);
  }
  return `${fittedTable(CLIENTS_HEAD, rows, CLIENTS_DROP_ORDER, style, width, ['ClientId', 'Software', 'Brokers', 'Hosts'])}\n`;
}

export function renderClientsJson(report: Report): string {
  const doc = clientStats(report).map((s) => ({
    clientInstanceId: s.instance.clientInstanceId,
    clientInstanceIdHex: s.instance.clientInstanceIdHex,
    source: s.instance.source,
    clientIds: s.instance.clientIds,
    software: s.instance.software,
    clientAddresses: s.instance.clientAddresses,
    brokers: s.instance.brokers,
    connections: s.instance.connections.length,
    requests: s.instance.requests,
    errorResponses: s.errorResponses,
    errors: s.errors,
    latencyP50Ms: s.p50Ms,
    latencyP99Ms: s.p99Ms,
    latencyExact: s.latencyExact,
    findings: s.findings,
  }));
  return `${safeJson(doc, 2)}\n`;
}

/** A TLS connection's handshake in one line: version, cipher, SNI, ALPN, resumption, certificate, decrypted or not. */
export function tlsText(t: TlsInfo): string {
  const parts = [t.version ?? `handshake not complete (offered ${t.offered ?? '?'})`];
  if (t.cipher !== null) parts.push(t.cipher);
  if (t.helloRetry) parts.push('after HelloRetryRequest');
  if (t.sni !== null) parts.push(`SNI ${quoted(t.sni)}`);
  if (t.alpn.length > 0) parts.push(`ALPN ${t.alpn.map(quoted).join(', ')}`);
  if (t.resumed) parts.push('resumed');
  const cert = t.certificate;
  if (cert !== null) parts.push(`certificate ${quoted(cert.subject)} valid ${cert.notBefore ?? '?'} to ${cert.notAfter ?? '?'}`);
  parts.push(t.decrypted ? 'decrypted' : `not decrypted (client random ${t.clientRandom ?? '?'})`);
  return parts.join(', ');
}

/** One instance: identity, its connections, its findings, and a timeline of its requests across brokers. */
/** `width`: the terminal's columns; text wraps at spaces and tables drop their least needed columns to fit. */
export function renderClientDetail(
  report: Report,
  inst: InstanceModel,
  rows: readonly RequestRow[],
  truncated: boolean,
  style: Style,
  clock: Clock = makeClock('ad'),
  width = Infinity,
): string {
  const fit = (line: string, indent = '') => (width === Infinity ? line : wrap(line, width - indent.length).map((l, i) => (i === 0 ? l : indent + l)).join('\n'));
  const s = clientStats({ ...report, instances: [inst] })[0]!;
  const lines = [
    `${style.bold('Client instance')} ${inst.clientInstanceId ?? '(none)'}${inst.clientInstanceIdHex === null ? '' : ` (${inst.clientInstanceIdHex})`}, source: ${inst.source}`,
    `ClientIds: ${inst.clientIds.map((c) => `"${sanitize(c)}"`).join(', ') || '(null)'}`,
    `Software: ${inst.software.map((x) => sanitize(`${x.name} ${x.version}`)).join(', ') || '-'}`,
    `Hosts: ${inst.clientAddresses.join(', ')}    Brokers: ${inst.brokers.join(', ')}`,
    `Requests: ${inst.requests}, responses: ${inst.responses}, error responses: ${s.errorResponses} (${s.errors} error codes), latency p50 ${percentileText(s.p50Ms, s.latencyExact)} ms, p99 ${percentileText(s.p99Ms, s.latencyExact)} ms`,
    `Seen: ${clock(inst.firstUs)} to ${clock(inst.lastUs)}`,
  ].map((l) => fit(l, '    '));
  lines.push(...inputLegendLines(report), '', style.bold('Connections'));
  const multi = report.inputs.length > 1;
  const connRows = inst.connections.map((c) => [c.client, c.broker, multi ? `${c.input + 1}:${c.firstFrame}` : String(c.firstFrame), c.startSeen ? 'yes' : 'no', String(c.requests), String(c.responses), String(c.errors ?? c.errorResponses), String(c.gaps)]);
  lines.push(
    fittedTable(['Client', 'Broker', 'First frame', 'Start seen', 'Requests', 'Responses', 'Errors', 'Gaps'], connRows, ['Start seen', 'Gaps', 'Responses', 'First frame', 'Errors'], style, width, ['Client', 'Broker']),
  );
  const overTls = inst.connections.filter((c) => c.tls !== undefined);
  if (overTls.length > 0) {
    lines.push('', style.bold('TLS'));
    for (const c of overTls) lines.push(fit(`${c.client} -> ${c.broker}: ${tlsText(c.tls!)}`, '    '));
  }
  lines.push('', style.bold('Findings'));
  const findings = instanceFindings(report, inst);
  if (findings.length === 0) lines.push('No findings.');
  for (const f of findings) lines.push(style.severity(f.severity) + fit(`${f.severity}  ${f.rule}  frame ${f.frame ?? '-'}  ${f.message}`, '    ').slice(f.severity.length));
  lines.push('', style.bold('Timeline'));
  const tlRows = rows.map((r) => [clock(r.timeUs), multi ? `${r.input + 1}:${r.frame}` : String(r.frame), r.broker, r.apiKey === null ? '(request not captured)' : `${r.apiName} v${r.apiVersion}`, String(r.correlationId), r.responseFrame === null ? '-' : String(r.responseFrame), r.errorName ?? '-', r.latencyMs === null ? '-' : r.latencyMs.toFixed(3)]);
  lines.push(rows.length === 0 ? 'No requests.' : fittedTable(['Time', 'Frame', 'Broker', 'API', 'Corr', 'Response', 'Error', 'ms'], tlRows, ['Corr', 'Response', 'Frame'], style, width, ['API', 'Error', 'Broker']));
  if (truncated) lines.push(style.dim(fit('(timeline cut at its first requests; narrow it with --since/--until or --broker)')));
  return `${lines.join('\n')}\n`;
}
