/**
 * The mergeable partial result (`kcid analyze --format summary-json`) and `kcid merge`: partial
 * results from captures analysed anywhere (one per broker, one per batch task) combine into the
 * same report as analysing all the captures at once.
 */
import { isJsonObject, JsonList, writeJson } from '../base/json-text.js';
import { sanitize } from '../base/sanitize.js';
import { activityProblem } from './activity.js';
import { problem } from '../base/shape.js';
import { SUMMARY_SHAPE } from './summary-shape.js';
import { histogramOf } from './latency.js';
import type { CaptureSummary, ConnectionSummary, TelemetryEvent } from './types.js';

export const SUMMARY_KIND = 'kcid-summary';

export class SummaryError extends Error {
  override readonly name = 'SummaryError';
}

/** The partial result as one line of JSON, written in pieces (connections and findings one by one). */
export function writeSummaryJson(summary: CaptureSummary, write: (s: string) => void): void {
  const doc = {
    kind: SUMMARY_KIND,
    version: summary.version,
    inputs: summary.inputs,
    connections: new JsonList(summary.connections, withHistogram),
    findings: new JsonList(summary.findings, (f) => f),
    ...(summary.telemetry !== undefined && summary.telemetry.length > 0 ? { telemetry: new JsonList(summary.telemetry, (t) => t) } : {}),
  };
  writeJson(doc, 0, write);
}

/**
 * A connection as its summary file carries it: with its histogram even when it kept every latency
 * (in memory it then holds only those), so a reader that knows only histograms still has them.
 */
function withHistogram(c: ConnectionSummary): ConnectionSummary {
  return c.latency.length === 0 && c.latencyUs !== undefined && c.latencyUs.length > 0 ? { ...c, latency: histogramOf(c.latencyUs) } : c;
}

export function renderSummaryJson(summary: CaptureSummary): string {
  const parts: string[] = [];
  writeSummaryJson(summary, (s) => parts.push(s));
  return parts.join('');
}


/** Parses one partial result; a file that is not one is a one-line error naming it. */
export function parseSummary(text: string, file: string): CaptureSummary {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    // JSON.parse quotes the offending bytes: a binary file would put raw control bytes on the terminal.
    throw new SummaryError(`${file}: not JSON (${sanitize((e as Error).message).slice(0, 120)})`);
  }
  return summaryFromJson(doc, file);
}

/** A parsed summary file's value checked and taken as a partial result (summary-stream.ts reads big ones). */
export function summaryFromJson(doc: unknown, file: string): CaptureSummary {
  if (!isJsonObject(doc) || doc.kind !== SUMMARY_KIND) {
    throw new SummaryError(`${file}: not a kcid summary (make one with 'kcid analyze --format summary-json')`);
  }
  if (doc.version !== 1) throw new SummaryError(`${file}: summary version ${String(doc.version)} is not supported (expected 1)`);
  for (const key of ['inputs', 'connections', 'findings'] as const) {
    if (!Array.isArray(doc[key]) || !(doc[key] as unknown[]).every(isJsonObject)) throw new SummaryError(`${file}: '${key}' must be an array of objects`);
  }
  if (doc.telemetry !== undefined && !(Array.isArray(doc.telemetry) && doc.telemetry.every(isTelemetryEvent))) {
    throw new SummaryError(`${file}: 'telemetry' must be an array of telemetry events (kind, input, frame, timeUs...)`);
  }
  const inputs = doc.inputs as Record<string, unknown>[];
  const inRange = (o: Record<string, unknown>) => Number.isInteger(o.input) && (o.input as number) >= 0 && (o.input as number) < inputs.length;
  const telemetry = (doc.telemetry ?? []) as Record<string, unknown>[];
  if (!(doc.connections as Record<string, unknown>[]).every(inRange) || !(doc.findings as Record<string, unknown>[]).every(inRange) || !telemetry.every(inRange)) {
    throw new SummaryError(`${file}: an 'input' index points past its inputs`);
  }
  const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  for (const c of doc.connections as Record<string, unknown>[]) {
    const us = c.latencyUs;
    if (us === undefined) continue;
    if (!Array.isArray(us) || us.length % 2 !== 0 || !us.every((v, i) => (i % 2 === 0 ? count(v) : Number.isSafeInteger(v)))) {
      throw new SummaryError(`${file}: a connection's 'latencyUs' is not [apiKey, microseconds, ...]`);
    }
  }
  for (const input of inputs) {
    const n = input.notListed;
    if (n === undefined) continue;
    const ok =
      isJsonObject(n) &&
      count(n.connections) &&
      count(n.requests) &&
      count(n.responses) &&
      Array.isArray(n.findings) &&
      n.findings.every((p: unknown) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && count(p[1]));
    if (!ok) throw new SummaryError(`${file}: an input's 'notListed' is not {connections, requests, responses, findings: [[rule, count]]}`);
  }
  for (const input of inputs) {
    if (input.activity === undefined) continue;
    const problem = activityProblem(input.activity);
    if (problem !== null) throw new SummaryError(`${file}: an input's 'activity' ${problem}`);
  }
  const bad = problem(SUMMARY_SHAPE, doc);
  if (bad !== null) throw new SummaryError(`${file}: ${bad}`);
  const parsed = { version: 1, inputs: doc.inputs, connections: doc.connections, findings: doc.findings } as unknown as CaptureSummary;
  if (telemetry.length > 0) parsed.telemetry = telemetry as unknown as TelemetryEvent[];
  return parsed;
}

/** The fields the telemetry rules and `kcid telemetry` read, with their types (the rest is shown as given). */
function isTelemetryEvent(t: unknown): boolean {
  if (!isJsonObject(t)) return false;
  const int = (v: unknown) => Number.isSafeInteger(v);
  const intOrNull = (v: unknown) => v === null || int(v);
  const strOrNull = (v: unknown) => v === null || typeof v === 'string';
  const base =
    int(t.input) && int(t.connection) && int(t.frame) && int(t.timeUs) && int(t.apiVersion) && int(t.correlationId) &&
    typeof t.client === 'string' && typeof t.broker === 'string' && typeof t.clientIp === 'string' &&
    strOrNull(t.clientId) && strOrNull(t.instanceId) && intOrNull(t.responseFrame) && intOrNull(t.responseUs) && intOrNull(t.errorCode) && typeof t.startSeen === 'boolean';
  if (!base) return false;
  if (t.kind === 'subscription') {
    return (
      int(t.subscriptionId) && int(t.pushIntervalMs) && int(t.telemetryMaxBytes) && typeof t.deltaTemporality === 'boolean' &&
      Array.isArray(t.acceptedCompressionTypes) && t.acceptedCompressionTypes.every(int) &&
      Array.isArray(t.requestedMetrics) && t.requestedMetrics.every((m: unknown) => typeof m === 'string')
    );
  }
  if (t.kind === 'push') {
    const p = t.payload;
    const payloadOk =
      p === null ||
      (isJsonObject(p) && int(p.decompressedBytes) && int(p.metricCount) && int(p.points) && Array.isArray(p.resource) && Array.isArray(p.scopes) &&
        Array.isArray(p.metrics) && p.metrics.every((m: unknown) => isJsonObject(m) && typeof m.name === 'string' && typeof m.type === 'string' && int(m.points)));
    const e = t.payloadError;
    return (
      int(t.subscriptionId) && typeof t.terminating === 'boolean' && int(t.compressionType) && intOrNull(t.metricsBytes) && payloadOk &&
      (e === null || (isJsonObject(e) && typeof e.kind === 'string' && typeof e.message === 'string'))
    );
  }
  return false;
}

/** Concatenates partial results, renumbering each part's inputs after the ones before it. */
export function mergeSummaries(parts: readonly CaptureSummary[]): CaptureSummary {
  const merged: CaptureSummary = { version: 1, inputs: [], connections: [], findings: [] };
  for (const part of parts) {
    const offset = merged.inputs.length;
    merged.inputs.push(...part.inputs);
    for (const c of part.connections) merged.connections.push({ ...c, input: c.input + offset });
    for (const f of part.findings) merged.findings.push({ ...f, input: f.input + offset });
    for (const t of part.telemetry ?? []) (merged.telemetry ??= []).push({ ...t, input: t.input + offset });
  }
  return merged;
}
