import { eventsAfter } from '../telemetry-conversations.js';
import type { TelemetryRule } from './rule.js';
import { errorLabel, msBetween, TELEMETRY_ERRORS as E } from './telemetry-common.js';

export const telemetryErrorIgnored: TelemetryRule = {
  kind: 'telemetry',
  id: 'telemetry-error-ignored',
  severity: 'error',
  summary: "After a PushTelemetry error, the client's next telemetry request does not do what KIP-714's error table asks.",
  explanation:
    'KIP-714 tells the client what to do after each PushTelemetry error. UNKNOWN_SUBSCRIPTION_ID and ' +
    'UNSUPPORTED_COMPRESSION_TYPE: send GetTelemetrySubscriptions at once for a fresh subscription ' +
    '(kcid flags a push sent before it). THROTTLING_QUOTA_EXCEEDED and TELEMETRY_TOO_LARGE: wait ' +
    'the push interval before pushing again (kcid flags a sooner push without a new subscription in ' +
    'between). INVALID_REQUEST and INVALID_RECORD: the client\'s metrics are broken and retrying will ' +
    'not help, so it stops pushing (kcid flags any later push of that instance). Checked across every ' +
    'connection and broker of the captures.',
  spec:
    'KIP-714, error table (paraphrased): UNKNOWN_SUBSCRIPTION_ID and UNSUPPORTED_COMPRESSION_TYPE: "immediately send GetTelemetrySubscriptionsRequest"; ' +
    'THROTTLING_QUOTA_EXCEEDED and TELEMETRY_TOO_LARGE: retry after the push interval; INVALID_REQUEST and INVALID_RECORD: log an error and stop pushing metrics.',
  check(c, report) {
    for (const p of c.pushes) {
      const code = p.push.errorCode;
      if (code === null || code === 0) continue;
      const after = eventsAfter(c, p);
      const why = `after ${errorLabel(code)} to the push of frame ${p.push.frame}`;
      if (code === E.UNKNOWN_SUBSCRIPTION_ID || code === E.UNSUPPORTED_COMPRESSION_TYPE) {
        const next = after[0];
        if (next !== undefined && next.kind === 'push') {
          report({ event: next, message: `PushTelemetry ${why}, without the GetTelemetrySubscriptions KIP-714 asks for first` });
        }
      } else if (code === E.THROTTLING_QUOTA_EXCEEDED || code === E.TELEMETRY_TOO_LARGE) {
        const next = after[0];
        const interval = p.subscription?.pushIntervalMs;
        if (next === undefined || next.kind !== 'push' || next.terminating || interval === undefined) continue;
        if (next.timeUs - p.push.timeUs < interval * 1000) {
          report({ event: next, message: `PushTelemetry ${msBetween(p.push.timeUs, next.timeUs)} ms ${why}; KIP-714 asks to wait PushIntervalMs (${interval})` });
        }
      } else if (code === E.INVALID_REQUEST || code === E.INVALID_RECORD) {
        const later = after.find((e) => e.kind === 'push');
        if (later !== undefined) report({ event: later, message: `PushTelemetry ${why}; KIP-714 asks the client to stop pushing metrics` });
      }
    }
  },
};
