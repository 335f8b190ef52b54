/**
 * Test-side Kafka ENCODERS, written from the protocol guide and the message schemas (not by inverting
 * kcid's decoders), so that every byte of a test frame is explained by the call that built it.
 */
import { protocol } from '../../src/kafka/protocol.js';
import { FIXED_SIZE, inRange, layoutFor, type FieldSchema } from '../../src/kafka/schema/model.js';

// ---- primitives ------------------------------------------------------------------------------------

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

export function int8(n: number): Uint8Array {
  return Uint8Array.of(n & 0xff);
}

export function bool(b: boolean): Uint8Array {
  return Uint8Array.of(b ? 1 : 0);
}

/** Big-endian, two's complement. */
export function int16(n: number): Uint8Array {
  return Uint8Array.of((n >> 8) & 0xff, n & 0xff);
}

export function int32(n: number): Uint8Array {
  return Uint8Array.of((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

export function int64(n: bigint): Uint8Array {
  const out = new Uint8Array(8);
  let v = BigInt.asUintN(64, n);
  for (let i = 7; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** Unsigned LEB128: 7 bits per byte, least significant group first, high bit set on all but the last. */
export function uvarint(n: number): Uint8Array {
  const out: number[] = [];
  let v = n >>> 0;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Uint8Array.from(out);
}

/** Zigzag then LEB128. */
export function varint(n: number): Uint8Array {
  return uvarint(((n << 1) ^ (n >> 31)) >>> 0);
}

/** STRING / NULLABLE_STRING: int16 byte length (-1 for null), then UTF-8. */
export function string(s: string | null): Uint8Array {
  if (s === null) return int16(-1);
  const b = utf8(s);
  return concat(int16(b.length), b);
}

/** COMPACT_STRING / COMPACT_NULLABLE_STRING: uvarint of length + 1 (0 for null), then UTF-8. */
export function compactString(s: string | null): Uint8Array {
  if (s === null) return uvarint(0);
  const b = utf8(s);
  return concat(uvarint(b.length + 1), b);
}

/** COMPACT_BYTES: uvarint of length + 1 (0 for null), then the bytes. */
export function compactBytes(b: Uint8Array | null): Uint8Array {
  return b === null ? uvarint(0) : concat(uvarint(b.length + 1), b);
}

/** ARRAY: int32 count (-1 for null), then the elements. */
export function array<T>(items: readonly T[] | null, encode: (item: T) => Uint8Array): Uint8Array {
  return items === null ? int32(-1) : concat(int32(items.length), ...items.map(encode));
}

/** COMPACT_ARRAY: uvarint of count + 1 (0 for null), then the elements. */
export function compactArray<T>(items: readonly T[] | null, encode: (item: T) => Uint8Array): Uint8Array {
  return items === null ? uvarint(0) : concat(uvarint(items.length + 1), ...items.map(encode));
}

export function uuid(u: Uint8Array): Uint8Array {
  if (u.length !== 16) throw new Error(`a UUID has 16 bytes, not ${u.length}`);
  return Uint8Array.from(u);
}

/** '0123...' (32 hex digits, dashes allowed anywhere) to 16 bytes. */
export function uuidFromHex(hex: string): Uint8Array {
  const h = hex.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(h)) throw new Error(`not a hex UUID: ${hex}`);
  return Uint8Array.from(Buffer.from(h, 'hex'));
}

export interface RawTag {
  tag: number;
  bytes: Uint8Array;
}

/** TAGGED_FIELDS: uvarint count, then per field uvarint tag, uvarint size and the bytes, in the order given. */
export function taggedFields(tags: readonly RawTag[] = []): Uint8Array {
  return concat(uvarint(tags.length), ...tags.map((t) => concat(uvarint(t.tag), uvarint(t.bytes.length), t.bytes)));
}

/** int32 size prefix, then the frame. */
export function sizePrefixed(frame: Uint8Array): Uint8Array {
  return concat(int32(frame.length), frame);
}

// ---- headers and frames ------------------------------------------------------------------------------

export interface RequestFrameOptions {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  /** Header v1+. Default 'kcid-test'. */
  clientId?: string | null;
  /** Default: the version Kafka uses for this API key and version. */
  headerVersion?: number;
  /** Header v2: tag 0 (KIP-1313), written first. */
  clientInstanceId?: Uint8Array | null;
  /** Header v2: more tags written as given after tag 0 (any order, size or repetition, for malformed cases). */
  tags?: RawTag[];
  /** Header v2: replaces the whole tagged-fields section (counts that lie, truncated varints...). */
  rawTagSection?: Uint8Array;
  body?: Uint8Array;
}

/** The request header alone (RequestHeader.json, plus tag 0 of KIP-1313). */
export function requestHeader(o: RequestFrameOptions): Uint8Array {
  const version = o.headerVersion ?? protocol().requestHeaderVersion(o.apiKey, o.apiVersion);
  if (version === null) throw new Error(`no default header version for key ${o.apiKey} v${o.apiVersion}`);
  const parts = [int16(o.apiKey), int16(o.apiVersion), int32(o.correlationId)];
  // ClientId keeps the int16 length even in the flexible v2 header.
  if (version >= 1) parts.push(string(o.clientId === undefined ? 'kcid-test' : o.clientId));
  if (version >= 2) {
    const tags = [...(o.clientInstanceId ? [{ tag: 0, bytes: o.clientInstanceId }] : []), ...(o.tags ?? [])];
    parts.push(o.rawTagSection ?? taggedFields(tags));
  }
  return concat(...parts);
}

/** A whole request: int32 size, header, body. */
export function requestFrame(o: RequestFrameOptions): Uint8Array {
  return sizePrefixed(concat(requestHeader(o), o.body ?? new Uint8Array(0)));
}

export interface ResponseFrameOptions {
  correlationId: number;
  headerVersion: number;
  /** Header v1 only. */
  tags?: RawTag[];
  body?: Uint8Array;
}

export function responseHeader(o: ResponseFrameOptions): Uint8Array {
  return o.headerVersion === 1 ? concat(int32(o.correlationId), taggedFields(o.tags)) : int32(o.correlationId);
}

/** A whole response: int32 size, header, body. */
export function responseFrame(o: ResponseFrameOptions): Uint8Array {
  return sizePrefixed(concat(responseHeader(o), o.body ?? new Uint8Array(0)));
}

// ---- bodies --------------------------------------------------------------------------------------------

/** ApiVersionsRequest v3+ (v0-2 have an empty body). */
export function apiVersionsRequestBody(o: { softwareName: string | null; softwareVersion: string | null; tags?: RawTag[] }): Uint8Array {
  return concat(compactString(o.softwareName), compactString(o.softwareVersion), taggedFields(o.tags));
}

export interface ApiVersionsResponseFields {
  errorCode: number;
  apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[];
  throttleTimeMs?: number;
}

/** ApiVersionsResponse: ErrorCode, ApiKeys, ThrottleTimeMs (v1+), tagged fields (v3+). */
export function apiVersionsResponseBody(version: number, o: ApiVersionsResponseFields): Uint8Array {
  const flexible = version >= 3;
  const entry = (k: ApiVersionsResponseFields['apiKeys'][number]): Uint8Array =>
    concat(int16(k.apiKey), int16(k.minVersion), int16(k.maxVersion), flexible ? taggedFields() : new Uint8Array(0));
  return concat(
    int16(o.errorCode),
    flexible ? compactArray(o.apiKeys, entry) : array(o.apiKeys, entry),
    version >= 1 ? int32(o.throttleTimeMs ?? 0) : new Uint8Array(0),
    flexible ? taggedFields() : new Uint8Array(0),
  );
}

/** GetTelemetrySubscriptionsRequest: v0 ClientInstanceId; v1 (KIP-1313) only tagged fields. */
export function getTelemetrySubscriptionsRequestBody(version: number, clientInstanceId?: Uint8Array, tags?: RawTag[]): Uint8Array {
  const id = version === 0 ? uuid(clientInstanceId ?? new Uint8Array(16)) : new Uint8Array(0);
  return concat(id, taggedFields(tags));
}

export interface GetTelemetrySubscriptionsResponseFields {
  throttleTimeMs: number;
  errorCode: number;
  /** v0 only. */
  clientInstanceId?: Uint8Array;
  subscriptionId: number;
  acceptedCompressionTypes: number[];
  pushIntervalMs: number;
  telemetryMaxBytes: number;
  deltaTemporality: boolean;
  requestedMetrics: string[];
}

export function getTelemetrySubscriptionsResponseBody(version: number, o: GetTelemetrySubscriptionsResponseFields): Uint8Array {
  return concat(
    int32(o.throttleTimeMs),
    int16(o.errorCode),
    version === 0 ? uuid(o.clientInstanceId ?? new Uint8Array(16)) : new Uint8Array(0),
    int32(o.subscriptionId),
    compactArray(o.acceptedCompressionTypes, int8),
    int32(o.pushIntervalMs),
    int32(o.telemetryMaxBytes),
    bool(o.deltaTemporality),
    compactArray(o.requestedMetrics, compactString),
    taggedFields(),
  );
}

export interface PushTelemetryRequestFields {
  /** v0 only. */
  clientInstanceId?: Uint8Array;
  subscriptionId: number;
  terminating: boolean;
  compressionType: number;
  metrics: Uint8Array | null;
}

export function pushTelemetryRequestBody(version: number, o: PushTelemetryRequestFields): Uint8Array {
  return concat(
    version === 0 ? uuid(o.clientInstanceId ?? new Uint8Array(16)) : new Uint8Array(0),
    int32(o.subscriptionId),
    bool(o.terminating),
    int8(o.compressionType),
    compactBytes(o.metrics),
    taggedFields(),
  );
}

/** ThrottleTimeMs (when given), ErrorCode, tagged fields when flexible: PushTelemetry, Heartbeat v1+, ... */
export function errorCodeResponseBody(o: { throttleTimeMs?: number; errorCode: number; flexible: boolean }): Uint8Array {
  return concat(
    o.throttleTimeMs === undefined ? new Uint8Array(0) : int32(o.throttleTimeMs),
    int16(o.errorCode),
    o.flexible ? taggedFields() : new Uint8Array(0),
  );
}

export function pushTelemetryResponseBody(o: { throttleTimeMs: number; errorCode: number }): Uint8Array {
  return errorCodeResponseBody({ ...o, flexible: true });
}

export interface ConsumerGroupHeartbeatRequestFields {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  instanceId?: string | null;
  rackId?: string | null;
  rebalanceTimeoutMs?: number;
  subscribedTopicNames?: string[] | null;
  /** v1+. */
  subscribedTopicRegex?: string | null;
  serverAssignor?: string | null;
  topicPartitions?: { topicId: Uint8Array; partitions: number[] }[] | null;
}

/** The whole ConsumerGroupHeartbeatRequest (flexible from v0), field order from the schema. */
export function consumerGroupHeartbeatRequestBody(version: number, o: ConsumerGroupHeartbeatRequestFields): Uint8Array {
  return concat(
    compactString(o.groupId),
    compactString(o.memberId),
    int32(o.memberEpoch),
    compactString(o.instanceId ?? null),
    compactString(o.rackId ?? null),
    int32(o.rebalanceTimeoutMs ?? -1),
    compactArray(o.subscribedTopicNames ?? null, compactString),
    version >= 1 ? compactString(o.subscribedTopicRegex ?? null) : new Uint8Array(0),
    compactString(o.serverAssignor ?? null),
    compactArray(o.topicPartitions ?? null, (tp) =>
      concat(uuid(tp.topicId), compactArray(tp.partitions, int32), taggedFields()),
    ),
    taggedFields(),
  );
}

export interface ConsumerGroupHeartbeatResponseFields {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage?: string | null;
  memberId?: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
}

/** ConsumerGroupHeartbeatResponse with a null Assignment. */
export function consumerGroupHeartbeatResponseBody(o: ConsumerGroupHeartbeatResponseFields): Uint8Array {
  return concat(
    int32(o.throttleTimeMs),
    int16(o.errorCode),
    compactString(o.errorMessage ?? null),
    compactString(o.memberId ?? null),
    int32(o.memberEpoch),
    int32(o.heartbeatIntervalMs),
    // Assignment: a nullable struct is a signed byte, -1 for null (KIP-482 generator, "nullableVersions").
    int8(-1),
    taggedFields(),
  );
}

/** SaslHandshakeRequest (never flexible): Mechanism as an int16-length string. */
export function saslHandshakeRequestBody(mechanism: string | null): Uint8Array {
  return string(mechanism);
}

export function saslHandshakeResponseBody(o: { errorCode: number; mechanisms: string[] | null }): Uint8Array {
  return concat(int16(o.errorCode), array(o.mechanisms, string));
}

/**
 * The smallest body a response version's schema allows, every byte by the schema: each field at zero
 * (numbers 0, bool false, UUID zero), strings and bytes empty, arrays empty, records null where nullable
 * (else empty), no tagged fields. What `respond(corr)` sends when a test gives no body: a test that does
 * not care about the response still sends one that parses.
 */
export function minimalResponseBody(apiKey: number, apiVersion: number): Uint8Array {
  const api = protocol().api(apiKey);
  const layout = api === undefined ? null : layoutFor(api.response, apiVersion);
  if (layout === null) return new Uint8Array(0);
  const flexible = inRange(layout.flexibleVersions, apiVersion);
  const length = (n: number): Uint8Array => (flexible ? uvarint(n + 1) : int32(n));
  const struct = (fields: readonly FieldSchema[]): Uint8Array => {
    const parts: Uint8Array[] = [];
    for (const f of fields) {
      if (!inRange(f.versions, apiVersion) || (flexible && f.tag !== null && inRange(f.taggedVersions, apiVersion))) continue;
      if (f.isArray) parts.push(length(0));
      else if (f.struct !== null) parts.push(struct(f.struct.fields));
      else if (f.primitive === 'string') parts.push(flexible ? uvarint(1) : int16(0));
      else if (f.primitive === 'bytes') parts.push(flexible ? uvarint(1) : int32(0));
      else if (f.primitive === 'records') parts.push(inRange(f.nullableVersions, apiVersion) ? (flexible ? uvarint(0) : int32(-1)) : flexible ? uvarint(1) : int32(0));
      else if (f.primitive === 'varint' || f.primitive === 'varlong') parts.push(Uint8Array.of(0));
      else parts.push(new Uint8Array(FIXED_SIZE[f.primitive!] ?? 0));
    }
    if (flexible) parts.push(taggedFields());
    return concat(...parts);
  };
  return struct(layout.fields);
}
