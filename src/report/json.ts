/** `kcid analyze --format json`: one document, keys in a fixed order, stable for CI. */
import type { Report } from '../analysis/report.js';
import { telemetryJson } from './telemetry-json.js';
import { connectionOwner } from '../analysis/owner.js';
import type { ConnectionSummary, Finding } from '../analysis/types.js';
import { apiName } from '../kafka/protocol.js';
import { jsonString, JsonList, safeJson, writeJson } from '../base/json-text.js';
import type { TlsInfo } from '../tls/types.js';
import { isoMicros } from '../base/time.js';

export const JSON_FORMAT_VERSION = 1;

const iso = (us: number | null): string | null => (us === null ? null : isoMicros(us));

export function findingJson(f: Finding): Record<string, unknown> {
  return {
    rule: f.rule,
    severity: f.severity,
    message: f.message,
    frame: f.frame,
    time: iso(f.timeUs),
    client: f.client,
    broker: f.broker,
    apiKey: f.apiKey,
    apiName: f.apiKey === null ? null : apiName(f.apiKey),
    apiVersion: f.apiVersion,
    correlationId: f.correlationId,
    clientInstanceId: f.clientInstanceId,
    // Counted from 1, as the tables number inputs ("[2] broker-2.pcapng", frame 2:42).
    input: f.input + 1,
  };
}

function connectionJson(c: ConnectionSummary): Record<string, unknown> {
  return {
    client: c.client,
    broker: c.broker,
    clientInstanceId: connectionOwner(c.headerInstanceIds, c.telemetryInstanceId).id,
    startSeen: c.startSeen,
    requests: c.requests,
    gaps: c.gaps,
    input: c.input + 1,
    ...(c.tls === undefined ? {} : { tls: tlsJson(c.tls) }),
  };
}

/** A TLS connection's handshake, keys in a fixed order (present only on TLS connections). */
export function tlsJson(t: TlsInfo): Record<string, unknown> {
  return {
    version: t.version,
    offered: t.offered,
    cipher: t.cipher,
    sni: t.sni,
    alpn: t.alpn,
    helloRetry: t.helloRetry,
    resumed: t.resumed,
    certificate: t.certificate === null ? null : { subject: t.certificate.subject, notBefore: t.certificate.notBefore, notAfter: t.certificate.notAfter },
    clientRandom: t.clientRandom,
    decrypted: t.decrypted,
  };
}

/**
 * connectionJson(c) as JSON text at `nl` (a report lists a connection per row: 100,000 rows are
 * written directly rather than made into objects for JSON.stringify). Same bytes, tested.
 */
function connectionText(c: ConnectionSummary, nl: string): string {
  const i = `${nl}  `;
  return (
    `{${i}"client": ${jsonString(c.client)},${i}"broker": ${jsonString(c.broker)},` +
    `${i}"clientInstanceId": ${jsonString(connectionOwner(c.headerInstanceIds, c.telemetryInstanceId).id)},` +
    `${i}"startSeen": ${c.startSeen},${i}"requests": ${c.requests},${i}"gaps": ${c.gaps},${i}"input": ${c.input + 1}` +
    `${c.tls === undefined ? '' : `,${i}"tls": ${safeJson(tlsJson(c.tls), 2).split('\n').join(i)}`}${nl}}`
  );
}

export function reportJson(report: Report): Record<string, unknown> {
  return {
    version: JSON_FORMAT_VERSION,
    inputs: report.inputs.map((i) => ({
      file: i.file,
      format: i.gzip ? `${i.format}+gzip` : i.format,
      packets: i.packets,
      bytes: i.bytes,
      kafkaPorts: i.kafkaPorts,
      notes: i.notes,
    })),
    summary: {
      connections: report.counts.connections,
      requests: report.counts.requests,
      responses: report.counts.responses,
      instances: report.counts.instances,
      findings: { ...report.counts.findings },
      ...(report.suppressed === undefined ? {} : { suppressed: report.suppressed }),
      ...(report.notListed === undefined ? {} : { notListed: { ...report.notListed } }),
      ...(report.config === undefined ? {} : { config: report.config }),
    },
    instances: report.instances.map((inst) => ({
      clientInstanceId: inst.clientInstanceId,
      clientInstanceIdHex: inst.clientInstanceIdHex,
      source: inst.source,
      clientIds: inst.clientIds,
      software: inst.software.map((s) => ({ name: s.name, version: s.version })),
      clientAddresses: inst.clientAddresses,
      brokers: inst.brokers,
      connections: inst.connections.length,
      requests: inst.requests,
      apis: Object.fromEntries([...inst.apis].map(([key, n]) => [apiName(key), n])),
      firstSeen: isoMicros(inst.firstUs),
      lastSeen: isoMicros(inst.lastUs),
    })),
    connections: new JsonList(report.connections, connectionJson, connectionText),
    findings: new JsonList(report.findings, (f) => ({ ...findingJson(f), show: showCommand(report, f) })),
    // KIP-714 conversations, when telemetry was asked for (analyze --telemetry): see telemetry-json.ts.
    ...(report.telemetry.length > 0 ? { telemetry: telemetryJson(report.telemetry) } : {}),
  };
}

/** The `kcid show` command line that shows a finding's frame (null without a frame, or for standard input). */
export function showCommand(report: Report, f: Finding): string | null {
  const file = report.inputs[f.input]?.file;
  if (f.frame === null || file === undefined || file === '-') return null;
  return `kcid show ${/^[\w./:@%+=,-]+$/.test(file) ? file : `'${file.replace(/'/g, "'\\''")}'`} ${f.frame}`;
}

/** The report as JSON, written in pieces (see writeJson): same bytes as {@link renderJson}. */
export function writeReportJson(report: Report, write: (s: string) => void): void {
  writeJson(reportJson(report), 2, write);
}

export function renderJson(report: Report): string {
  const parts: string[] = [];
  writeReportJson(report, (s) => parts.push(s));
  return parts.join('');
}
