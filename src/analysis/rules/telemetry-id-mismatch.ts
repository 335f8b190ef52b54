import { API_KEY } from '../../kafka/protocol.js';
import { uuid } from '../../kafka/fields.js';
import { isZeroUuid, uuidEquals, uuidToBase64 } from '../../kafka/uuid.js';
import type { KafkaRequest } from '../../kafka/events.js';
import type { ConnectionRule } from './rule.js';

/** A telemetry request whose non-zero body ClientInstanceId (v0: the versions whose body has one) differs from its header's. */
export function bodyIdMismatch(r: KafkaRequest): { body: Uint8Array; header: Uint8Array } | null {
  const header = r.header.clientInstanceId;
  const k = r.header.apiKey;
  if (header === null || (k !== API_KEY.GetTelemetrySubscriptions && k !== API_KEY.PushTelemetry)) return null;
  const body = uuid(r.body, 'ClientInstanceId');
  if (body == null || isZeroUuid(body) || uuidEquals(body, header)) return null;
  return { body, header };
}

export const telemetryIdMismatch: ConnectionRule = {
  kind: 'connection',
  id: 'telemetry-id-mismatch',
  severity: 'error',
  revision: 'both',
  summary: 'GetTelemetrySubscriptions v0 or PushTelemetry v0 whose body ClientInstanceId differs from the header ID.',
  explanation:
    'KIP-1313 requires the client to use the same UUID in its request headers as its client telemetry ' +
    '(KIP-714) client instance ID. In the v0 telemetry requests, which still carry the ID in the body, a ' +
    'non-zero body ID must therefore equal the header ID; a client using one ID for its headers and another ' +
    'for telemetry splits its identity in two, and the new broker answers INVALID_REQUEST.',
  spec:
    'KIP-1313: "if the client sends a ClientInstanceId in the request header and it also sends a non-zero ' +
    'ClientInstanceId in the request body, the values must be the same. It is not permitted to use one ' +
    'client instance ID for request headers and a different client instance ID for telemetry."',
  onRequest(_s, r, report) {
    const m = bodyIdMismatch(r);
    if (m !== null) {
      report({ message: `body ClientInstanceId ${uuidToBase64(m.body)} differs from header ClientInstanceId ${uuidToBase64(m.header)}` });
    }
  },
};
