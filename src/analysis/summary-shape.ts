/**
 * The one definition of a summary file's fields (`kcid analyze --format summary-json`), checked by
 * `kcid merge` before any format renders it (base/shape.ts). Wire strings (ClientIds, software,
 * file names, TLS names) may hold anything: every format escapes them. What kcid writes itself
 * (rule IDs, messages, endpoints, instance IDs) is text without control characters, severities and
 * formats one of their names, and numbers numbers, so a summary that passes renders in every format.
 * The activity, latencies and notListed are checked by their own functions (summary-io.ts).
 */
import { arrayOf, bool, count, int, matching, nullable, number, object, oneOf, string, text, tuple, type Shape } from '../base/shape.js';

/** An address or address:port as kcid formats them (10.0.0.1:9092, [fe80::1%eth0]:9092). */
const endpoint = matching(/^[0-9A-Za-z.:[\]%_-]{1,300}$/, 'an address (letters, digits and . : [ ] % _ -)');
/** A client instance ID in Kafka's base64 form (16 bytes: 22 characters of base64url). */
const instanceId = matching(/^[A-Za-z0-9_-]{22}$/, 'a client instance ID (22 characters of base64url)');
/** A rule's ID: lowercase words joined by dashes. */
const ruleId = matching(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'a rule ID (lowercase words joined by -)');

const finding = object({
  rule: ruleId,
  severity: oneOf('error', 'warning', 'info'),
  message: text,
  frame: nullable(count),
  timeUs: nullable(number),
  client: nullable(endpoint),
  broker: nullable(endpoint),
  apiKey: nullable(int),
  apiVersion: nullable(int),
  correlationId: nullable(int),
  clientInstanceId: nullable(instanceId),
  input: count,
});

const input = object({
  file: string,
  format: oneOf('pcap', 'pcapng'),
  gzip: bool,
  packets: count,
  bytes: count,
  kafkaPorts: arrayOf(count),
  tcpPackets: count,
  nonTcpPackets: count,
  unknownLinkTypePackets: count,
  malformedPackets: count,
  truncatedPackets: count,
  truncatedAtFrame: count,
  damagedRecords: count,
  notes: arrayOf(string),
  startUs: nullable(number),
});

const tls = object({
  offered: nullable(string),
  version: nullable(string),
  cipher: nullable(string),
  sni: nullable(string),
  alpn: arrayOf(string),
  helloRetry: bool,
  resumed: bool,
  certificate: nullable(object({ subject: string, notBefore: nullable(string), notAfter: nullable(string) })),
  clientRandom: nullable(string),
  decrypted: bool,
});

const connection = object(
  {
    input: count,
    id: count,
    client: endpoint,
    clientIp: endpoint,
    broker: endpoint,
    startSeen: bool,
    firstFrame: count,
    firstUs: number,
    lastUs: number,
    headerInstanceIds: arrayOf(instanceId),
    telemetryInstanceId: nullable(instanceId),
    clientIds: arrayOf(string),
    software: arrayOf(object({ name: string, version: string })),
    requests: count,
    responses: count,
    errorResponses: count,
    apis: arrayOf(tuple(int, count)),
    gaps: count,
    gapBytes: count,
    firstRequestFrame: nullable(count),
    firstRequestUs: nullable(number),
    latency: arrayOf(count),
  },
  { errors: count, tls },
);

/** The strings of a telemetry event kcid writes itself (isTelemetryEvent in summary-io.ts checks the rest's types). */
const telemetryEvent = object({ client: endpoint, clientIp: endpoint, broker: endpoint, instanceId: nullable(instanceId) });

/** The top level after kind and version (summary-io.ts checks those first, with their own messages). */
export const SUMMARY_SHAPE: Shape = object(
  { inputs: arrayOf(input), connections: arrayOf(connection), findings: arrayOf(finding) },
  { telemetry: arrayOf(telemetryEvent) },
);
