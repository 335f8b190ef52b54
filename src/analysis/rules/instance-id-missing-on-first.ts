import { carriesInstanceIdOnFirstRequestOnly } from '../../kafka/protocol.js';
import { isFirstRequest } from './rule.js';
import { hasTag0SizeProblem } from './client-instance-id-missing.js';
import type { ConnectionRule } from './rule.js';

/** The accepted revision's promise, as the issue and the KIP's text give it. */
export const V3_PROMISE =
  'KIP-1313 (accepted revision): "If a connection uses the v3 request header in its first request, it must ' +
  'specify the client instance ID and then omit the client instance ID from all subsequent requests on that connection."';

export const instanceIdMissingOnFirst: ConnectionRule = {
  kind: 'connection',
  id: 'instance-id-missing-on-first',
  severity: 'error',
  revision: 'accepted',
  summary: "A connection's first request uses request header v3 without a ClientInstanceId.",
  explanation:
    'In the accepted revision of KIP-1313 a client sends its client instance ID once per connection: in the ' +
    'request header v3 of the connection\'s first request, and the broker keeps it in the connection ' +
    'context for every later request. A first request with a v3 header but no ID leaves the whole ' +
    'connection anonymous. Judged only when the capture saw the connection start (its SYN), so that the ' +
    'first request is known; an ApiVersions retried after UNSUPPORTED_VERSION still counts as the first ' +
    '(KIP-511). Request header v3 is read by the schemas\' headerVersions (--kafka-specs) or --kip-1313 accepted.',
  spec: V3_PROMISE,
  onRequest(s, r, report) {
    const h = r.header;
    if (!s.conn.startSeen || !carriesInstanceIdOnFirstRequestOnly(h.headerVersion) || !isFirstRequest(s, r)) return;
    if (h.clientInstanceId === null && !hasTag0SizeProblem(h.problems)) {
      report({ message: `request header v${h.headerVersion} without ClientInstanceId on the connection's first request` });
    }
  },
};
