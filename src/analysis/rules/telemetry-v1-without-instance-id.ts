import { API, apiLabel } from '../../kafka/messages.js';
import type { ConnectionRule } from './rule.js';

export const telemetryV1WithoutInstanceId: ConnectionRule = {
  kind: 'connection',
  id: 'telemetry-v1-without-instance-id',
  severity: 'error',
  summary: 'GetTelemetrySubscriptions v1 or PushTelemetry v1 without a ClientInstanceId in the header.',
  explanation:
    'Version 1 of GetTelemetrySubscriptions and PushTelemetry (KIP-1313) removes ClientInstanceId from the ' +
    'request body: the broker takes the client telemetry ID from the request header. A v1 request without ' +
    'header tag 0 leaves the broker with no ID to attribute the subscription or the pushed metrics to.',
  spec:
    'KIP-1313: "A new version 1 of this RPC is introduced which removes ClientInstanceId from the request" ' +
    'and "The client MUST use the same UUID in request headers as it uses for the client telemetry client ' +
    'instance ID."',
  onRequest(_s, r, report) {
    const { apiKey, apiVersion, clientInstanceId } = r.header;
    if ((apiKey === API.GetTelemetrySubscriptions || apiKey === API.PushTelemetry) && apiVersion >= 1 && clientInstanceId === null) {
      report({ message: `${apiLabel(apiKey, apiVersion)} without a ClientInstanceId in its request header` });
    }
  },
};
