/**
 * Findings raised by the capture, TCP and framing layers rather than by looking at a request:
 * one desync warning, and notes (info) that explain why some traffic was not analysed.
 */
import type { StreamRule } from './rule.js';

export const streamDesync: StreamRule = {
  kind: 'stream',
  id: 'stream-desync',
  severity: 'warning',
  summary: 'Bytes on a Kafka connection that could not be framed as Kafka messages were skipped.',
  explanation:
    'Kafka frames every request and response with an int32 size (the Kafka protocol guide). A size larger ' +
    'than --max-frame-bytes (default 100 MiB, the broker\'s socket.request.max.bytes), a header that does not ' +
    'parse, or bytes missing from the capture where a size or header was due leave kcid out of step with the ' +
    'stream. It reports how many bytes it skipped and resumes at the next position that looks like the start ' +
    'of a request (or of a response to a pending request). Requests inside the skipped bytes are not judged.',
  spec: 'Kafka protocol guide, "Common Request and Response Structure": RequestOrResponse => Size (RequestMessage | ResponseMessage), Size => int32.',
};

export const captureGap: StreamRule = {
  kind: 'stream',
  id: 'capture-gap',
  severity: 'info',
  summary: 'Bytes of a Kafka connection are missing from the capture (dropped by the capture, or before it started).',
  explanation:
    'TCP sequence numbers show bytes that the peer acknowledged, or that later segments skip over, but that ' +
    'the capture never saw (a busy capture host drops packets; snaplen truncates them). kcid reports the ' +
    'number of missing bytes and carries on; requests inside the gap are not seen, so rules judged on them ' +
    'may be silent. A gap inside Produce or Fetch payload costs nothing.',
  spec: 'RFC 9293 (TCP) §3.4, sequence numbers; Wireshark\'s "ACKed segment that wasn\'t captured".',
};

export const tlsOnKafkaPort: StreamRule = {
  kind: 'stream',
  id: 'tls-on-kafka-port',
  severity: 'info',
  summary: 'A connection to a Kafka port starts with a TLS handshake: its contents cannot be analysed.',
  explanation:
    'Kafka listeners with security.protocol SSL or SASL_SSL wrap the protocol in TLS. kcid does not decrypt ' +
    'TLS, so the connection is counted and noted but none of its requests are judged. Capture on the ' +
    'plaintext side of a TLS-terminating proxy, or on a PLAINTEXT/SASL_PLAINTEXT listener, to analyse it.',
  spec: 'RFC 8446 §5.1: a TLS record begins with content type 22 (handshake) and legacy version 0x03 0x0N.',
};

export const unknownApiKey: StreamRule = {
  kind: 'stream',
  id: 'unknown-api-key',
  severity: 'info',
  summary: 'A request for an API key or version that the schemas kcid decodes with do not define.',
  explanation:
    'kcid decodes request headers by the API key and version, from Kafka\'s message schemas (built in: Kafka ' +
    'trunk of August 2026, the versions it removed and KIP-1313\'s overlay; or --kafka-specs). A key or ' +
    'version they do not define is decoded as far as the header allows (key, version, correlation ID and ' +
    'ClientId) and noted: a version above the schemas of an API that is flexible from some version on is ' +
    'read with that API\'s newest header (Kafka never makes a flexible API inflexible again), so its tag 0 ' +
    'is still seen; otherwise kcid cannot tell which header version it has.',
  spec: 'Kafka message schemas (clients/src/main/resources/common/message/*.json): validVersions and flexibleVersions.',
};

export const removedApiVersion: StreamRule = {
  kind: 'stream',
  id: 'removed-api-version',
  severity: 'info',
  summary: 'A request version that current Kafka no longer accepts (for example one KIP-896 removed in Kafka 4.0).',
  explanation:
    'KIP-896 removed the oldest versions of many APIs in Apache Kafka 4.0 (Produce v0-2, Fetch v0-3, ...), and ' +
    'later releases removed more. A broker of those releases answers such a request with UNSUPPORTED_VERSION ' +
    'or closes the connection. kcid still decodes it (its schemas keep the removed layouts) and notes the API, ' +
    'the version, the release that removed it and the range current Kafka accepts: a client that sends it ' +
    'is too old for a Kafka 4 cluster.',
  spec: 'KIP-896: "Remove old client protocol API versions in Kafka 4.0"; Kafka\'s message schemas, validVersions.',
};

export const malformedBody: StreamRule = {
  kind: 'stream',
  id: 'malformed-body',
  severity: 'warning',
  summary: 'A request body that does not parse by its schema (a length past the frame, a negative count, a null where none is allowed).',
  explanation:
    'kcid decodes the request bodies it reads by Kafka\'s message schemas, bounded by the frame. A body that ' +
    'does not parse is one the broker rejects too (it closes the connection on a malformed request); the ' +
    'finding names the exact field path and the problem. Framing is not affected: the frame\'s size still ' +
    'says where the next request starts.',
  spec: 'Kafka protocol guide, "Protocol Primitive Types"; KIP-482 (compact and tagged encodings).',
};

export const captureTruncated: StreamRule = {
  kind: 'stream',
  id: 'capture-truncated',
  severity: 'info',
  summary: 'The capture file ends in the middle of a packet or block.',
  explanation:
    'A capture copied while it was being written, or cut off by a full disk, ends in the middle of a record. ' +
    'kcid analyses every complete packet before that point and notes where the file was cut.',
  spec: 'pcap (draft-ietf-opsawg-pcap) and pcapng (draft-ietf-opsawg-pcapng) record layouts.',
};
