/**
 * KIP-1313 (client instance ID in the request header) in Kafka's own schema form. Kafka's schemas do not
 * carry it yet (neither the 2024 nor the August 2026 trunk), so kcid writes it here from the proposal
 * (../shared/spec/: the voting revision, and the accepted one as a rendered diff whose later wording wins):
 *
 * - RequestHeader v2 gains tagged field 0, ClientInstanceId (uuid), exactly as the voting revision's
 *   RequestHeader.json writes it ("Tag 0 introduces client instance ID (KIP-1313)").
 * - RequestHeader v3 is the accepted revision's header. The KIP's text: "If a connection uses the v3
 *   request header in its first request, it must specify the client instance ID and then omit the client
 *   instance ID from all subsequent requests on that connection", and ClientId is sent on a connection's
 *   first request only. Kafka has not published v3's bytes; kcid's reading (issue 12): flexible like v2,
 *   ClientId with the int16 length prefix and nullable as in v1 and v2 (so later requests send null), and
 *   ClientInstanceId as tagged field 0. On the wire v3 is then byte-for-byte a v2 header; what differs is
 *   what the version promises, which the rules judge.
 * - GetTelemetrySubscriptions v1 and PushTelemetry v1: "A new version 1 of this RPC is introduced which
 *   removes ClientInstanceId from the request and the response" (GetTelemetrySubscriptions), and "... with
 *   removes ClientInstanceId from the request" (PushTelemetry, whose response never had one). So the
 *   GetTelemetrySubscriptions v1 response has no ClientInstanceId either; PushTelemetry's response gains a
 *   v1 with unchanged fields. The accepted revision's diff changes v0's behaviour only, not these layouts.
 *
 * Which header version a request uses: Kafka decides it per body version (its later trunk writes a
 * `headerVersions` map into every request schema, e.g. {"0-1": "1", "2+": "2"}); kcid reads that map when a
 * schema has it (registry.ts, requestHeaderVersion). Neither the KIP nor a published schema says which body
 * versions select header v3, so the built-in schemas map none to it: a request of the built-in versions is
 * judged by header v2's promise (the voting revision, kcid's default). v3 is selected by data: schemas from
 * --kafka-specs whose `headerVersions` map body versions to "3", or {@link ACCEPTED_REVISION} below, which
 * maps every flexible request version to header v3 (for a capture known to come from clients of the accepted
 * revision). No code compares header version numbers to decide it.
 *
 * How the overlay applies (registry.ts): each message below replaces the loaded one of the same name,
 * unless the loaded one already defines the overlay's highest version (a RequestHeader.json from
 * --kafka-specs that defines v3, a GetTelemetrySubscriptionsRequest.json with v1): Kafka's own wins.
 */
import type { RawMessage } from './raw.js';

export const OVERLAY_SOURCE = 'KIP-1313 overlay (src/kafka/schema/overlay.ts)';

export const KIP1313_OVERLAY: readonly RawMessage[] = [
  {
    type: 'header',
    name: 'RequestHeader',
    validVersions: '1-3',
    flexibleVersions: '2+',
    fields: [
      { name: 'RequestApiKey', type: 'int16', versions: '0+' },
      { name: 'RequestApiVersion', type: 'int16', versions: '0+' },
      { name: 'CorrelationId', type: 'int32', versions: '0+' },
      // Old-style two-byte length prefix in every version, so that any broker can read an ApiVersions header.
      { name: 'ClientId', type: 'string', versions: '1+', nullableVersions: '1+', flexibleVersions: 'none' },
      { name: 'ClientInstanceId', type: 'uuid', versions: '2+', taggedVersions: '2+', tag: 0, ignorable: true },
    ],
  },
  {
    apiKey: 71,
    type: 'request',
    listeners: ['broker'],
    name: 'GetTelemetrySubscriptionsRequest',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [{ name: 'ClientInstanceId', type: 'uuid', versions: '0' }],
  },
  {
    apiKey: 71,
    type: 'response',
    name: 'GetTelemetrySubscriptionsResponse',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
      { name: 'ErrorCode', type: 'int16', versions: '0+' },
      { name: 'ClientInstanceId', type: 'uuid', versions: '0' },
      { name: 'SubscriptionId', type: 'int32', versions: '0+' },
      { name: 'AcceptedCompressionTypes', type: '[]int8', versions: '0+' },
      { name: 'PushIntervalMs', type: 'int32', versions: '0+' },
      { name: 'TelemetryMaxBytes', type: 'int32', versions: '0+' },
      { name: 'DeltaTemporality', type: 'bool', versions: '0+' },
      { name: 'RequestedMetrics', type: '[]string', versions: '0+' },
    ],
  },
  {
    apiKey: 72,
    type: 'request',
    listeners: ['broker'],
    name: 'PushTelemetryRequest',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      { name: 'ClientInstanceId', type: 'uuid', versions: '0' },
      { name: 'SubscriptionId', type: 'int32', versions: '0+' },
      { name: 'Terminating', type: 'bool', versions: '0+' },
      { name: 'CompressionType', type: 'int8', versions: '0+' },
      { name: 'Metrics', type: 'bytes', versions: '0+', zeroCopy: true },
    ],
  },
  {
    apiKey: 72,
    type: 'response',
    name: 'PushTelemetryResponse',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
      { name: 'ErrorCode', type: 'int16', versions: '0+' },
    ],
  },
];

/**
 * The accepted revision's header selection as data, for {@link withHeaderVersions} in registry.ts: every
 * request version that would use header v2 uses header v3 instead (v0/v1 headers are unchanged).
 */
export const ACCEPTED_REVISION: ReadonlyMap<number, number> = new Map([[2, 3]]);

/**
 * What each request header version that carries ClientInstanceId promises about it, by the revision
 * that defined the version: v2 (the voting revision) "so it is present on all RPCs which use the v2
 * request header": on every request; v3 (the accepted revision) "must specify the client instance ID
 * and then omit the client instance ID from all subsequent requests on that connection": on the
 * connection's first request only. The rules judge a request by its header version's promise.
 */
export const INSTANCE_ID_PROMISE: ReadonlyMap<number, 'every-request' | 'first-request-only'> = new Map([
  [2, 'every-request'],
  [3, 'first-request-only'],
]);
