import { API_KEY, carriesInstanceIdOnFirstRequestOnly, protocol } from '../../kafka/protocol.js';
import { requestOwner } from '../owner.js';
import type { ConnectionRule } from './rule.js';

export const telemetryV1WithoutInstanceId: ConnectionRule = {
  kind: 'connection',
  id: 'telemetry-v1-without-instance-id',
  severity: 'error',
  revision: 'both',
  summary: 'GetTelemetrySubscriptions v1 or PushTelemetry v1 without a ClientInstanceId in the header.',
  explanation:
    'Version 1 of GetTelemetrySubscriptions and PushTelemetry (KIP-1313) removes ClientInstanceId from the ' +
    'request body: the broker takes the client telemetry ID from the request header. A v1 request without ' +
    'header tag 0 leaves the broker with no ID to attribute the subscription or the pushed metrics to.',
  spec:
    'KIP-1313: "A new version 1 of this RPC is introduced which removes ClientInstanceId from the request" ' +
    'and "The client MUST use the same UUID in request headers as it uses for the client telemetry client ' +
    'instance ID."',
  onRequest(s, r, report) {
    const { apiKey, apiVersion, clientInstanceId, headerVersion } = r.header;
    if (apiKey !== API_KEY.GetTelemetrySubscriptions && apiKey !== API_KEY.PushTelemetry) return;
    const p = protocol();
    // The versions KIP-1313 made (v1): their request body has no ClientInstanceId of its own.
    if (!p.isDefined(apiKey, apiVersion) || p.bodyHasField('request', apiKey, apiVersion, 'ClientInstanceId')) return;
    // With request header v3 only the connection's first request carries the ID: a later one has the connection's.
    const id = carriesInstanceIdOnFirstRequestOnly(headerVersion) ? requestOwner(clientInstanceId, s.connectionId) : clientInstanceId;
    if (id === null) report({ message: `${p.label(apiKey, apiVersion)} without a ClientInstanceId in its request header` });
  },
};
