import { API_KEY, protocol } from '../../kafka/protocol.js';
import { isZeroBodyWithHeader } from './telemetry-zero-id-with-header.js';
import { bodyIdMismatch } from './telemetry-id-mismatch.js';
import type { ConnectionRule } from './rule.js';


export const brokerAcceptedInvalid: ConnectionRule = {
  kind: 'connection',
  id: 'broker-accepted-invalid',
  severity: 'error',
  revision: 'both',
  summary: 'The broker answered an invalid GetTelemetrySubscriptions v0 with error code 0 instead of INVALID_REQUEST (42).',
  explanation:
    'Under KIP-1313 a GetTelemetrySubscriptions v0 request whose header carries a ClientInstanceId must carry ' +
    'the same ID in its body: a zero body ID (asking for a new one) or a different one is not allowed, and ' +
    'the broker answers INVALID_REQUEST. A broker that answers NONE instead is either older than KIP-1313 or ' +
    'does not enforce it, and lets the client run with two identities.',
  spec:
    'KIP-1313, GetTelemetrySubscriptions v0, client sends header.ClientInstanceId = UUID-H, ' +
    'request.ClientInstanceId = 0 (or ≠ UUID-H): "response.ErrorCode = INVALID_REQUEST. This is not allowed."',
  onResponse(_s, r, report) {
    const q = r.request;
    if (q === null || q.header.apiKey !== API_KEY.GetTelemetrySubscriptions || r.errorCode !== 0) return;
    const why = isZeroBodyWithHeader(q)
      ? 'a zero body ClientInstanceId with a header ID'
      : bodyIdMismatch(q) !== null
        ? 'a body ClientInstanceId that differs from the header ID'
        : null;
    if (why !== null) {
      report({ message: `broker answered GetTelemetrySubscriptions v0 with ${why} (frame ${q.frame}) with error code 0, not ${protocol().errorLabel(protocol().errorCode('INVALID_REQUEST') ?? -1)}` });
    }
  },
};
