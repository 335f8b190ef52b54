/**
 * Follow mode's checks across connections, run as the evidence comes rather than at the end of input.
 *
 * The cross-connection rules judge a mergeable summary (report.ts). Follow mode keeps a small live copy
 * of the part they read and judges it each time it grows: the report rules (instance-id-multiple-hosts,
 * instance-id-multiple-client-ids) when a connection first shows its header ID (its host and ClientId
 * are known from its first request), the telemetry rules when a telemetry request is complete (answered,
 * and its metrics decoded). A finding is printed the first time the live copy shows it; the report at
 * the end judges the whole summary again and {@link LiveChecks.shown} tells which of its findings were
 * printed already, so none is printed or counted twice.
 *
 * Bounded: per instance ID the report rules run again only when a new host or ClientId appears (at most
 * MAX_DISTINCT_VALUES of each); a conversation is judged live for its first MAX_LIVE_EVENTS events, after
 * which its further findings wait for the end of input.
 */
import type { ConnState } from './connection-state.js';
import { instanceFinding, telemetryFinding } from './cross-findings.js';
import { MAX_DISTINCT_VALUES } from './distinct.js';
import { groupInstances } from './instances.js';
import type { FindingSink } from './observer.js';
import { REPORT_RULES, TELEMETRY_RULES } from './rules/index.js';
import { Interner, summarize } from './summary.js';
import { compareEvents, conversationKey, conversationOf } from './telemetry-conversations.js';
import type { ConnectionSummary, Finding, TelemetryEvent } from './types.js';

/** Events of one conversation judged live; later ones are judged at the end of input. */
export const MAX_LIVE_EVENTS = 2_000;
/** Instance IDs and conversations followed live at most (a hostile capture may make every one distinct). */
export const MAX_LIVE_KEYS = 100_000;

interface Owner {
  connections: ConnectionSummary[];
  hosts: string[];
  clientIds: string[];
}

export class LiveChecks {
  private readonly printed = new Set<string>();
  private readonly owners = new Map<string, Owner>();
  private readonly conversations = new Map<string, TelemetryEvent[]>();
  private readonly shared = new Interner();

  constructor(private readonly onFinding: FindingSink) {}

  /** A connection showed its header ID (`s.connectionId` was just set). */
  connection(s: ConnState): void {
    const id = s.lastHeaderIdText;
    if (id === null) return;
    let owner = this.owners.get(id);
    if (owner === undefined) {
      if (this.owners.size >= MAX_LIVE_KEYS) return;
      this.owners.set(id, (owner = { connections: [], hosts: [], clientIds: [] }));
    }
    const host = s.conn.client.ip;
    const clientId = s.clientIds[0];
    // Only a connection with a host or ClientId new to its ID can change what the rules see.
    let grew = false;
    if (!owner.hosts.includes(host) && owner.hosts.length < MAX_DISTINCT_VALUES) grew = owner.hosts.push(host) > 0;
    if (clientId !== undefined && !owner.clientIds.includes(clientId) && owner.clientIds.length < MAX_DISTINCT_VALUES) grew = owner.clientIds.push(clientId) > 0;
    if (!grew) return;
    owner.connections.push(summarize(s, this.shared));
    for (const instance of groupInstances(owner.connections)) {
      for (const rule of REPORT_RULES) rule.check(instance, (hit) => this.print(instanceFinding(rule, instance, hit)));
    }
  }

  /** A telemetry request is complete: answered (or never to be), its metrics decoded when they are. */
  telemetry(e: TelemetryEvent): void {
    const key = conversationKey(e);
    let events = this.conversations.get(key);
    if (events === undefined) {
      if (this.conversations.size >= MAX_LIVE_KEYS) return;
      this.conversations.set(key, (events = []));
    }
    if (events.length >= MAX_LIVE_EVENTS) return;
    // Events complete in the order of their answers: each goes to its place by time.
    let at = events.length;
    while (at > 0 && compareEvents(events[at - 1]!, e) > 0) at--;
    events.splice(at, 0, e);
    const c = conversationOf(events);
    for (const rule of TELEMETRY_RULES) rule.check(c, (hit) => this.print(telemetryFinding(rule, hit)));
  }

  /** Was this finding of the final report printed already? */
  shown(f: Finding): boolean {
    return this.printed.has(keyOf(f));
  }

  private print(f: Finding): void {
    const key = keyOf(f);
    if (this.printed.has(key)) return;
    this.printed.add(key);
    this.onFinding(f);
  }
}

/**
 * What makes a cross-connection finding the same one as its evidence grows: a report rule's is about
 * an instance (its message counts hosts or ClientIds and may grow), a telemetry rule's about one request.
 */
function keyOf(f: Finding): string {
  return f.apiKey === null ? `${f.rule}\u0000${f.clientInstanceId ?? ''}` : `${f.rule}\u0000${f.input}\u0000${f.frame ?? ''}`;
}
