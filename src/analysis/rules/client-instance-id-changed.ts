import { uuidEquals, uuidToBase64 } from '../../kafka/uuid.js';
import type { ConnectionRule } from './rule.js';

export const clientInstanceIdChanged: ConnectionRule = {
  kind: 'connection',
  id: 'client-instance-id-changed',
  severity: 'error',
  revision: 'both',
  summary: 'On one connection, a request header ClientInstanceId differs from the one sent before it.',
  explanation:
    'A client instance generates one client instance ID for its whole life and sends it on every request ' +
    'to every broker (KIP-1313). The broker also keeps the ID in the connection context, so that requests ' +
    'with a v1 header, which cannot carry it, are attributed to it. Two IDs on one connection mean either ' +
    'two client instances share a socket (impossible for a well-behaved client) or the client regenerated ' +
    'its ID: either way the broker attributes requests to the wrong instance. Fires on each change.',
  spec:
    'KIP-1313: "the client creates its own UUID before it makes its initial connection to the cluster, and ' +
    'then it uses it for all future requests made to all brokers by that client instance."',
  onRequest(s, r, report) {
    const id = r.header.clientInstanceId;
    const last = s.lastHeaderId;
    if (id !== null && last !== null && !uuidEquals(id, last)) {
      report({ message: `header ClientInstanceId changed from ${uuidToBase64(last)} to ${uuidToBase64(id)} on this connection` });
    }
  },
};
