import type { TelemetryRule } from './rule.js';
import { answer } from './telemetry-common.js';

export const telemetrySubscriptionIdMismatch: TelemetryRule = {
  kind: 'telemetry',
  id: 'telemetry-subscription-id-mismatch',
  severity: 'error',
  summary: "A PushTelemetry whose SubscriptionId is not the latest one the broker handed that client instance.",
  explanation:
    'Every GetTelemetrySubscriptions answer carries the SubscriptionId of the subscription set in ' +
    'force; the client sends it back on each push, so the broker knows the metrics match what it ' +
    'asks for. A stale or invented ID is answered UNKNOWN_SUBSCRIPTION_ID, after which the client ' +
    'must fetch its subscription again. Judged against the latest successful answer before the push, ' +
    'on any connection or broker.',
  spec:
    'KIP-714, PushTelemetryRequest: "SubscriptionId: Unique identifier for the current subscription set for this client instance." ' +
    'Kafka error 117 UNKNOWN_SUBSCRIPTION_ID: "Client sent a push telemetry request with an invalid or outdated subscription ID."',
  check(c, report) {
    for (const p of c.pushes) {
      const sub = p.subscription;
      if (sub === null || p.push.subscriptionId === sub.subscriptionId) continue;
      report({
        event: p.push,
        message: `PushTelemetry with SubscriptionId ${p.push.subscriptionId}, but the latest subscription (frame ${sub.responseFrame}) is ${sub.subscriptionId}; ${answer(p.push)}`,
      });
    }
  },
};
