/**
 * Baselines for CI: `--write-baseline FILE` records the findings of today's traffic, `--baseline
 * FILE` reports only findings it does not record. A finding is recorded by a fingerprint that
 * stays the same when the same traffic is captured again, so it leaves out everything a capture
 * renumbers or the network reassigns:
 *
 *  - frame numbers and times (another capture starts earlier or later, or holds other traffic);
 *  - TCP ports and correlation IDs (the client's ephemeral port and its request counter);
 *  - the broker (which broker a client talks to is partition leadership and group coordination,
 *    which move between runs; kcid's rules are about the client's behaviour);
 *  - numbers and UUIDs inside the message (frame references, byte counts of a capture gap, IDs a
 *    broker assigns or a group member ID: they differ on every run).
 *
 * What it keeps: the rule, who the client is (its client instance ID, or for a client without one
 * its host and first ClientId, the way kcid groups such connections into an instance), the API,
 * and the message's remaining words. A baseline suppresses every finding with a recorded
 * fingerprint, however many there are: counts are recorded for people reading the file.
 */
import { createHash } from 'node:crypto';
import { apiName } from '../kafka/protocol.js';
import { isJsonObject } from '../base/json-text.js';
import { sanitize } from '../base/sanitize.js';
import type { Report } from './report.js';
import type { Finding, Severity } from './types.js';

export const BASELINE_VERSION = 1;

/** A bad baseline file: one line, naming the file. */
export class BaselineError extends Error {
  override readonly name = 'BaselineError';
  readonly oneLine = true;
}

export interface BaselineEntry {
  rule: string;
  clientInstanceId: string | null;
  apiName: string | null;
  fingerprint: string;
  count: number;
}

export interface Baseline {
  version: typeof BASELINE_VERSION;
  entries: BaselineEntry[];
  fingerprints: ReadonlySet<string>;
}

/** 16 hex digits: the first 64 bits of a SHA-256. */
const FINGERPRINT = /^[0-9a-f]{16}$/;

/**
 * A UUID in Kafka's base64url form (22 characters; 128 bits leave the last one's 4 low bits zero,
 * so it is A, Q, g or w), or in hex form.
 */
const BASE64_UUID = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{21}[AQgw](?![A-Za-z0-9_-])/g;
const HEX_UUID = /(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z])/g;

/** The message without what changes from one capture of the same traffic to the next. */
export function normalizeMessage(message: string): string {
  return message.replace(HEX_UUID, '<id>').replace(BASE64_UUID, '<id>').replace(/\d+/g, '#');
}

/** "10.0.0.1:4711" → "10.0.0.1", "[fd00::1]:4711" → "fd00::1". */
function host(endpoint: string): string {
  const colon = endpoint.lastIndexOf(':');
  return (colon < 0 ? endpoint : endpoint.slice(0, colon)).replace(/^\[|\]$/g, '');
}

const connKey = (input: number, client: string | null, broker: string | null): string => `${input}\u0000${client}\u0000${broker}`;

/** Computes fingerprints for the findings of one report (the ClientId lookup is built once). */
export class Fingerprinter {
  private readonly firstClientId = new Map<string, string>();

  constructor(report: Pick<Report, 'connections'>) {
    for (const c of report.connections) this.firstClientId.set(connKey(c.input, c.client, c.broker), c.clientIds[0] ?? '');
  }

  /**
   * Who the finding is about, in terms that survive a restart: the ClientId its connection named
   * (client.id is configuration), else the client's host, else the capture. Not the client
   * instance ID: under KIP-1313 a client makes a new one every time it starts, so a baseline keyed
   * by it would call every finding of a re-recorded run new.
   */
  identity(f: Finding): string {
    if (f.client === null) return 'capture';
    const clientId = this.firstClientId.get(connKey(f.input, f.client, f.broker)) ?? '';
    return clientId !== '' ? `client-id:${clientId}` : `host:${host(f.client)}`;
  }

  fingerprint(f: Finding): string {
    const parts = [`kcid-fingerprint-${BASELINE_VERSION}`, f.rule, this.identity(f), f.apiKey === null ? '' : String(f.apiKey), normalizeMessage(f.message)];
    return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
  }
}

/** One finding's fingerprint. For many, use a {@link Fingerprinter} or {@link fingerprintAll}. */
export function fingerprint(f: Finding, report: Pick<Report, 'connections'>): string {
  return new Fingerprinter(report).fingerprint(f);
}

/** The fingerprints of report.findings, in the same order. */
export function fingerprintAll(report: Pick<Report, 'connections' | 'findings'>): string[] {
  const fp = new Fingerprinter(report);
  return report.findings.map((f) => fp.fingerprint(f));
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The baseline file for a report: JSON, entries sorted by rule, instance, API and fingerprint. */
export function writeBaseline(report: Report): string {
  const prints = fingerprintAll(report);
  const byPrint = new Map<string, BaselineEntry>();
  report.findings.forEach((f, i) => {
    const print = prints[i]!;
    const entry = byPrint.get(print);
    if (entry !== undefined) entry.count++;
    else byPrint.set(print, { rule: f.rule, clientInstanceId: f.clientInstanceId, apiName: f.apiKey === null ? null : apiName(f.apiKey), fingerprint: print, count: 1 });
  });
  const entries = [...byPrint.values()].sort(
    (a, b) =>
      compareText(a.rule, b.rule) ||
      compareText(a.clientInstanceId ?? '', b.clientInstanceId ?? '') ||
      compareText(a.apiName ?? '', b.apiName ?? '') ||
      compareText(a.fingerprint, b.fingerprint),
  );
  return `${JSON.stringify({ version: BASELINE_VERSION, createdBy: 'kcid', entries }, null, 2)}\n`;
}

const TOP_KEYS = ['version', 'createdBy', 'entries'];
const ENTRY_KEYS = ['rule', 'clientInstanceId', 'apiName', 'fingerprint', 'count'];


/** Reads a baseline file's text; `file` names it in errors. Throws {@link BaselineError}. */
export function parseBaseline(text: string, file: string): Baseline {
  const fail = (what: string): never => {
    throw new BaselineError(`${sanitize(file)}: ${what}`);
  };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return fail('not a kcid baseline (not valid JSON)');
  }
  if (!isJsonObject(doc) || doc.createdBy !== 'kcid' || !Object.hasOwn(doc, 'version')) {
    return fail("not a kcid baseline (expected a JSON object written by 'kcid analyze --write-baseline')");
  }
  if (doc.version !== BASELINE_VERSION) {
    return fail(`baseline version ${sanitize(JSON.stringify(doc.version) ?? '')} is not supported (this kcid reads version ${BASELINE_VERSION}; write it again with --write-baseline)`);
  }
  const extra = Object.keys(doc).find((k) => !TOP_KEYS.includes(k));
  if (extra !== undefined) fail(`unknown key "${sanitize(extra)}" (expected ${TOP_KEYS.join(', ')})`);
  if (!Array.isArray(doc.entries)) return fail('"entries" must be an array');
  const entries = doc.entries.map((e: unknown, i: number) => parseEntry(e, `entries[${i}]`, fail));
  return { version: BASELINE_VERSION, entries, fingerprints: new Set(entries.map((e) => e.fingerprint)) };
}

function parseEntry(e: unknown, at: string, fail: (what: string) => never): BaselineEntry {
  if (!isJsonObject(e)) return fail(`${at} must be an object`);
  const extra = Object.keys(e).find((k) => !ENTRY_KEYS.includes(k));
  if (extra !== undefined) fail(`${at}: unknown key "${sanitize(extra)}" (expected ${ENTRY_KEYS.join(', ')})`);
  const missing = ENTRY_KEYS.find((k) => !Object.hasOwn(e, k));
  if (missing !== undefined) fail(`${at}: missing "${missing}"`);
  if (typeof e.rule !== 'string' || e.rule === '') fail(`${at}: "rule" must be a rule id`);
  if (e.clientInstanceId !== null && typeof e.clientInstanceId !== 'string') fail(`${at}: "clientInstanceId" must be a string or null`);
  if (e.apiName !== null && typeof e.apiName !== 'string') fail(`${at}: "apiName" must be a string or null`);
  if (typeof e.fingerprint !== 'string' || !FINGERPRINT.test(e.fingerprint)) fail(`${at}: "fingerprint" must be 16 lowercase hex digits`);
  if (!Number.isSafeInteger(e.count) || (e.count as number) < 1) fail(`${at}: "count" must be a whole number from 1`);
  return {
    rule: e.rule as string,
    clientInstanceId: e.clientInstanceId as string | null,
    apiName: e.apiName as string | null,
    fingerprint: e.fingerprint as string,
    count: e.count as number,
  };
}

/** The report without the findings the baseline records; counts recomputed, `suppressed` added up. */
export function applyBaseline(report: Report, baseline: Baseline): { report: Report; suppressed: number } {
  const prints = fingerprintAll(report);
  const findings = report.findings.filter((_, i) => !baseline.fingerprints.has(prints[i]!));
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const suppressed = report.findings.length - findings.length;
  return {
    report: { ...report, findings, counts: { ...report.counts, findings: counts }, suppressed: (report.suppressed ?? 0) + suppressed },
    suppressed,
  };
}
