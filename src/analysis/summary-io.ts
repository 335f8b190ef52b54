/**
 * The mergeable partial result (`kcid analyze --format summary-json`) and `kcid merge`: partial
 * results from captures analysed anywhere (one per broker, one per batch task) combine into the
 * same report as analysing all the captures at once.
 */
import { isJsonObject, JsonList, writeJson } from '../base/json-text.js';
import { sanitize } from '../base/sanitize.js';
import { activityProblem } from './activity.js';
import type { CaptureSummary } from './types.js';

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
    connections: new JsonList(summary.connections, (c) => c),
    findings: new JsonList(summary.findings, (f) => f),
  };
  writeJson(doc, 0, write);
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
  if (!isJsonObject(doc) || doc.kind !== SUMMARY_KIND) {
    throw new SummaryError(`${file}: not a kcid summary (make one with 'kcid analyze --format summary-json')`);
  }
  if (doc.version !== 1) throw new SummaryError(`${file}: summary version ${String(doc.version)} is not supported (expected 1)`);
  for (const key of ['inputs', 'connections', 'findings'] as const) {
    if (!Array.isArray(doc[key]) || !(doc[key] as unknown[]).every(isJsonObject)) throw new SummaryError(`${file}: '${key}' must be an array of objects`);
  }
  const inputs = doc.inputs as Record<string, unknown>[];
  const inRange = (o: Record<string, unknown>) => Number.isInteger(o.input) && (o.input as number) >= 0 && (o.input as number) < inputs.length;
  if (!(doc.connections as Record<string, unknown>[]).every(inRange) || !(doc.findings as Record<string, unknown>[]).every(inRange)) {
    throw new SummaryError(`${file}: an 'input' index points past its inputs`);
  }
  const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
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
  return { version: 1, inputs: doc.inputs, connections: doc.connections, findings: doc.findings } as unknown as CaptureSummary;
}

/** Concatenates partial results, renumbering each part's inputs after the ones before it. */
export function mergeSummaries(parts: readonly CaptureSummary[]): CaptureSummary {
  const merged: CaptureSummary = { version: 1, inputs: [], connections: [], findings: [] };
  for (const part of parts) {
    const offset = merged.inputs.length;
    merged.inputs.push(...part.inputs);
    for (const c of part.connections) merged.connections.push({ ...c, input: c.input + offset });
    for (const f of part.findings) merged.findings.push({ ...f, input: f.input + offset });
  }
  return merged;
}
