/**
 * short-response-tolerated: a response that ends before its schema's last field, in a way a known client
 * accepts (bodies.ts, toleratedShortBody). Other malformed responses are `malformed-body` warnings, raised
 * by the analyzer beside this rule with {@link responseBodyMessage}.
 */
import { protocol } from '../../kafka/protocol.js';
import type { KafkaResponse } from '../../kafka/events.js';
import type { ConnectionRule } from './rule.js';

/** Error codes named in a message at most. */
const MAX_NAMED = 4;

/**
 * A malformed or short response in one line: where it broke (`kcid show`'s words, bodies.ts bodyBreak), the
 * request it answers, and the error codes read before the break, which count as the response's.
 */
export function responseBodyMessage(r: KafkaResponse, what: string, detail: string = r.bodyError ?? ''): string {
  const p = protocol();
  const q = r.request;
  const about = q === null ? 'response' : `response to ${p.label(q.header.apiKey, q.header.apiVersion)} (correlation id ${r.correlationId})`;
  const codes = r.errorCodes;
  const named = codes.slice(0, MAX_NAMED).map((c) => p.errorLabel(c)).join(', ') + (codes.length > MAX_NAMED ? ', ...' : '');
  const counted = codes.length === 0 ? 'no error code read' : `${codes.length} error code${codes.length === 1 ? '' : 's'} read (${named})`;
  return `${about} ${what}: ${detail}; ${counted}`;
}

export const shortResponseTolerated: ConnectionRule = {
  kind: 'connection',
  id: 'short-response-tolerated',
  severity: 'info',
  summary: 'A response body that ends before its last field, or an ApiVersions body that leaves bytes over, in ways known clients accept.',
  explanation:
    "Kafka's message schemas give every field of each response version, and Kafka's own client refuses a body " +
    'that ends early. Two short forms are seen in real traffic and accepted by the clients that meet them: an ' +
    'ApiVersions v1 or later response without its last field, ThrottleTimeMs, as old brokers send it (kafkajs reads ' +
    'ThrottleTimeMs only when four bytes are left, else takes 0), and a LeaveGroup v3 or later response without ' +
    "Members, as librdkafka's mock cluster sends it (librdkafka reads only ThrottleTimeMs and ErrorCode of it). " +
    'Because these clients work with them, kcid notes them rather than warning; every field before the break is ' +
    'kept and its error codes are counted (tshark shows them too). Any other body that ends early or does not ' +
    'parse is a malformed-body warning, for responses as for requests. An ApiVersions response that parses as the ' +
    "version asked but leaves bytes over (librdkafka's mock cluster answers an unsupported version so) is noted " +
    "here too: Kafka's client reads it and ignores the rest (ApiVersionsResponse.parse), tshark flags the rest as malformed.",
  spec: "Kafka message schemas ApiVersionsResponse.json and LeaveGroupResponse.json; kafkajs src/protocol/requests/apiVersions/v1/response.js; librdkafka rd_kafka_handle_LeaveGroup.",
  onResponse(_s, r, report) {
    if (r.bodyError !== null && r.bodyTolerated !== undefined) report({ message: responseBodyMessage(r, `is short (${r.bodyTolerated})`) });
    else if (r.bodyError === null && r.bodyTolerated === undefined && r.bodyLeftover !== undefined) {
      const q = r.request;
      const left = r.bodyLeftover;
      report({ message: responseBodyMessage(r, 'leaves bytes over', `${left} byte${left === 1 ? '' : 's'} after the body as v${q?.header.apiVersion ?? '?'} reads it, which Kafka's client ignores`) });
    }
  },
};
