import type { TelemetryRule } from './rule.js';
import { answer } from './telemetry-common.js';

export const telemetryTooLarge: TelemetryRule = {
  kind: 'telemetry',
  id: 'telemetry-too-large',
  severity: 'error',
  summary: "A PushTelemetry whose Metrics blob is larger than the subscription's TelemetryMaxBytes.",
  explanation:
    'The subscription caps the size of the metrics a client may push (TelemetryMaxBytes, the blob as ' +
    'sent, compressed); a larger push is answered TELEMETRY_TOO_LARGE, after which the client must ' +
    'send less (fewer metrics, or a better codec).',
  spec:
    'KIP-714, GetTelemetrySubscriptionsResponse: "TelemetryMaxBytes: The maximum bytes of binary data the broker accepts in PushTelemetryRequest." ' +
    'Kafka error 118 TELEMETRY_TOO_LARGE: "Client sent a push telemetry request larger than the maximum size the broker will accept."',
  check(c, report) {
    for (const p of c.pushes) {
      const sub = p.subscription;
      const n = p.push.metricsBytes;
      if (sub === null || n === null || n <= sub.telemetryMaxBytes) continue;
      report({ event: p.push, message: `Metrics of ${n} bytes exceed the subscription's TelemetryMaxBytes of ${sub.telemetryMaxBytes} (frame ${sub.responseFrame}); ${answer(p.push)}` });
    }
  },
};
