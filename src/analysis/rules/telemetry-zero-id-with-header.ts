import { API_KEY } from '../../kafka/protocol.js';
import { uuid } from '../../kafka/fields.js';
import { isZeroUuid } from '../../kafka/uuid.js';
import type { KafkaRequest } from '../../kafka/events.js';
import type { ConnectionRule } from './rule.js';

/** GetTelemetrySubscriptions (a version whose body has ClientInstanceId: v0) asking for a new ID (zero body ID) while the header carries one. */
export function isZeroBodyWithHeader(r: KafkaRequest): boolean {
  if (r.header.apiKey !== API_KEY.GetTelemetrySubscriptions || r.header.clientInstanceId === null) return false;
  const body = uuid(r.body, 'ClientInstanceId');
  return body != null && isZeroUuid(body);
}

export const telemetryZeroIdWithHeader: ConnectionRule = {
  kind: 'connection',
  id: 'telemetry-zero-id-with-header',
  severity: 'error',
  revision: 'both',
  summary: 'GetTelemetrySubscriptions v0 with a zero body ClientInstanceId while the header carries an ID.',
  explanation:
    'In KIP-714 a client sends a zero ClientInstanceId in its first GetTelemetrySubscriptions request to ask ' +
    'the broker to assign one. KIP-1313 makes the client own its ID: a client that sends the ID in its ' +
    'request header must not ask for another one, and the broker answers such a request with ' +
    'INVALID_REQUEST. The body ID must equal the header ID.',
  spec:
    'KIP-1313, GetTelemetrySubscriptions: "If the client sends a zero ClientInstanceId in the request body, ' +
    'it must not send a ClientInstanceId in the request header." (header UUID-H, request 0 → ErrorCode ' +
    'INVALID_REQUEST: "This is not allowed.")',
  onRequest(_s, r, report) {
    if (isZeroBodyWithHeader(r)) {
      report({ message: 'GetTelemetrySubscriptions v0 asks for a new ID (zero body ClientInstanceId) although its header carries one' });
    }
  },
};
