import { API_KEY } from '../../kafka/protocol.js';
import { uuid } from '../../kafka/fields.js';
import { isZeroUuid, uuidToBase64 } from '../../kafka/uuid.js';
import type { ConnectionRule } from './rule.js';

export const brokerAssignedInstanceId: ConnectionRule = {
  kind: 'connection',
  id: 'broker-assigned-instance-id',
  severity: 'error',
  revision: 'both',
  summary: 'A GetTelemetrySubscriptions v0 response assigns a non-zero ClientInstanceId although the request header carried one.',
  explanation:
    'In KIP-714 the broker generates the client instance ID in its first GetTelemetrySubscriptions response. ' +
    'Under KIP-1313 the client owns the ID and sends it in every request header; a broker that still assigns ' +
    'a new ID to such a client gives it a second identity for telemetry, which KIP-1313 forbids. When the ' +
    'header carries an ID, the response ClientInstanceId must be zero (or the request rejected).',
  spec:
    'KIP-1313: "After this KIP, the client generates the client instance ID and does not ask the broker to do ' +
    'so", and "It is not permitted to use one client instance ID for request headers and a different client ' +
    'instance ID for telemetry."',
  onResponse(_s, r, report) {
    const q = r.request;
    // The response versions whose body has a ClientInstanceId (v0; KIP-1313's v1 has none).
    if (q === null || q.header.apiKey !== API_KEY.GetTelemetrySubscriptions || q.header.clientInstanceId === null) return;
    const assigned = uuid(r.body, 'ClientInstanceId');
    if (assigned != null && !isZeroUuid(assigned)) {
      report({ message: `broker assigned ClientInstanceId ${uuidToBase64(assigned)} although the request header carried ${uuidToBase64(q.header.clientInstanceId)}` });
    }
  },
};
