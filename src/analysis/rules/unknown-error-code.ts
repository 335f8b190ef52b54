import { protocol } from '../../kafka/protocol.js';
import type { ConnectionRule } from './rule.js';

/** Distinct unknown codes reported per connection at most. */
const MAX_REPORTED = 8;

export const unknownErrorCode: ConnectionRule = {
  kind: 'connection',
  id: 'unknown-error-code',
  severity: 'info',
  summary: 'A response carries an error code that Kafka does not define.',
  explanation:
    "Every ErrorCode field of Kafka's responses (top level, per topic, partition or group) holds one of the " +
    "codes of Kafka's Errors table. A code outside it comes from a broker newer than kcid's schemas, a " +
    'non-Apache implementation, or a corrupted response; clients treat it as UNKNOWN_SERVER_ERROR. Each ' +
    'unknown code is noted once per connection.',
  spec: 'Apache Kafka, clients/src/main/java/org/apache/kafka/common/protocol/Errors.java (kcid: the table generated from it).',
  onResponse(s, r, report) {
    const codes = r.errorCodes;
    if (codes.length === 0) return;
    const p = protocol();
    for (let i = 0; i < codes.length; i++) {
      const code = codes[i]!;
      if (p.error(code) !== undefined) continue;
      const seen = s.unknownErrorCodes;
      if (seen.includes(code) || seen.length >= MAX_REPORTED) continue;
      s.unknownErrorCodes = seen.length === 0 ? [code] : [...seen, code];
      const q = r.request;
      report({ message: `${q === null ? 'response' : `${p.label(q.header.apiKey, q.header.apiVersion)} response`} carries error code ${code}, which Kafka does not define` });
    }
  },
};
