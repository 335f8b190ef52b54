/**
 * KIP-714 conversations: one client's telemetry requests across every connection and broker of
 * the merged summary, in time order, each push with the subscription in force when it was sent.
 *
 * A conversation is one client instance ID as used from one host with one ClientId: a client
 * instance is one process (one host, one ClientId), and two processes that share an ID (a broker
 * or mock that hands every client the same one: instance-id-multiple-hosts and
 * instance-id-multiple-client-ids say so) would otherwise look like one client pushing twice as often.
 */
import type { TelemetryEvent, TelemetryPushEvent, TelemetrySubscriptionEvent } from './types.js';

export interface PushContext {
  push: TelemetryPushEvent;
  /** The latest successful subscription (error 0) answered before this push was sent, or null. */
  subscription: TelemetrySubscriptionEvent | null;
  /** The conversation's push before this one (any answer), or null. */
  previous: TelemetryPushEvent | null;
  /** No push came between the subscription and this one. */
  firstOfSubscription: boolean;
  /** Where the push is in the conversation's events. */
  at: number;
}

export interface TelemetryConversation {
  instanceId: string | null;
  clientIp: string;
  clientId: string | null;
  /** Subscriptions and pushes by time (then input, then frame). */
  events: TelemetryEvent[];
  pushes: PushContext[];
}

export const compareEvents = (a: TelemetryEvent, b: TelemetryEvent): number => a.timeUs - b.timeUs || a.input - b.input || a.frame - b.frame;

/** Which conversation an event belongs to: its instance ID, host and ClientId. */
export const conversationKey = (e: TelemetryEvent): string => `${e.instanceId ?? ''}\u0000${e.clientIp}\u0000${e.clientId ?? ''}`;

/** The conversation of `events` (one key's, sorted by {@link compareEvents}). */
export function conversationOf(events: TelemetryEvent[]): TelemetryConversation {
  const e = events[0]!;
  return { instanceId: e.instanceId, clientIp: e.clientIp, clientId: e.clientId, events, pushes: contexts(events) };
}

/** Conversations in order of their first event. */
export function telemetryConversations(events: readonly TelemetryEvent[]): TelemetryConversation[] {
  const byKey = new Map<string, TelemetryConversation>();
  for (const e of [...events].sort(compareEvents)) {
    const key = conversationKey(e);
    let c = byKey.get(key);
    if (c === undefined) byKey.set(key, (c = { instanceId: e.instanceId, clientIp: e.clientIp, clientId: e.clientId, events: [], pushes: [] }));
    c.events.push(e);
  }
  const out = [...byKey.values()];
  for (const c of out) c.pushes = contexts(c.events);
  return out;
}

function contexts(events: readonly TelemetryEvent[]): PushContext[] {
  const out: PushContext[] = [];
  let subscription: TelemetrySubscriptionEvent | null = null;
  let previous: TelemetryPushEvent | null = null;
  let sincePush = true;
  // Subscriptions take effect when their answer arrives; pushes are judged at the time they were sent.
  const answered: TelemetrySubscriptionEvent[] = events
    .filter((e): e is TelemetrySubscriptionEvent => e.kind === 'subscription' && e.errorCode === 0 && e.responseUs !== null)
    .sort((a, b) => a.responseUs! - b.responseUs! || a.input - b.input || a.frame - b.frame);
  let next = 0;
  for (let at = 0; at < events.length; at++) {
    const e = events[at]!;
    if (e.kind !== 'push') continue;
    while (next < answered.length && answered[next]!.responseUs! <= e.timeUs) {
      subscription = answered[next++]!;
      sincePush = true;
    }
    out.push({ push: e, subscription, previous, firstOfSubscription: sincePush, at });
    previous = e;
    sincePush = false;
  }
  return out;
}

/** The events the conversation has after push `p`. */
export function eventsAfter(c: TelemetryConversation, p: PushContext): readonly TelemetryEvent[] {
  return c.events.slice(p.at + 1);
}
