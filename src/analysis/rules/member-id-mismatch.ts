import { API_KEY } from '../../kafka/protocol.js';
import { str } from '../../kafka/fields.js';
import { uuidToBase64 } from '../../kafka/uuid.js';
import { quoted } from '../../base/sanitize.js';
import { requestOwner } from '../owner.js';
import type { ConnectionRule } from './rule.js';

/**
 * The heartbeats of the group protocols whose member ID the client chooses, each read by its own
 * schema's MemberId field: KIP-848 consumer groups (since KIP-1082), KIP-932 share groups, KIP-1071
 * streams groups.
 */
const CLIENT_CHOSEN_MEMBER_IDS: ReadonlySet<number> = new Set([
  API_KEY.ConsumerGroupHeartbeat,
  API_KEY.ShareGroupHeartbeat,
  API_KEY.StreamsGroupHeartbeat,
]);

export const memberIdMismatch: ConnectionRule = {
  kind: 'connection',
  id: 'member-id-mismatch',
  severity: 'warning',
  revision: 'both',
  summary:
    "A ConsumerGroupHeartbeat, ShareGroupHeartbeat or StreamsGroupHeartbeat whose non-empty MemberId is not the client instance ID in Kafka's base64 form.",
  explanation:
    'In the group protocols where the client generates its own member ID (KIP-848 consumer groups since ' +
    'KIP-1082, KIP-932 share groups, KIP-1071 streams groups), KIP-1313 asks that it be the client instance ' +
    'ID, so that a group member, its telemetry and its requests share one identifier. This is a SHOULD ' +
    '(convention, which the Java client follows), hence a warning. The comparison is with the ID printed as ' +
    'Kafka prints it (22 characters of URL-safe base64), and the ID is the request\'s own or, when its ' +
    'header carries none, the connection\'s; an empty MemberId (joining) is not judged.',
  spec:
    'KIP-1313: "the client SHOULD use the same UUID in request headers as it uses for the member ID in the ' +
    'group protocols and the client telemetry client instance ID."',
  onRequest(s, r, report) {
    if (!CLIENT_CHOSEN_MEMBER_IDS.has(r.header.apiKey)) return;
    const memberId = str(r.body, 'MemberId');
    const id = requestOwner(r.header.clientInstanceId, s.connectionId);
    if (id === null || memberId == null || memberId === '') return;
    const expected = uuidToBase64(id);
    if (memberId !== expected) {
      report({ message: `MemberId ${quoted(memberId)} is not the client instance ID ${expected}` });
    }
  },
};
