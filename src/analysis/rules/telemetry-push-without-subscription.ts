import type { TelemetryRule } from './rule.js';

export const telemetryPushWithoutSubscription: TelemetryRule = {
  kind: 'telemetry',
  id: 'telemetry-push-without-subscription',
  severity: 'error',
  summary: 'A PushTelemetry before any successful GetTelemetrySubscriptions of that client instance.',
  explanation:
    'KIP-714 clients learn what to push, how often, how big and with which codecs from ' +
    'GetTelemetrySubscriptions, and send its SubscriptionId with every push; a push without one is ' +
    'a push of metrics nobody asked for, which the broker answers UNKNOWN_SUBSCRIPTION_ID. Judged ' +
    'across every connection and broker of the captures, for pushes on a connection the capture ' +
    'saw from its start (an earlier subscription may be outside a capture that began later).',
  spec:
    'KIP-714, PushTelemetryRequest: "SubscriptionId: Unique identifier for the current subscription set for this client instance." ' +
    'Kafka error 117 UNKNOWN_SUBSCRIPTION_ID: "Client sent a push telemetry request with an invalid or outdated subscription ID."',
  check(c, report) {
    for (const p of c.pushes) {
      if (p.subscription !== null || !p.push.startSeen) continue;
      report({ event: p.push, message: `PushTelemetry (SubscriptionId ${p.push.subscriptionId}) with no successful GetTelemetrySubscriptions answered before it` });
    }
  },
};
