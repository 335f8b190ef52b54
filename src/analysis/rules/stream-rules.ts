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
  summary: "A request for an API key or version that kcid's API table does not know.",
  explanation:
    'kcid decodes request headers by looking up the API key and version in its table (from Kafka\'s message ' +
    'schemas, with KIP-1313\'s new versions). A key or version it does not know is decoded as far as the ' +
    'header allows (key, version, correlation ID and ClientId) and noted, since kcid cannot tell whether its ' +
    'header is v1 or v2 and so cannot read a ClientInstanceId from it.',
  spec: 'Kafka message schemas (clients/src/main/resources/common/message/*.json): validVersions and flexibleVersions.',
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
