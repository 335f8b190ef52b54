import { carriesInstanceIdOnFirstRequestOnly } from '../../kafka/protocol.js';
import { uuidToBase64 } from '../../kafka/uuid.js';
import { isFirstRequest } from './rule.js';
import { V3_PROMISE } from './instance-id-missing-on-first.js';
import type { ConnectionRule } from './rule.js';

export const instanceIdAfterFirst: ConnectionRule = {
  kind: 'connection',
  id: 'instance-id-after-first',
  severity: 'error',
  revision: 'accepted',
  summary: 'A request with request header v3 carries a ClientInstanceId although it is not the first of its connection.',
  explanation:
    'In the accepted revision of KIP-1313, request header v3 carries the client instance ID on the first ' +
    'request of a connection only; every later request omits it and belongs to the ID of the first (the ' +
    'broker\'s connection context). A later v3 request that carries it again breaks that promise (and ' +
    'costs 19 bytes per request the revision meant to save). A request with a v2 header on the same ' +
    'connection is judged by v2\'s promise instead (tag 0 on every request). When the capture missed the ' +
    'connection\'s start, its first captured request is not judged.',
  spec: V3_PROMISE,
  onRequest(s, r, report) {
    const h = r.header;
    if (h.clientInstanceId === null || !carriesInstanceIdOnFirstRequestOnly(h.headerVersion)) return;
    // Without the SYN, the first request the capture saw may be the connection's first: not judged either.
    if (isFirstRequest(s, r)) return;
    report({ message: `request header v${h.headerVersion} carries ClientInstanceId ${uuidToBase64(h.clientInstanceId)} on a request other than the connection's first` });
  },
};
