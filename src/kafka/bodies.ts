/**
 * The few request and response bodies kcid reads, each decoded from buf[start, end) (start = first byte after
 * the header) into a plain object. They throw nothing but DecodeError. Strings are decoded; byte fields
 * (UUIDs) alias `buf`: copy them to keep them. A null where the schema says non-nullable (Kafka would
 * reject the message) decodes as null rather than failing, so the other fields stay visible.
 *
 * Decoders that read a body to its end also return its tagged fields; those that stop early (the
 * ConsumerGroupHeartbeat ones, and the ApiVersions response before its feature tags) read only the
 * leading fields they return.
 */
import { errorCodeOffset, isValidVersion } from './apis.js';
import { MAX_KEPT_TAGS } from './headers.js';
import { DecodeError, Reader } from './reader.js';
import type { TaggedFieldRef } from './types.js';

const API_VERSIONS = 18;
const UNSUPPORTED_VERSION = 35;

function readerFor(name: string, apiKey: number, buf: Uint8Array, start: number, end: number, version: number): Reader {
  if (!isValidVersion(apiKey, version)) throw new DecodeError(`${name} v${version} is unknown to kcid`, start);
  return new Reader(buf, start, end);
}

/** The body's trailing tagged fields (KIP-482), as tag + size. */
function readTags(r: Reader): TaggedFieldRef[] {
  const tags: TaggedFieldRef[] = [];
  r.taggedFields((tag, size) => {
    if (tags.length < MAX_KEPT_TAGS) tags.push({ tag, size });
  });
  return tags;
}

const int8 = (r: Reader): number => r.int8();
const compactString = (r: Reader): string | null => r.compactString();
const string = (r: Reader): string | null => r.string();

/**
 * The top-level ErrorCode of a response whose layout puts it at a fixed offset (see errorCodeOffset), or null.
 * ApiVersions keeps it at offset 0 in every version, even one kcid does not know (KIP-511). Throws
 * DecodeError when the body ends before it.
 */
export function responseErrorCode(buf: Uint8Array, start: number, end: number, apiKey: number, version: number): number | null {
  const offset = apiKey === API_VERSIONS ? 0 : errorCodeOffset(apiKey, version);
  if (offset === null) return null;
  const r = new Reader(buf, start, end);
  r.skip(offset);
  return r.int16();
}

// ---- ApiVersions (key 18) ---------------------------------------------------------------------------

export interface ApiVersionsRequestBody {
  /** v3+ (KIP-511); null before v3. */
  clientSoftwareName: string | null;
  clientSoftwareVersion: string | null;
  tags: TaggedFieldRef[];
}

/** v0-2 have an empty body; v3 (the first flexible version) adds the client's software name and version. */
export function decodeApiVersionsRequest(buf: Uint8Array, start: number, end: number, version: number): ApiVersionsRequestBody {
  const r = readerFor('ApiVersionsRequest', API_VERSIONS, buf, start, end, version);
  if (version < 3) return { clientSoftwareName: null, clientSoftwareVersion: null, tags: [] };
  const clientSoftwareName = r.compactString();
  const clientSoftwareVersion = r.compactString();
  return { clientSoftwareName, clientSoftwareVersion, tags: readTags(r) };
}

export interface ApiVersionRange {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

export interface ApiVersionsResponseBody {
  errorCode: number;
  /** The version the body was decoded as: 0 when the broker answered UNSUPPORTED_VERSION (KIP-511). */
  bodyVersion: number;
  apiKeys: ApiVersionRange[] | null;
  /** v1+. */
  throttleTimeMs: number | null;
}

/**
 * The ErrorCode comes first in every version. When the request's version was too new for the broker, the
 * broker answers UNSUPPORTED_VERSION with a v0 body listing the ApiVersions versions it supports (KIP-511),
 * whatever version was asked; the response header is v0 in every case. The trailing tagged fields
 * (SupportedFeatures, FinalizedFeatures...) are not read.
 */
export function decodeApiVersionsResponse(buf: Uint8Array, start: number, end: number, version: number): ApiVersionsResponseBody {
  const errorCode = new Reader(buf, start, end).int16();
  const bodyVersion = errorCode === UNSUPPORTED_VERSION ? 0 : version;
  const r = readerFor('ApiVersionsResponse', API_VERSIONS, buf, start, end, bodyVersion);
  r.skip(2);
  const flexible = bodyVersion >= 3;
  const readRange = (e: Reader): ApiVersionRange => {
    const range = { apiKey: e.int16(), minVersion: e.int16(), maxVersion: e.int16() };
    if (flexible) e.taggedFields();
    return range;
  };
  const apiKeys = flexible ? r.compactArray(7, readRange) : r.array(6, readRange);
  const throttleTimeMs = bodyVersion >= 1 ? r.int32() : null;
  return { errorCode, bodyVersion, apiKeys, throttleTimeMs };
}

// ---- GetTelemetrySubscriptions (key 71, KIP-714; v1 from KIP-1313) ---------------------------------

const GET_TELEMETRY_SUBSCRIPTIONS = 71;

export interface GetTelemetrySubscriptionsRequestBody {
  /** v0 only: zero on the client's first request (the broker assigns one); KIP-1313 v1 drops it for the header's. */
  clientInstanceId: Uint8Array | null;
  tags: TaggedFieldRef[];
}

export function decodeGetTelemetrySubscriptionsRequest(
  buf: Uint8Array,
  start: number,
  end: number,
  version: number,
): GetTelemetrySubscriptionsRequestBody {
  const r = readerFor('GetTelemetrySubscriptionsRequest', GET_TELEMETRY_SUBSCRIPTIONS, buf, start, end, version);
  const clientInstanceId = version === 0 ? r.uuid() : null;
  return { clientInstanceId, tags: readTags(r) };
}

export interface GetTelemetrySubscriptionsResponseBody {
  throttleTimeMs: number;
  errorCode: number;
  /** v0 only: the ID the broker assigned when the request's was zero, else zero. Dropped in v1 (KIP-1313). */
  clientInstanceId: Uint8Array | null;
  subscriptionId: number;
  acceptedCompressionTypes: number[] | null;
  pushIntervalMs: number;
  telemetryMaxBytes: number;
  deltaTemporality: boolean;
  requestedMetrics: (string | null)[] | null;
  tags: TaggedFieldRef[];
}

export function decodeGetTelemetrySubscriptionsResponse(
  buf: Uint8Array,
  start: number,
  end: number,
  version: number,
): GetTelemetrySubscriptionsResponseBody {
  const r = readerFor('GetTelemetrySubscriptionsResponse', GET_TELEMETRY_SUBSCRIPTIONS, buf, start, end, version);
  return {
    throttleTimeMs: r.int32(),
    errorCode: r.int16(),
    clientInstanceId: version === 0 ? r.uuid() : null,
    subscriptionId: r.int32(),
    acceptedCompressionTypes: r.compactArray(1, int8),
    pushIntervalMs: r.int32(),
    telemetryMaxBytes: r.int32(),
    deltaTemporality: r.bool(),
    requestedMetrics: r.compactArray(1, compactString),
    tags: readTags(r),
  };
}

// ---- PushTelemetry (key 72, KIP-714; v1 from KIP-1313) ---------------------------------------------

const PUSH_TELEMETRY = 72;

export interface MetricsBlob {
  /** Declared size in bytes. */
  size: number;
  /** The request's CompressionType (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd). */
  compressionType: number;
  /** False when the bytes given end inside the blob (a prefix of the frame). */
  complete: boolean;
}

export interface PushTelemetryRequestBody {
  /** v0 only; KIP-1313 v1 drops it for the header's. */
  clientInstanceId: Uint8Array | null;
  subscriptionId: number;
  terminating: boolean;
  compressionType: number;
  /** The Metrics blob, described but never copied; null when null on the wire. */
  metrics: MetricsBlob | null;
  /** Null when the bytes end inside the blob. */
  tags: TaggedFieldRef[] | null;
}

/**
 * The bytes may be a prefix of the frame: then the blob's declared size is reported as is. `frameEnd`,
 * when known, is where the frame ends in `buf` (at or after `end`): a blob claiming more bytes than
 * the frame has left is a DecodeError, whether or not those bytes are in `buf`.
 */
export function decodePushTelemetryRequest(
  buf: Uint8Array,
  start: number,
  end: number,
  version: number,
  frameEnd = Infinity,
): PushTelemetryRequestBody {
  const r = readerFor('PushTelemetryRequest', PUSH_TELEMETRY, buf, start, end, version);
  const clientInstanceId = version === 0 ? r.uuid() : null;
  const subscriptionId = r.int32();
  const terminating = r.bool();
  const compressionType = r.int8();
  const sizeAt = r.pos;
  const size = r.compactBytesLength();
  const body = { clientInstanceId, subscriptionId, terminating, compressionType };
  if (size === null) return { ...body, metrics: null, tags: readTags(r) };
  if (size > frameEnd - r.pos) throw new DecodeError(`Metrics claims ${size} bytes, the frame has ${frameEnd - r.pos} left`, sizeAt);
  if (size > r.remaining) return { ...body, metrics: { size, compressionType, complete: false }, tags: null };
  r.skip(size);
  return { ...body, metrics: { size, compressionType, complete: true }, tags: readTags(r) };
}

export interface PushTelemetryResponseBody {
  throttleTimeMs: number;
  errorCode: number;
  tags: TaggedFieldRef[];
}

export function decodePushTelemetryResponse(buf: Uint8Array, start: number, end: number, version: number): PushTelemetryResponseBody {
  const r = readerFor('PushTelemetryResponse', PUSH_TELEMETRY, buf, start, end, version);
  return { throttleTimeMs: r.int32(), errorCode: r.int16(), tags: readTags(r) };
}

// ---- ConsumerGroupHeartbeat (key 68, KIP-848) -------------------------------------------------------

const CONSUMER_GROUP_HEARTBEAT = 68;

/** The leading fields of the request, the same in v0 and v1; the subscription and owned partitions are not read. */
export interface ConsumerGroupHeartbeatRequestBody {
  groupId: string | null;
  /** Generated by the client since KIP-1082; KIP-1313 suggests the client instance ID. */
  memberId: string | null;
  /** 0 to join, -1 to leave, -2 for a static member leaving temporarily. */
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  rebalanceTimeoutMs: number;
}

export function decodeConsumerGroupHeartbeatRequest(
  buf: Uint8Array,
  start: number,
  end: number,
  version: number,
): ConsumerGroupHeartbeatRequestBody {
  const r = readerFor('ConsumerGroupHeartbeatRequest', CONSUMER_GROUP_HEARTBEAT, buf, start, end, version);
  return {
    groupId: r.compactString(),
    memberId: r.compactString(),
    memberEpoch: r.int32(),
    instanceId: r.compactString(),
    rackId: r.compactString(),
    rebalanceTimeoutMs: r.int32(),
  };
}

/** The leading fields of the response; the assignment is not read. */
export interface ConsumerGroupHeartbeatResponseBody {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
}

export function decodeConsumerGroupHeartbeatResponse(
  buf: Uint8Array,
  start: number,
  end: number,
  version: number,
): ConsumerGroupHeartbeatResponseBody {
  const r = readerFor('ConsumerGroupHeartbeatResponse', CONSUMER_GROUP_HEARTBEAT, buf, start, end, version);
  return {
    throttleTimeMs: r.int32(),
    errorCode: r.int16(),
    errorMessage: r.compactString(),
    memberId: r.compactString(),
    memberEpoch: r.int32(),
    heartbeatIntervalMs: r.int32(),
  };
}

// ---- SaslHandshake (key 17, KIP-43; never flexible, KAFKA-9577) -----------------------------------------

const SASL_HANDSHAKE = 17;

export interface SaslHandshakeRequestBody {
  mechanism: string | null;
}

export function decodeSaslHandshakeRequest(buf: Uint8Array, start: number, end: number, version: number): SaslHandshakeRequestBody {
  const r = readerFor('SaslHandshakeRequest', SASL_HANDSHAKE, buf, start, end, version);
  return { mechanism: r.string() };
}

export interface SaslHandshakeResponseBody {
  errorCode: number;
  mechanisms: (string | null)[] | null;
}

export function decodeSaslHandshakeResponse(buf: Uint8Array, start: number, end: number, version: number): SaslHandshakeResponseBody {
  const r = readerFor('SaslHandshakeResponse', SASL_HANDSHAKE, buf, start, end, version);
  return { errorCode: r.int16(), mechanisms: r.array(2, string) };
}
