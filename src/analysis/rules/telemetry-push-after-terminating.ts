import type { TelemetryRule } from './rule.js';

export const telemetryPushAfterTerminating: TelemetryRule = {
  kind: 'telemetry',
  id: 'telemetry-push-after-terminating',
  severity: 'error',
  summary: 'A PushTelemetry after the same client instance sent a Terminating push.',
  explanation:
    'A client sends its last metrics with Terminating set when it closes: that push is the last one ' +
    'of the client instance (a restarted client is a new instance with a new ID). A push after it, on ' +
    'any connection or broker, means the client went on after saying it was done, or two clients ' +
    'share one instance ID.',
  spec: 'KIP-714, PushTelemetryRequest: "Terminating: Client is terminating the connection." (the final push of the client instance)',
  check(c, report) {
    let terminating: number | null = null;
    for (const p of c.pushes) {
      if (terminating !== null) {
        report({ event: p.push, message: `PushTelemetry after the Terminating push of frame ${terminating}` });
        return;
      }
      if (p.push.terminating) terminating = p.push.frame;
    }
  },
};
