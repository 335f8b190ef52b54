/**
 * The bodies kcid reads, as one tagged union per direction, and how much of each frame they need.
 * Everything kept here outlives the frame's prefix buffer, so byte fields (UUIDs) are copied.
 */
import { apiName, errorCodeOffset } from './apis.js';
import {
  decodeApiVersionsRequest,
  decodeConsumerGroupHeartbeatRequest,
  decodeConsumerGroupHeartbeatResponse,
  decodeGetTelemetrySubscriptionsRequest,
  decodeGetTelemetrySubscriptionsResponse,
  decodePushTelemetryRequest,
  decodePushTelemetryResponse,
  decodeSaslHandshakeRequest,
  decodeSaslHandshakeResponse,
} from './bodies.js';
import { decodeResponseHeader } from './headers.js';
import { Reader } from './reader.js';

/** API keys kcid treats specially. */
export const API = {
  Produce: 0,
  ControlledShutdown: 7,
  SaslHandshake: 17,
  ApiVersions: 18,
  ConsumerGroupHeartbeat: 68,
  GetTelemetrySubscriptions: 71,
  PushTelemetry: 72,
} as const;

/** "Produce v9". */
export function apiLabel(apiKey: number, apiVersion: number): string {
  return `${apiName(apiKey)} v${apiVersion}`;
}

export type RequestBody =
  | { kind: 'Produce'; acks: number }
  | { kind: 'ApiVersions'; softwareName: string | null; softwareVersion: string | null }
  | { kind: 'GetTelemetrySubscriptions'; clientInstanceId: Uint8Array | null }
  | {
      kind: 'PushTelemetry';
      clientInstanceId: Uint8Array | null;
      subscriptionId: number;
      terminating: boolean;
      compressionType: number;
      /** Declared size of the Metrics blob (never copied), null when null. */
      metricsSize: number | null;
    }
  | { kind: 'ConsumerGroupHeartbeat'; groupId: string | null; memberId: string | null; memberEpoch: number }
  | { kind: 'SaslHandshake'; mechanism: string | null };

export type ResponseBody =
  | {
      kind: 'GetTelemetrySubscriptions';
      throttleTimeMs: number;
      errorCode: number;
      clientInstanceId: Uint8Array | null;
      subscriptionId: number;
      acceptedCompressionTypes: number[];
      pushIntervalMs: number;
      telemetryMaxBytes: number;
      deltaTemporality: boolean;
      requestedMetrics: (string | null)[];
    }
  | { kind: 'PushTelemetry'; throttleTimeMs: number; errorCode: number }
  | { kind: 'ConsumerGroupHeartbeat'; errorCode: number; memberId: string | null; memberEpoch: number }
  | { kind: 'SaslHandshake'; errorCode: number; mechanisms: (string | null)[] };

/** Bodies are small; a frame prefix this long holds any sane one. */
const BODY_PREFIX = 4096;
/**
 * PushTelemetry's fields before its Metrics blob: ClientInstanceId (v0, 16), SubscriptionId (4),
 * Terminating (1), CompressionType (1) and the blob's length (an unsigned varint, at most 5). The
 * blob (compressed OTLP metrics, kilobytes every push interval) is sized, never copied.
 */
const PUSH_TELEMETRY_FIELDS = 27;

/** How many bytes of a request frame kcid wants, given where its header ends. */
export function bodyPrefixWanted(apiKey: number, headerLength: number, size: number): number {
  switch (apiKey) {
    case API.Produce:
      // transactional_id (up to 32 KiB, usually null) then acks.
      return Math.min(size, headerLength + 64);
    case API.PushTelemetry:
      return Math.min(size, headerLength + PUSH_TELEMETRY_FIELDS);
    case API.ApiVersions:
    case API.GetTelemetrySubscriptions:
    case API.ConsumerGroupHeartbeat:
    case API.SaslHandshake:
      return Math.min(size, headerLength + BODY_PREFIX);
    default:
      return Math.min(size, headerLength);
  }
}

/** A copy that owns its bytes (Buffer#slice would return a view of the reused prefix buffer). */
const copy = (u: Uint8Array | null): Uint8Array | null => (u === null ? null : new Uint8Array(u));

/**
 * Decodes the body of a request kcid reads; null for the others. `buf[start, end)` is the body or a
 * prefix of it; the frame ends at `frameEnd` (at or after `end`). Throws DecodeError for a body that
 * does not parse.
 */
export function decodeRequestBody(apiKey: number, apiVersion: number, buf: Buffer, start: number, end: number, frameEnd: number): RequestBody | null {
  switch (apiKey) {
    case API.Produce:
      return { kind: 'Produce', acks: produceAcks(buf, start, end, apiVersion) };
    case API.ApiVersions: {
      const b = decodeApiVersionsRequest(buf, start, end, apiVersion);
      return { kind: 'ApiVersions', softwareName: b.clientSoftwareName, softwareVersion: b.clientSoftwareVersion };
    }
    case API.GetTelemetrySubscriptions: {
      const b = decodeGetTelemetrySubscriptionsRequest(buf, start, end, apiVersion);
      return { kind: 'GetTelemetrySubscriptions', clientInstanceId: copy(b.clientInstanceId) };
    }
    case API.PushTelemetry: {
      const b = decodePushTelemetryRequest(buf, start, end, apiVersion, frameEnd);
      return {
        kind: 'PushTelemetry',
        clientInstanceId: copy(b.clientInstanceId),
        subscriptionId: b.subscriptionId,
        terminating: b.terminating,
        compressionType: b.compressionType,
        metricsSize: b.metrics === null ? null : b.metrics.size,
      };
    }
    case API.ConsumerGroupHeartbeat: {
      const b = decodeConsumerGroupHeartbeatRequest(buf, start, end, apiVersion);
      return { kind: 'ConsumerGroupHeartbeat', groupId: b.groupId, memberId: b.memberId, memberEpoch: b.memberEpoch };
    }
    case API.SaslHandshake:
      return { kind: 'SaslHandshake', mechanism: decodeSaslHandshakeRequest(buf, start, end, apiVersion).mechanism };
    default:
      return null;
  }
}

/** Produce's acks: after transactional_id from v3 on (compact from v9, KIP-482). acks=0 gets no response. */
function produceAcks(buf: Buffer, start: number, end: number, version: number): number {
  const r = new Reader(buf, start, end);
  if (version >= 9) r.compactString();
  else if (version >= 3) r.string();
  return r.int16();
}

/** How many bytes of a response frame kcid wants: the header, then the error code or the body it reads. */
export function responsePrefixWanted(apiKey: number, apiVersion: number, headerVersion: 0 | 1, size: number): number {
  // Response header v1 is the correlation id plus tagged fields, almost always a single 0 byte.
  const header = headerVersion === 0 ? 4 : 5;
  switch (apiKey) {
    case API.GetTelemetrySubscriptions:
    case API.PushTelemetry:
    case API.ConsumerGroupHeartbeat:
    case API.SaslHandshake:
      return Math.min(size, header + BODY_PREFIX);
    case API.ApiVersions:
      return Math.min(size, header + 2);
    default: {
      const at = errorCodeOffset(apiKey, apiVersion);
      return Math.min(size, header + (at === null ? 0 : at + 2));
    }
  }
}

export interface DecodedResponse {
  errorCode: number | null;
  body: ResponseBody | null;
}

/** Decodes a response's header, its top-level ErrorCode where the layout allows, and the bodies kcid reads. */
export function decodeResponseBody(
  apiKey: number,
  apiVersion: number,
  headerVersion: 0 | 1,
  buf: Buffer,
  end: number,
  _whole: boolean,
): DecodedResponse {
  const start = decodeResponseHeader(buf, 0, end, headerVersion).headerLength;
  switch (apiKey) {
    case API.ApiVersions:
      // KIP-511: the ErrorCode leads every version, and an UNSUPPORTED_VERSION answer is always v0.
      return { errorCode: new Reader(buf, start, end).int16(), body: null };
    case API.GetTelemetrySubscriptions: {
      const b = decodeGetTelemetrySubscriptionsResponse(buf, start, end, apiVersion);
      return {
        errorCode: b.errorCode,
        body: {
          kind: 'GetTelemetrySubscriptions',
          throttleTimeMs: b.throttleTimeMs,
          errorCode: b.errorCode,
          clientInstanceId: copy(b.clientInstanceId),
          subscriptionId: b.subscriptionId,
          acceptedCompressionTypes: b.acceptedCompressionTypes ?? [],
          pushIntervalMs: b.pushIntervalMs,
          telemetryMaxBytes: b.telemetryMaxBytes,
          deltaTemporality: b.deltaTemporality,
          requestedMetrics: b.requestedMetrics ?? [],
        },
      };
    }
    case API.PushTelemetry: {
      const b = decodePushTelemetryResponse(buf, start, end, apiVersion);
      return { errorCode: b.errorCode, body: { kind: 'PushTelemetry', throttleTimeMs: b.throttleTimeMs, errorCode: b.errorCode } };
    }
    case API.ConsumerGroupHeartbeat: {
      const b = decodeConsumerGroupHeartbeatResponse(buf, start, end, apiVersion);
      return { errorCode: b.errorCode, body: { kind: 'ConsumerGroupHeartbeat', errorCode: b.errorCode, memberId: b.memberId, memberEpoch: b.memberEpoch } };
    }
    case API.SaslHandshake: {
      const b = decodeSaslHandshakeResponse(buf, start, end, apiVersion);
      return { errorCode: b.errorCode, body: { kind: 'SaslHandshake', errorCode: b.errorCode, mechanisms: b.mechanisms ?? [] } };
    }
    default: {
      const at = errorCodeOffset(apiKey, apiVersion);
      if (at === null || start + at + 2 > end) return { errorCode: null, body: null };
      return { errorCode: buf.readInt16BE(start + at), body: null };
    }
  }
}
