import { quoted } from '../../base/sanitize.js';
import type { ConnectionRule } from './rule.js';

export const clientIdChanged: ConnectionRule = {
  kind: 'connection',
  id: 'client-id-changed',
  severity: 'info',
  summary: 'A legacy client (no tag 0) sends a different ClientId on a later request of the same connection.',
  explanation:
    'A connection is named by the ClientId of its first request: the broker keeps it in the connection ' +
    'context, and kcid groups instances and judges rules by it. A legacy client (one that never sends tag 0) ' +
    'sends ClientId on every request, as it always has, and a well-behaved one sends the same value each time ' +
    '(client.id is fixed when the client is constructed). A different value on a later request is noted once ' +
    'per connection: the connection keeps its first name, and the broker may log, quota or authorise the ' +
    'later requests under another. On a KIP-1313 connection any later ClientId is client-id-after-first instead.',
  spec:
    'Kafka protocol guide, request header: "client_id: A user specified identifier for the client making the ' +
    'request." KIP-1313: ClientId is sent on "the initial request on each connection".',
  onRequest(s, r) {
    const id = r.header.clientId;
    if (s.clientIdChange !== null || s.requests === 0 || id === null || s.clientIds.length === 0) return;
    if (r.header.clientInstanceId === null && id !== s.clientIds[0]) s.clientIdChange = r;
  },
  onEnd(s, report) {
    const r = s.clientIdChange;
    if (r === null || s.sawTag0) return;
    report({
      message: `ClientId changed on one connection: ${quoted(s.clientIds[0]!)} first, then ${quoted(r.header.clientId ?? '')}`,
      request: r,
    });
  },
};
