/** The rule registry: every rule kcid knows, in the order `kcid rules` lists them. */
import { brokerAcceptedInvalid } from './broker-accepted-invalid.js';
import { brokerAssignedInstanceId } from './broker-assigned-instance-id.js';
import { clientIdAfterFirst } from './client-id-after-first.js';
import { clientInstanceIdChanged } from './client-instance-id-changed.js';
import { clientInstanceIdMissing } from './client-instance-id-missing.js';
import { instanceIdMultipleClientIds } from './instance-id-multiple-client-ids.js';
import { instanceIdMultipleHosts } from './instance-id-multiple-hosts.js';
import { malformedRequestHeader } from './malformed-request-header.js';
import { memberIdMismatch } from './member-id-mismatch.js';
import type { ConnectionRule, ReportRule, Rule } from './rule.js';
import {
  captureGap,
  captureTruncated,
  streamDesync,
  tlsAlert,
  tlsKeylogUnmatched,
  tlsOnKafkaPort,
  tlsRecordAuthFailed,
  tlsRecordUnreadable,
  unknownApiKey,
} from './stream-rules.js';
import { telemetryIdMismatch } from './telemetry-id-mismatch.js';
import { telemetryV1WithoutInstanceId } from './telemetry-v1-without-instance-id.js';
import { telemetryZeroIdWithHeader } from './telemetry-zero-id-with-header.js';
import { zeroClientInstanceId } from './zero-client-instance-id.js';

export const RULES: readonly Rule[] = [
  zeroClientInstanceId,
  clientInstanceIdChanged,
  clientInstanceIdMissing,
  clientIdAfterFirst,
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
  captureTruncated,
];

export const CONNECTION_RULES: readonly ConnectionRule[] = RULES.filter((r): r is ConnectionRule => r.kind === 'connection');
export const REPORT_RULES: readonly ReportRule[] = RULES.filter((r): r is ReportRule => r.kind === 'report');

const BY_ID = new Map<string, Rule>(RULES.map((r) => [r.id, r]));

export function ruleById(id: string): Rule | undefined {
  return BY_ID.get(id);
}

export type { Rule, ConnectionRule, ReportRule } from './rule.js';
