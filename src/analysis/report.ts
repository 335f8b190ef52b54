/**
 * From the merged summary of one or more captures to the report every format renders: instances
 * grouped, cross-connection rules run, severities applied, findings in a stable order.
 */
import { groupInstances, type InstanceModel } from './instances.js';
import { REPORT_RULES, ruleById, TELEMETRY_RULES } from './rules/index.js';
import { telemetryConversations, type TelemetryConversation } from './telemetry-conversations.js';
import { instanceFinding, telemetryFinding } from './cross-findings.js';
import { SEVERITIES, type CaptureSummary, type ConnectionSummary, type Finding, type Severity } from './types.js';


/** A rule's severity as configured: one of the three, or 'off' to drop its findings. */
export type SeveritySetting = Severity | 'off';

export interface ReportOptions {
  /** rule id → severity, overriding the defaults. */
  severities?: ReadonlyMap<string, SeveritySetting>;
}

export interface Report {
  inputs: CaptureSummary['inputs'];
  instances: InstanceModel[];
  connections: ConnectionSummary[];
  findings: Finding[];
  /** KIP-714 conversations (one per client instance, host and ClientId), empty without telemetry. */
  telemetry: TelemetryConversation[];
  counts: {
    connections: number;
    requests: number;
    responses: number;
    instances: number;
    findings: Record<Severity, number>;
  };
  /** Findings left out because a baseline recorded them (set by applyBaseline, absent without a baseline). */
  suppressed?: number;
  /**
   * Connections and findings the listing caps counted but did not keep (--max-connection-summaries,
   * --max-findings): included in `counts`, absent from the lists. Absent when nothing was left out.
   */
  notListed?: { connections: number; findings: number };
  /** The config file the rule settings came from (kcid.config.json or --config), as named; absent when none was read. */
  config?: string;
}

export function buildReport(summary: CaptureSummary, opts: ReportOptions = {}): Report {
  // Each input's connections come sorted and inputs in order: sort only what is not (a merged file, a test).
  const connections = [...summary.connections];
  if (!isSorted(connections, compareConnections)) connections.sort(compareConnections);
  // A connection that never sent a request (only bytes kcid could not frame) says nothing about who
  // the client is: it is listed as a connection but belongs to no instance. A TLS connection kcid
  // cannot decrypt is still a client: it is grouped under its address.
  const instances = groupInstances(connections.filter((c) => c.requests > 0 || c.tls !== undefined));
  const findings: Finding[] = [...summary.findings];
  for (const instance of instances) {
    for (const rule of REPORT_RULES) rule.check(instance, (hit) => findings.push(instanceFinding(rule, instance, hit)));
  }
  const telemetry = telemetryConversations(summary.telemetry ?? []);
  for (const c of telemetry) {
    for (const rule of TELEMETRY_RULES) rule.check(c, (hit) => findings.push(telemetryFinding(rule, hit)));
  }
  const applied = applySeverities(findings, opts.severities);
  applied.sort(compareFindings);
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of applied) counts[f.severity]++;
  let requests = 0;
  let responses = 0;
  for (const c of connections) {
    requests += c.requests;
    responses += c.responses;
  }
  // What the caps left out still counts: totals and the --fail-on threshold see every finding.
  const notListed = { connections: 0, findings: 0 };
  for (const input of summary.inputs) {
    const n = input.notListed;
    if (n === undefined) continue;
    notListed.connections += n.connections;
    requests += n.requests;
    responses += n.responses;
    for (const [rule, count] of n.findings) {
      const setting = opts.severities?.get(rule) ?? ruleById(rule)?.severity ?? 'info';
      if (setting === 'off') continue;
      counts[setting] += count;
      notListed.findings += count;
    }
  }
  return {
    inputs: summary.inputs,
    instances,
    connections,
    findings: applied,
    telemetry,
    counts: {
      connections: connections.length + notListed.connections,
      requests,
      responses,
      instances: instances.length,
      findings: counts,
    },
    ...(notListed.connections > 0 || notListed.findings > 0 ? { notListed } : {}),
  };
}

export function applySeverities(findings: readonly Finding[], severities?: ReadonlyMap<string, SeveritySetting>): Finding[] {
  if (severities === undefined || severities.size === 0) return [...findings];
  const out: Finding[] = [];
  for (const f of findings) {
    const s = severities.get(f.rule);
    if (s === 'off') continue;
    out.push(s === undefined ? f : { ...f, severity: s });
  }
  return out;
}

/** Input, then frame (findings about a whole input first), then rule id, then message. */
export function compareFindings(a: Finding, b: Finding): number {
  return (
    a.input - b.input ||
    (a.frame ?? 0) - (b.frame ?? 0) ||
    (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0) ||
    (a.message < b.message ? -1 : a.message > b.message ? 1 : 0)
  );
}

/** Input, then first frame, then connection number. */
export function compareConnections(a: ConnectionSummary, b: ConnectionSummary): number {
  return a.input - b.input || a.firstFrame - b.firstFrame || a.id - b.id;
}

function isSorted<T>(list: readonly T[], compare: (a: T, b: T) => number): boolean {
  for (let i = 1; i < list.length; i++) if (compare(list[i - 1]!, list[i]!) > 0) return false;
  return true;
}

export const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

/** Exit code 1 when a finding (listed or only counted) reaches the --fail-on threshold. */
export function reachesThreshold(report: Report, failOn: Severity | 'none'): boolean {
  if (failOn === 'none') return false;
  const c = report.counts.findings;
  return SEVERITIES.some((s) => c[s] > 0 && SEVERITY_RANK[s] >= SEVERITY_RANK[failOn]);
}
