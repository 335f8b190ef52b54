/** The rule registry: every rule kcid knows, in the order `kcid rules` lists them. */
import { brokerAcceptedInvalid } from './broker-accepted-invalid.js';
import { brokerAssignedInstanceId } from './broker-assigned-instance-id.js';
import { clientIdAfterFirst } from './client-id-after-first.js';
import { clientIdChanged } from './client-id-changed.js';
import { clientInstanceIdChanged } from './client-instance-id-changed.js';
import { clientInstanceIdMissing } from './client-instance-id-missing.js';
import { instanceIdMultipleClientIds } from './instance-id-multiple-client-ids.js';
import { instanceIdMultipleHosts } from './instance-id-multiple-hosts.js';
import { malformedRequestHeader } from './malformed-request-header.js';
import { memberIdMismatch } from './member-id-mismatch.js';
import { shortResponseTolerated } from './short-response-tolerated.js';
import type { ConnectionRule, ReportRule, Rule, TelemetryRule } from './rule.js';
import {
  captureGap,
  captureTruncated,
  malformedBody,
  removedApiVersion,
  streamDesync,
  tlsAlert,
  tlsKeylogUnmatched,
  tlsOnKafkaPort,
  tlsRecordAuthFailed,
  tlsRecordUnreadable,
  unknownApiKey,
} from './stream-rules.js';
import { instanceIdAfterFirst } from './instance-id-after-first.js';
import { instanceIdMissingOnFirst } from './instance-id-missing-on-first.js';
import { unknownErrorCode } from './unknown-error-code.js';
import { telemetryIdMismatch } from './telemetry-id-mismatch.js';
import { telemetryV1WithoutInstanceId } from './telemetry-v1-without-instance-id.js';
import { telemetryZeroIdWithHeader } from './telemetry-zero-id-with-header.js';
import { zeroClientInstanceId } from './zero-client-instance-id.js';
import { brokerAcceptedEarlyPush } from './broker-accepted-early-push.js';
import { telemetryCompressionNotAccepted } from './telemetry-compression-not-accepted.js';
import { telemetryErrorIgnored } from './telemetry-error-ignored.js';
import { telemetryMetricsNotRequested } from './telemetry-metrics-not-requested.js';
import { telemetryPayloadInvalid } from './telemetry-payload-invalid.js';
import { telemetryPayloadNotDecoded } from './telemetry-payload-not-decoded.js';
import { telemetryPushAfterTerminating } from './telemetry-push-after-terminating.js';
import { telemetryPushTooSoon } from './telemetry-push-too-soon.js';
import { telemetryPushWithoutSubscription } from './telemetry-push-without-subscription.js';
import { telemetrySubscriptionIdMismatch } from './telemetry-subscription-id-mismatch.js';
import { telemetryTemporalityMismatch } from './telemetry-temporality-mismatch.js';
import { telemetryTooLarge } from './telemetry-too-large.js';

export const RULES: readonly Rule[] = [
  zeroClientInstanceId,
  clientInstanceIdChanged,
  clientInstanceIdMissing,
  clientIdAfterFirst,
  instanceIdMissingOnFirst,
  instanceIdAfterFirst,
  telemetryZeroIdWithHeader,
  telemetryIdMismatch,
  telemetryV1WithoutInstanceId,
  brokerAcceptedInvalid,
  brokerAssignedInstanceId,
  memberIdMismatch,
  instanceIdMultipleHosts,
  instanceIdMultipleClientIds,
  malformedRequestHeader,
  streamDesync,
  captureGap,
  tlsOnKafkaPort,
  tlsRecordAuthFailed,
  tlsRecordUnreadable,
  tlsAlert,
  tlsKeylogUnmatched,
  unknownApiKey,
  removedApiVersion,
  unknownErrorCode,
  malformedBody,
  shortResponseTolerated,
  captureTruncated,
  clientIdChanged,
  // KIP-714's conversation, judged on the merged summary (pushes seen at several brokers together).
  telemetryPushWithoutSubscription,
  telemetrySubscriptionIdMismatch,
  telemetryPushTooSoon,
  brokerAcceptedEarlyPush,
  telemetryCompressionNotAccepted,
  telemetryTooLarge,
  telemetryMetricsNotRequested,
  telemetryTemporalityMismatch,
  telemetryErrorIgnored,
  telemetryPushAfterTerminating,
  telemetryPayloadInvalid,
  telemetryPayloadNotDecoded,
];

export const CONNECTION_RULES: readonly ConnectionRule[] = RULES.filter((r): r is ConnectionRule => r.kind === 'connection');
export const REPORT_RULES: readonly ReportRule[] = RULES.filter((r): r is ReportRule => r.kind === 'report');
export const TELEMETRY_RULES: readonly TelemetryRule[] = RULES.filter((r): r is TelemetryRule => r.kind === 'telemetry');

const BY_ID = new Map<string, Rule>(RULES.map((r) => [r.id, r]));

/**
 * What the telemetry rules, as configured, need of an analysis: 'rules' while one that reads the
 * pushes' metrics is on (they are decoded then), else 'sizes' (the conversation only, nothing decoded).
 */
export function telemetryNeeds(severities?: ReadonlyMap<string, string>): 'rules' | 'sizes' {
  return TELEMETRY_RULES.some((r) => r.readsMetrics === true && severities?.get(r.id) !== 'off') ? 'rules' : 'sizes';
}

export function ruleById(id: string): Rule | undefined {
  return BY_ID.get(id);
}

export type { Rule, ConnectionRule, ReportRule } from './rule.js';
