import { API } from '../../kafka/messages.js';
import { uuidToBase64 } from '../../kafka/uuid.js';
import { quoted } from '../../base/sanitize.js';
import type { ConnectionRule } from './rule.js';

export const memberIdMismatch: ConnectionRule = {
  kind: 'connection',
  id: 'member-id-mismatch',
  severity: 'warning',
  summary: "A ConsumerGroupHeartbeat's non-empty MemberId is not the client instance ID in Kafka's base64 form.",
  explanation:
    'Since KIP-1082 the client generates its own KIP-848 member ID, and KIP-1313 asks that it be the client ' +
    'instance ID, so that a group member, its telemetry and its requests share one identifier. This is a ' +
    'SHOULD (convention, which the Java client follows), hence a warning. The comparison is with the ID ' +
    'printed as Kafka prints it (22 characters of URL-safe base64); an empty MemberId (joining) is not judged.',
  spec:
    'KIP-1313: "the client SHOULD use the same UUID in request headers as it uses for the member ID in the ' +
    'group protocols and the client telemetry client instance ID."',
  onRequest(s, r, report) {
    const b = r.body;
    if (r.header.apiKey !== API.ConsumerGroupHeartbeat || b === null || b.kind !== 'ConsumerGroupHeartbeat') return;
    const id = r.header.clientInstanceId ?? s.connectionId;
    if (id === null || b.memberId === null || b.memberId === '') return;
    const expected = uuidToBase64(id);
    if (b.memberId !== expected) {
      report({ message: `MemberId ${quoted(b.memberId)} is not the client instance ID ${expected}` });
    }
  },
};
