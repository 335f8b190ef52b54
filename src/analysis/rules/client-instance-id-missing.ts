import { carriesInstanceIdOnEveryRequest } from '../../kafka/protocol.js';
import type { ConnectionRule } from './rule.js';

export const clientInstanceIdMissing: ConnectionRule = {
  kind: 'connection',
  id: 'client-instance-id-missing',
  severity: 'error',
  revision: 'voting',
  summary: 'After sending tag 0 on a connection, the client sends a request header v2 without it.',
  explanation:
    'KIP-1313 puts the client instance ID in tag 0 of request header v2, "so it is present on all RPCs ' +
    'which use the v2 request header". A client that has shown it implements KIP-1313 on a connection and ' +
    'then omits the tag on a later v2 header breaks that promise; the broker falls back to the connection ' +
    'context, but tools reading the header (and brokers enforcing it) see an anonymous request. Requests ' +
    'with a v1 header cannot carry the tag and are not judged.',
  spec:
    'KIP-1313: "The ID is introduced as a tagged field in the RPC request header, so it is present on all ' +
    'RPCs which use the v2 request header, which is almost all of the current versions of the RPCs."',
  onRequest(s, r, report) {
    // A tag 0 of the wrong size is malformed-request-header's finding, not a missing ID.
    if (s.sawTag0 && carriesInstanceIdOnEveryRequest(r.header.headerVersion) && r.header.clientInstanceId === null && !hasTag0SizeProblem(r.header.problems)) {
      report({ message: 'request header v2 without ClientInstanceId (tag 0) on a connection that sent it before' });
    }
  },
};

export function hasTag0SizeProblem(problems: readonly { code: string }[]): boolean {
  for (const p of problems) if (p.code === 'tag0-size') return true;
  return false;
}
