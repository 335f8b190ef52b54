import type { TelemetryRule } from './rule.js';

/** Does the subscription ask for `name`? Prefix match; an empty list asks for nothing, [""] for everything. */
export function requested(name: string, prefixes: readonly string[]): boolean {
  for (const p of prefixes) if (name.startsWith(p)) return true;
  return false;
}

/** Names listed in a message. */
const SHOWN = 3;

export const telemetryMetricsNotRequested: TelemetryRule = {
  kind: 'telemetry',
  readsMetrics: true,
  id: 'telemetry-metrics-not-requested',
  severity: 'warning',
  summary: "A PushTelemetry carries metrics that match none of the subscription's RequestedMetrics prefixes.",
  explanation:
    'The subscription names the metrics the broker wants as name prefixes; the client pushes only ' +
    'metrics whose name starts with one of them. An empty list subscribes to nothing (the client ' +
    'pushes no metrics), a list holding one empty string to everything. ' +
    'It reads the metrics inside the pushes: kcid decodes them while a rule that does, such as this one, is on.',
  spec:
    'KIP-714, GetTelemetrySubscriptionsResponse: "RequestedMetrics: Requested telemetry metrics prefix string match. ' +
    'Empty array: No metrics subscribed. Array[0] empty string: All metrics subscribed."',
  check(c, report) {
    for (const p of c.pushes) {
      const sub = p.subscription;
      const payload = p.push.payload;
      if (sub === null || payload === null) continue;
      const extra = payload.metrics.filter((m) => !requested(m.name, sub.requestedMetrics));
      if (extra.length === 0) continue;
      const names = [...new Set(extra.map((m) => m.name))];
      const shown = names.slice(0, SHOWN).map((n) => JSON.stringify(n)).join(', ') + (names.length > SHOWN ? `, and ${names.length - SHOWN} more` : '');
      const asked = sub.requestedMetrics.length === 0 ? 'no metrics' : sub.requestedMetrics.map((m) => JSON.stringify(m)).join(', ');
      report({ event: p.push, message: `${extra.length} of ${payload.metricCount} metrics pushed match no requested prefix (the subscription of frame ${sub.responseFrame} asks for ${asked}): ${shown}` });
    }
  },
};
