/**
 * Filters for `analyze`, `requests` and `clients`: narrow a report (or a stream of request rows)
 * to one client instance, ClientId, client or broker address, some APIs, or a time window. Parsing
 * is pure and throws FilterError with one line; applying never changes what was analysed, only
 * what is shown (cross-connection findings about a kept instance stay).
 */
import { protocol } from '../kafka/protocol.js';
import { parseUuid, uuidToBase64 } from '../kafka/uuid.js';
import { groupInstances } from './instances.js';
import type { Report } from './report.js';
import type { ConnectionSummary, Finding } from './types.js';

export class FilterError extends Error {
  override readonly name = 'FilterError';
}

export interface EndpointPattern {
  host: string;
  port: number | null;
}

/** A time bound: absolute (µs since the epoch) or an offset from the start of the capture. */
export type TimeBound = { absoluteUs: number } | { offsetUs: number };

export interface Filters {
  instance?: string;
  clientId?: string;
  client?: EndpointPattern;
  broker?: EndpointPattern;
  apis?: ReadonlySet<number>;
  since?: TimeBound;
  until?: TimeBound;
}

/** --since after --until (both absolute, or both offsets) can match nothing: a usage error, not an empty report. */
export function checkWindow(f: Filters): void {
  const { since, until } = f;
  if (since === undefined || until === undefined) return;
  const a = 'absoluteUs' in since ? since.absoluteUs : null;
  const b = 'absoluteUs' in until ? until.absoluteUs : null;
  const x = 'offsetUs' in since ? since.offsetUs : null;
  const y = 'offsetUs' in until ? until.offsetUs : null;
  if ((a !== null && b !== null && a > b) || (x !== null && y !== null && x > y)) throw new FilterError('--since is after --until: the window is empty');
}

export function hasFilters(f: Filters): boolean {
  return Object.values(f).some((v) => v !== undefined);
}

/** "10.0.0.1", "10.0.0.1:9092", "::1", "[::1]:9092", "broker-1:9092" (host names match nothing but are allowed). */
export function parseEndpointPattern(text: string, option: string): EndpointPattern {
  const t = text.trim();
  let m = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(t);
  if (m === null && t.includes(':') && t.indexOf(':') !== t.lastIndexOf(':')) m = /^([0-9a-fA-F:.]+)()$/.exec(t);
  if (m === null) m = /^([^:\s]+)(?::(\d{1,5}))?$/.exec(t);
  const port = m?.[2] ? Number(m[2]) : null;
  if (m === null || (port !== null && (port < 1 || port > 65535))) {
    throw new FilterError(`invalid ${option} '${text}' (expected HOST or HOST:PORT, IPv6 as [addr]:port)`);
  }
  return { host: m[1]!.toLowerCase(), port };
}

export function matchesEndpoint(p: EndpointPattern, endpoint: string | null): boolean {
  if (endpoint === null) return false;
  const colon = endpoint.lastIndexOf(':');
  const host = endpoint.slice(0, colon).replace(/^\[|\]$/g, '');
  return host === p.host && (p.port === null || Number(endpoint.slice(colon + 1)) === p.port);
}

/** "Produce,Fetch" or "0,1": API names (any case) or keys. */
export function parseApis(text: string): Set<number> {
  const keys = new Set<number>();
  const byName = new Map(protocol().apis.map((a) => [a.name.toLowerCase(), a.key]));
  for (const part of text.split(',')) {
    const p = part.trim();
    const key = /^\d+$/.test(p) ? Number(p) : byName.get(p.toLowerCase());
    if (key === undefined) {
      throw new FilterError(`unknown API '${p}' in --api (use names such as Produce,Fetch or numeric keys)`);
    }
    keys.add(key);
  }
  return keys;
}

const UNIT_US: Record<string, number> = { ms: 1e3, s: 1e6, m: 60e6, h: 3600e6 };

/**
 * A day or a time of day in UTC: 2025-12-01, 2025-12-01 00:00:00, 2025-12-01T00:00:00.5Z; with a zone
 * (Z, +01:00, +0100) it is in that zone. Every time kcid prints is UTC, so one without a zone is UTC
 * too (not the host's zone).
 */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)? ?(Z|[+-]\d{2}:?\d{2})?$/i;

/** An ISO 8601 time (or day), or an offset from the capture start such as 90s, +5m, 1h30m, 250ms. */
export function parseTimeBound(text: string, option: string): TimeBound {
  const t = text.trim().replace(/^\+/, '');
  if (/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(t)) {
    let us = 0;
    for (const [, n, , unit] of t.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) us += Number(n) * UNIT_US[unit!]!;
    return { offsetUs: Math.round(us) };
  }
  const m = ISO_TIME.exec(t);
  if (m !== null) {
    const [y, mo, d, h = 0, mi = 0, sec = 0] = m.slice(1, 7).map((v) => (v === undefined ? undefined : Number(v))) as number[];
    const zone = m[8] ?? 'Z';
    const offsetMin = /^z$/i.test(zone) ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
    const dayMs = Date.UTC(y!, mo! - 1, d!);
    const day = new Date(dayMs);
    // Date.UTC rolls 2025-02-30 over into March: a day that is not on the calendar is an error.
    const real = day.getUTCFullYear() === y && day.getUTCMonth() === mo! - 1 && day.getUTCDate() === d && h <= 23 && mi <= 59 && sec <= 60;
    if (real) {
      const seconds = dayMs / 1000 + h * 3600 + mi * 60 + sec - offsetMin * 60;
      return { absoluteUs: seconds * 1_000_000 + Number((m[7] ?? '').padEnd(6, '0').slice(0, 6)) };
    }
  }
  throw new FilterError(
    `invalid ${option} '${text}' (expected a UTC time such as 2026-12-01, 2026-12-01 02:00:00 or 2026-12-01T02:00:00Z, or an offset from the capture start such as 90s or 5m)`,
  );
}

export function resolveBound(b: TimeBound, startUs: number | null): number {
  return 'absoluteUs' in b ? b.absoluteUs : (startUs ?? 0) + b.offsetUs;
}

/** Instance IDs matching a user's text: a full ID (base64 or hex) or a prefix of either form. */
export function matchInstanceIds(text: string, ids: readonly string[]): string[] {
  const full = parseUuid(text);
  if (full !== null) {
    const b64 = uuidToBase64(full);
    return ids.filter((id) => id === b64);
  }
  const hexPrefix = text.replace(/-/g, '').toLowerCase();
  return ids.filter((id) => {
    if (id.startsWith(text)) return true;
    const u = parseUuid(id);
    return u !== null && /^[0-9a-f]+$/.test(hexPrefix) && Buffer.from(u).toString('hex').startsWith(hexPrefix);
  });
}

/** The one instance ID a filter names, or a one-line error when it names none or several. */
export function resolveInstance(text: string, ids: readonly string[]): string {
  const matches = [...new Set(matchInstanceIds(text, ids))];
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new FilterError(`no client instance matches '${text}'`);
  throw new FilterError(`'${text}' matches ${matches.length} client instances (${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', ...' : ''}): give more of the ID`);
}

const connKey = (input: number, client: string | null, broker: string | null): string => `${input}\u0000${client}\u0000${broker}`;

export function filterReport(report: Report, f: Filters): Report {
  if (!hasFilters(f)) return report;
  const startUs = captureStartUs(report);
  const since = f.since === undefined ? -Infinity : resolveBound(f.since, startUs);
  const until = f.until === undefined ? Infinity : resolveBound(f.until, startUs);
  let instanceConnections: Set<ConnectionSummary> | null = null;
  let instanceId: string | null = null;
  if (f.instance !== undefined) {
    const ids = report.instances.flatMap((i) => (i.clientInstanceId === null ? [] : [i.clientInstanceId]));
    instanceId = resolveInstance(f.instance, ids);
    instanceConnections = new Set(report.instances.find((i) => i.clientInstanceId === instanceId)!.connections);
  }
  const keepConnection = (c: ConnectionSummary): boolean =>
    (instanceConnections === null || instanceConnections.has(c)) &&
    (f.clientId === undefined || c.clientIds.includes(f.clientId)) &&
    (f.client === undefined || matchesEndpoint(f.client, c.client)) &&
    (f.broker === undefined || matchesEndpoint(f.broker, c.broker)) &&
    (f.apis === undefined || c.apis.some(([key]) => f.apis!.has(key))) &&
    c.lastUs >= since &&
    c.firstUs <= until;
  const connections = report.connections.filter(keepConnection);
  const kept = new Set(connections.map((c) => connKey(c.input, c.client, c.broker)));
  const keepFinding = (x: Finding): boolean =>
    (instanceId === null || x.clientInstanceId === instanceId || kept.has(connKey(x.input, x.client, x.broker))) &&
    (f.clientId === undefined || kept.has(connKey(x.input, x.client, x.broker))) &&
    (f.client === undefined || matchesEndpoint(f.client, x.client)) &&
    (f.broker === undefined || matchesEndpoint(f.broker, x.broker)) &&
    (f.apis === undefined || (x.apiKey !== null && f.apis.has(x.apiKey))) &&
    (f.since === undefined || (x.timeUs !== null && x.timeUs >= since)) &&
    (f.until === undefined || (x.timeUs !== null && x.timeUs <= until));
  const findings = report.findings.filter(keepFinding);
  const instances = groupInstances(connections.filter((c) => c.requests > 0));
  const counts = { error: 0, warning: 0, info: 0 };
  for (const x of findings) counts[x.severity]++;
  // Connections and findings the caps did not keep cannot be filtered: a filtered report counts only what it lists.
  const { notListed: _notListed, ...rest } = report;
  return {
    ...rest,
    instances,
    connections,
    findings,
    counts: {
      connections: connections.length,
      requests: connections.reduce((n, c) => n + c.requests, 0),
      responses: connections.reduce((n, c) => n + c.responses, 0),
      instances: instances.length,
      findings: counts,
    },
  };
}

/** The first packet's time across the inputs. */
export function captureStartUs(report: Report): number | null {
  let start: number | null = null;
  for (const i of report.inputs) if (i.startUs !== null && (start === null || i.startUs < start)) start = i.startUs;
  return start;
}

/** What a request row offers to the filters. */
export interface RowFacts {
  clientInstanceId: string | null;
  client: string;
  broker: string;
  /** null for a response whose request was not captured (no --api matches it). */
  apiKey: number | null;
}

/**
 * A predicate for streamed request rows. The instance filter matches a full ID or a prefix of
 * either form, without the uniqueness check (rows stream before all IDs are known).
 */
export function rowPredicate(
  f: Filters,
  startUs: () => number | null,
): (r: RowFacts, connectionClientIds: readonly string[], timeUs: number) => boolean {
  // `kcid requests` asks for every row: without filters, the answer costs nothing.
  if (!hasFilters(f)) return () => true;
  const full = f.instance === undefined ? null : parseUuid(f.instance);
  const instanceMatch = (id: string | null): boolean => {
    if (f.instance === undefined) return true;
    if (id === null) return false;
    return full !== null ? id === uuidToBase64(full) : matchInstanceIds(f.instance, [id]).length === 1;
  };
  // connectionClientIds: the ClientIds of the row's connection (a KIP-1313 client sends it on the first request only).
  return (r, connectionClientIds, timeUs) =>
    instanceMatch(r.clientInstanceId) &&
    (f.clientId === undefined || connectionClientIds.includes(f.clientId)) &&
    (f.client === undefined || matchesEndpoint(f.client, r.client)) &&
    (f.broker === undefined || matchesEndpoint(f.broker, r.broker)) &&
    (f.apis === undefined || (r.apiKey !== null && f.apis.has(r.apiKey))) &&
    (f.since === undefined || timeUs >= resolveBound(f.since, startUs())) &&
    (f.until === undefined || timeUs <= resolveBound(f.until, startUs()));
}
