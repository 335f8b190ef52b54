import type { TelemetryRule } from './rule.js';
import { msBetween, TELEMETRY_ERRORS } from './telemetry-common.js';
import { tooSoon } from './telemetry-push-too-soon.js';

export const brokerAcceptedEarlyPush: TelemetryRule = {
  kind: 'telemetry',
  id: 'broker-accepted-early-push',
  severity: 'warning',
  summary: 'The broker accepted a PushTelemetry sent sooner than PushIntervalMs after the previous push, instead of THROTTLING_QUOTA_EXCEEDED (89).',
  explanation:
    'A broker enforces the push interval it handed out: a push that comes sooner than PushIntervalMs ' +
    'after the previous one is answered THROTTLING_QUOTA_EXCEEDED. A broker that answers NONE lets ' +
    'a client push as often as it likes. The first push after a subscription is exempt (a broker ' +
    'accepts it whenever it comes), and so is a Terminating push.',
  spec:
    'KIP-714, error table, THROTTLING_QUOTA_EXCEEDED: the broker\'s answer to a client that pushes before its push interval elapsed (paraphrased).',
  check(c, report) {
    for (const p of c.pushes) {
      const t = tooSoon(p);
      if (t === null || t.first || p.push.errorCode !== 0) continue;
      report({
        event: p.push,
        message: `the broker answered NONE (0) to a push ${msBetween(t.fromUs, p.push.timeUs)} ms after the previous one (PushIntervalMs ${p.subscription!.pushIntervalMs}), not THROTTLING_QUOTA_EXCEEDED (${TELEMETRY_ERRORS.THROTTLING_QUOTA_EXCEEDED})`,
      });
    }
  },
};
