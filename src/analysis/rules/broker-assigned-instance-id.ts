import { API } from '../../kafka/messages.js';
import { isZeroUuid, uuidToBase64 } from '../../kafka/uuid.js';
import type { ConnectionRule } from './rule.js';

export const brokerAssignedInstanceId: ConnectionRule = {
  kind: 'connection',
  id: 'broker-assigned-instance-id',
  severity: 'error',
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
    const b = r.body;
    if (q === null || q.header.apiKey !== API.GetTelemetrySubscriptions || q.header.apiVersion !== 0) return;
    if (q.header.clientInstanceId === null || b === null || b.kind !== 'GetTelemetrySubscriptions') return;
    const assigned = b.clientInstanceId;
    if (assigned !== null && !isZeroUuid(assigned)) {
      report({ message: `broker assigned ClientInstanceId ${uuidToBase64(assigned)} although the request header carried ${uuidToBase64(q.header.clientInstanceId)}` });
    }
  },
};
