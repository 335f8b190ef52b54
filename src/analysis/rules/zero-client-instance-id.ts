import { isZeroUuid } from '../../kafka/uuid.js';
import type { ConnectionRule } from './rule.js';

export const zeroClientInstanceId: ConnectionRule = {
  kind: 'connection',
  id: 'zero-client-instance-id',
  severity: 'error',
  revision: 'both',
  summary: 'A request header carries the zero UUID as its ClientInstanceId (tag 0).',
  explanation:
    'KIP-1313 has every client generate its client instance ID in its constructor, before its first ' +
    'connection, and states that the ID generated is never the zero UUID. In KIP-714 a zero ID meant ' +
    '"not assigned yet, please assign one"; in a request header it means nothing, and the broker cannot ' +
    'tell the client apart from every other client that sends zeros. Fires on each request whose header ' +
    'tag 0 is AAAAAAAAAAAAAAAAAAAAAA.',
  spec:
    'KIP-1313, Proposed Changes: "The client instance ID is calculated by the client during the constructor ' +
    'of the client before it makes its initial connection to the cluster. The client instance ID generated ' +
    'is never the zero UUID."',
  onRequest(_s, r, report) {
    const id = r.header.clientInstanceId;
    if (id !== null && isZeroUuid(id)) report({ message: 'request header ClientInstanceId is the zero UUID' });
  },
};
