/**
 * The finding a cross-connection rule's hit makes: one place, so the report (report.ts) and follow
 * mode's live checks (live-checks.ts) make the same finding of the same evidence.
 */
import { API_KEY } from '../kafka/protocol.js';
import { makeFinding } from './finding.js';
import type { InstanceModel } from './instances.js';
import type { InstanceHit, ReportRule, TelemetryHit, TelemetryRule } from './rules/rule.js';
import type { Finding } from './types.js';

/** A report rule's finding about an instance, anchored at the connection that shows the problem. */
export function instanceFinding(rule: ReportRule, instance: InstanceModel, hit: InstanceHit): Finding {
  const c = instance.connections[hit.connection]!;
  return makeFinding(rule, hit.message, {
    frame: c.firstRequestFrame ?? c.firstFrame,
    timeUs: c.firstRequestUs ?? c.firstUs,
    client: c.client,
    broker: c.broker,
    apiKey: null,
    apiVersion: null,
    correlationId: null,
    clientInstanceId: instance.clientInstanceId,
    input: c.input,
  });
}

/** A telemetry rule's finding about one telemetry request. */
export function telemetryFinding(rule: TelemetryRule, hit: TelemetryHit): Finding {
  const e = hit.event;
  return {
    rule: rule.id,
    severity: rule.severity,
    message: hit.message,
    frame: e.frame,
    timeUs: e.timeUs,
    client: e.client,
    broker: e.broker,
    apiKey: e.kind === 'push' ? API_KEY.PushTelemetry : API_KEY.GetTelemetrySubscriptions,
    apiVersion: e.apiVersion,
    correlationId: e.correlationId,
    clientInstanceId: e.instanceId,
    input: e.input,
  };
}
