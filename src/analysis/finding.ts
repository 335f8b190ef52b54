/**
 * The one constructor of a {@link Finding}: a rule of the registry (its id and severity are read
 * from the rule, never typed again) and where the finding points. Connection rules, the stream
 * layers' notes, the report rules and the capture reader's truncation note all make theirs here.
 */
import type { RuleMeta } from './rules/rule.js';
import type { Finding } from './types.js';

/** Where a finding points (every field of a Finding but what its rule and message say); what is not known is null. */
export type FindingAt = Omit<Finding, 'rule' | 'severity' | 'message'>;

export function makeFinding(rule: RuleMeta, message: string, at: FindingAt): Finding {
  return {
    rule: rule.id,
    severity: rule.severity,
    message,
    frame: at.frame,
    timeUs: at.timeUs,
    client: at.client,
    broker: at.broker,
    apiKey: at.apiKey,
    apiVersion: at.apiVersion,
    correlationId: at.correlationId,
    clientInstanceId: at.clientInstanceId,
    input: at.input,
  };
}
