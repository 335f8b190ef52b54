import type { KafkaRequest } from '../../kafka/events.js';
import { quoted } from '../../base/sanitize.js';
import { isFirstRequest, MAX_DEFERRED } from './rule.js';
import type { ConnectionRule, RuleHit } from './rule.js';

function hit(r: KafkaRequest): RuleHit {
  return {
    message: `ClientId ${quoted(r.header.clientId ?? '')} sent on a request other than the first of the connection`,
    request: r,
  };
}

export const clientIdAfterFirst: ConnectionRule = {
  kind: 'connection',
  id: 'client-id-after-first',
  severity: 'error',
  revision: 'both',
  summary: 'A KIP-1313 client sends a non-null ClientId on a request other than the first of a connection.',
  explanation:
    'KIP-1313 has clients send ClientId only on the first request of each connection and null on every ' +
    'later one: the broker remembers it in the connection context, and repeating it is redundant bytes on ' +
    'every request. Judged only on connections whose client sends tag 0 (legacy clients send ClientId on ' +
    'every request, as they always have) and only when the capture saw the SYN, so that the first request ' +
    'is known. An ApiVersions request retried after an UNSUPPORTED_VERSION answer still counts as the first ' +
    '(KIP-511: the client is still negotiating). The empty string is not null.',
  spec:
    'KIP-1313: "This KIP also proposes sending a null client ID for all requests on each client connection, ' +
    'with the exception of the initial request on each connection."',
  onRequest(s, r, report) {
    if (!s.conn.startSeen) return;
    const sendsTag0 = s.sawTag0 || r.header.clientInstanceId !== null;
    if (!s.sawTag0 && sendsTag0) {
      // The connection just showed it is a KIP-1313 client: the candidates held so far are violations.
      for (const held of s.deferredClientIds) report(hit(held));
      s.deferredClientIds = [];
    }
    if (isFirstRequest(s, r) || r.header.clientId === null) return;
    if (sendsTag0) report(hit(r));
    else if (s.deferredClientIds.length === 0) s.deferredClientIds = [r];
    else if (s.deferredClientIds.length < MAX_DEFERRED) s.deferredClientIds.push(r);
    else s.deferredOverflow++;
  },
};
