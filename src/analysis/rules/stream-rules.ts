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
  summary: 'A TLS connection to a Kafka port whose keys kcid does not have: its handshake is shown, its requests cannot be analysed.',
  explanation:
    'Kafka listeners with security.protocol SSL or SASL_SSL wrap the protocol in TLS. kcid reads the handshake ' +
    'in the clear (versions, cipher suite, SNI, ALPN, resumption, and for TLS 1.2 the server certificate) and ' +
    'decrypts the connection when a key log (--tls-keylog, or a pcapng Decryption Secrets Block) holds the ' +
    "secrets for its ClientHello's random. Without them the connection is listed and grouped under its client " +
    'address, but none of its requests are judged; the note names the first 16 hex digits of the client ' +
    'random, so you can find the key log line you lack. TLS 1.0 and 1.1 connections are shown the same way, ' +
    'with or without keys: kcid decrypts TLS 1.2 and 1.3 only.',
  spec:
    'RFC 8446 §5.1: a TLS record begins with content type 22 (handshake) and legacy version 0x03 0x0N; NSS key ' +
    'log format: "<label> <client random, hex> <secret, hex>", keyed by the ClientHello random.',
};

export const tlsRecordAuthFailed: StreamRule = {
  kind: 'stream',
  id: 'tls-record-auth-failed',
  severity: 'warning',
  summary: 'A TLS record failed authentication: the key log holds the wrong secret, or the capture is damaged.',
  explanation:
    'Every TLS 1.3 record, and every TLS 1.2 record after ChangeCipherSpec, carries an authentication tag (AEAD) ' +
    'or a MAC. A record whose tag does not verify under the keys derived from the key log was not sent with ' +
    'those keys (a key log from another session, a line edited by hand) or was changed after it was sent (a ' +
    "damaged capture). kcid reports the first such record of each direction, counts the rest, skips each one's " +
    'plaintext as a gap in the Kafka stream, and carries on with the next record.',
  spec:
    'RFC 8446 §5.2: "If the decryption fails, the receiver MUST terminate the connection with a bad_record_mac alert"; ' +
    'RFC 5246 §6.2.3.',
};

export const tlsRecordUnreadable: StreamRule = {
  kind: 'stream',
  id: 'tls-record-unreadable',
  severity: 'warning',
  summary: 'A TLS record could not be read: cut off, larger than TLS allows, lost to a capture gap, or not TLS at all.',
  explanation:
    'TLS sends records of at most 2^14 + 256 bytes of ciphertext, each with a 5-byte header. A record larger ' +
    'than that is skipped by its length; a record that lost bytes to a capture gap is skipped and decryption ' +
    'carries on with the next one (the sequence number is known). A gap over a record header loses the record ' +
    'boundaries: with an AEAD cipher kcid resumes at the next record that authenticates at one of the next ' +
    'sequence numbers; with TLS 1.2 CBC, or after bytes that are not a TLS record header, the rest of that ' +
    'direction is not read. ' +
    'A record cut off by the end of the capture, and handshake messages that do not parse, are reported too, ' +
    'as are records kcid cannot decrypt by design: TLS 1.3 0-RTT early data (one note with its size; the records ' +
    'after the handshake decrypt as usual) and a TLS 1.2 renegotiation whose new client random is not in the key logs.',
  spec: 'RFC 8446 §5.1-5.2: "The length MUST NOT exceed 2^14 + 256 bytes. An endpoint that receives a record that exceeds this length MUST terminate the connection with a record_overflow alert."',
};

export const tlsAlert: StreamRule = {
  kind: 'stream',
  id: 'tls-alert',
  severity: 'warning',
  summary: 'A TLS alert other than close_notify: the handshake or the connection failed.',
  explanation:
    'An alert other than close_notify means a side gave up on the connection: a handshake failure, an unknown ' +
    'or expired certificate, an unsupported version, a bad record MAC. kcid reports its level and description ' +
    '(alerts are in the clear during a TLS 1.2 handshake; other alerts are read once the record is decrypted).',
  spec: 'RFC 8446 §6: "Alert messages convey a description of the alert and a legacy field that conveyed the severity level of the message".',
};

export const tlsKeylogUnmatched: StreamRule = {
  kind: 'stream',
  id: 'tls-keylog-unmatched',
  severity: 'warning',
  summary: 'A key log given with --tls-keylog (or embedded in the capture) matches no TLS connection of the capture.',
  explanation:
    "Key log lines are keyed by the ClientHello's random. A key log none of whose randoms appears in the capture " +
    'belongs to other sessions (another run of the client, another host, a file written after the capture ' +
    'ended), so it decrypts nothing here. The warning names the file and how many secrets it holds, never the secrets.',
  spec: 'NSS key log format (the SSLKEYLOGFILE format): "<label> <client random> <secret>", the client random in 64 hex digits.',
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
  summary: 'A request or response body that does not parse by its schema (it ends early, a length past the frame, a negative count, a null where none is allowed).',
  explanation:
    'kcid decodes the bodies it reads by Kafka\'s message schemas, bounded by the frame. A request body that ' +
    'does not parse is one the broker rejects too (it closes the connection on a malformed request); a response ' +
    'body that does not parse is one Kafka\'s client refuses. The finding names the direction, the offset from the ' +
    'message\'s first byte and the field path where it broke, in the words of `kcid show`; every field read before ' +
    'the break is kept and a response\'s error codes read before it are counted. Two short responses that known ' +
    'clients accept are notes instead (short-response-tolerated). An ApiVersions response is read as the version ' +
    'asked and, only when that fails, as v0 (KIP-511, as Kafka\'s ApiVersionsResponse.parse does); bytes that ' +
    'reading leaves over are flagged here. Framing is not affected: the frame\'s size still says where the next message starts.',
  spec: 'Kafka protocol guide, "Protocol Primitive Types"; KIP-482 (compact and tagged encodings); KIP-511 and ApiVersionsResponse.parse (the v0 fallback).',
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
