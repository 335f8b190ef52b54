import type { PushContext } from '../telemetry-conversations.js';
import type { TelemetryRule } from './rule.js';
import { answer, msBetween, TELEMETRY_ERRORS } from './telemetry-common.js';

/** KIP-714 lets the first push after a subscription come early by up to half the interval (its jitter). */
export const FIRST_PUSH_JITTER = 0.5;

/**
 * When a push is sooner than its subscription allows: the time since the previous push (or since
 * the subscription's answer, for the first push), and what was allowed, in µs; null when it is not.
 * A Terminating push is never too soon, and neither is the push after an error answer (the error
 * ladder judges that one: telemetry-error-ignored).
 */
export function tooSoon(p: PushContext): { elapsedUs: number; allowedUs: number; fromUs: number; first: boolean } | null {
  const sub = p.subscription;
  if (sub === null || p.push.terminating || sub.pushIntervalMs <= 0) return null;
  const intervalUs = sub.pushIntervalMs * 1000;
  if (p.firstOfSubscription || p.previous === null) {
    const fromUs = sub.responseUs!;
    const allowedUs = intervalUs * FIRST_PUSH_JITTER;
    const elapsedUs = p.push.timeUs - fromUs;
    return elapsedUs < allowedUs ? { elapsedUs, allowedUs, fromUs, first: true } : null;
  }
  const e = p.previous.errorCode;
  if (e === TELEMETRY_ERRORS.THROTTLING_QUOTA_EXCEEDED || e === TELEMETRY_ERRORS.TELEMETRY_TOO_LARGE) return null;
  const fromUs = p.previous.timeUs;
  const elapsedUs = p.push.timeUs - fromUs;
  return elapsedUs < intervalUs ? { elapsedUs, allowedUs: intervalUs, fromUs, first: false } : null;
}

export const telemetryPushTooSoon: TelemetryRule = {
  kind: 'telemetry',
  id: 'telemetry-push-too-soon',
  severity: 'warning',
  summary: "A PushTelemetry sooner than the subscription's PushIntervalMs after the previous push.",
  explanation:
    'The subscription tells the client how often to push (PushIntervalMs); the broker throttles a ' +
    'client that pushes more often, answering THROTTLING_QUOTA_EXCEEDED. The first push after a ' +
    'subscription may come early, by a random jitter KIP-714 asks for so that clients do not push in ' +
    'step: kcid allows it from half the interval after the subscription was answered. A Terminating ' +
    'push, sent when the client closes, may come at any time. A push after a THROTTLING_QUOTA_EXCEEDED or ' +
    'TELEMETRY_TOO_LARGE answer is not judged here: KIP-714 asks the client to wait the push interval ' +
    'after those errors, so a sooner push is an error ignored, reported once as telemetry-error-ignored ' +
    '(an error, not a second warning for the same push). Times are the capture\'s, not the broker\'s.',
  spec:
    'KIP-714, GetTelemetrySubscriptionsResponse: "PushIntervalMs: Configured push interval, which is the lowest configured interval in the current subscription set." ' +
    'Error table, THROTTLING_QUOTA_EXCEEDED: the client pushed too soon (paraphrased).',
  check(c, report) {
    for (const p of c.pushes) {
      const t = tooSoon(p);
      if (t === null) continue;
      const since = t.first ? `the subscription was answered (frame ${p.subscription!.responseFrame})` : `the previous push (frame ${p.previous!.frame})`;
      report({
        event: p.push,
        message: `PushTelemetry ${msBetween(t.fromUs, p.push.timeUs)} ms after ${since}; PushIntervalMs is ${p.subscription!.pushIntervalMs}${t.first ? ' (the first push may come from half of it)' : ''}; ${answer(p.push)}`,
      });
    }
  },
};
