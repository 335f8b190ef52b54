import type { ConnectionRule } from './rule.js';

export const malformedRequestHeader: ConnectionRule = {
  kind: 'connection',
  id: 'malformed-request-header',
  severity: 'error',
  summary: 'A request header whose tagged fields do not follow the protocol (tag 0 not 16 bytes, tags out of order or repeated, lengths past the frame).',
  explanation:
    'Request header v2 ends with tagged fields (KIP-482): a count, then for each field its tag and size as ' +
    'unsigned varints, in strictly ascending tag order. KIP-1313 defines tag 0 as the ClientInstanceId, a ' +
    '16-byte UUID. A header that breaks these rules is rejected by a strict broker, and kcid cannot trust the ' +
    'ID it carries.',
  spec:
    'KIP-1313 RequestHeader: { "name": "ClientInstanceId", "type": "uuid", "versions": "2+", "taggedVersions": ' +
    '"2+", "tag": 0 }; KIP-482: tagged fields are serialized in ascending tag order, each tag at most once.',
  onRequest(_s, r, report) {
    const problems = r.header.problems;
    for (let i = 0; i < problems.length; i++) report({ message: problems[i]!.message });
  },
};
