/**
 * Request and response bodies, decoded by the schema interpreter (schema/interpreter.ts) from the
 * bounded prefix of each frame the framer keeps.
 *
 * Two modes. `kcid analyze` (and the other commands) decode only what the rules and reports read: a
 * field selection per API ({@link REQUEST_FIELDS}, {@link RESPONSE_FIELDS}, and every ErrorCode a
 * response version carries, found in its schema), so most requests cost no body decoding at all and
 * Produce costs its TransactionalId and Acks. `kcid requests --bodies` in a table decodes every field
 * (its NDJSON writes bodies from the wire instead: schema/wire-json.ts, and falls back here). Either way
 * records fields are sized, never decoded, and a frame larger than the prefix kept is decoded as far
 * as the prefix goes (the result says it is incomplete).
 */
import { BodyError, compileDecoder, runDecoder, type Decoded, type Decoder, type Struct } from './schema/interpreter.js';
import { errorScanPlan, type ErrorScanPlan } from './schema/scan.js';
import { FIXED_SIZE, inRange, layoutFor, type FieldSchema, type MessageSchema } from './schema/model.js';
import { API_KEY, protocol, type Protocol } from './protocol.js';
import { EMPTY_LIST } from '../base/lists.js';

export { BodyError };

/** A group member's identity in the heartbeats of the group protocols whose member ID the client chooses. */
const GROUP_MEMBER = ['GroupId', 'MemberId', 'MemberEpoch'];

/** What the rules and reports read of each API's request (by the schema's field names). */
export const REQUEST_FIELDS: ReadonlyMap<number, readonly string[]> = new Map([
  // acks=0: no response will come.
  [API_KEY.Produce, ['Acks']],
  [API_KEY.ApiVersions, ['ClientSoftwareName', 'ClientSoftwareVersion']],
  [API_KEY.GetTelemetrySubscriptions, ['ClientInstanceId']],
  // Everything before the Metrics blob, which is sized (telemetry-frame.ts), never read here.
  [API_KEY.PushTelemetry, ['ClientInstanceId', 'SubscriptionId', 'Terminating', 'CompressionType']],
  [API_KEY.ConsumerGroupHeartbeat, GROUP_MEMBER],
  [API_KEY.ShareGroupHeartbeat, GROUP_MEMBER],
  [API_KEY.StreamsGroupHeartbeat, GROUP_MEMBER],
  [API_KEY.SaslHandshake, ['Mechanism']],
]);

/** What they read of responses, besides every ErrorCode. */
export const RESPONSE_FIELDS: ReadonlyMap<number, readonly string[]> = new Map([
  [
    API_KEY.GetTelemetrySubscriptions,
    ['ThrottleTimeMs', 'ClientInstanceId', 'SubscriptionId', 'AcceptedCompressionTypes', 'PushIntervalMs', 'TelemetryMaxBytes', 'DeltaTemporality', 'RequestedMetrics'],
  ],
  [API_KEY.ConsumerGroupHeartbeat, ['MemberId', 'MemberEpoch']],
  [API_KEY.ShareGroupHeartbeat, ['MemberId', 'MemberEpoch']],
  [API_KEY.StreamsGroupHeartbeat, ['MemberId', 'MemberEpoch']],
  [API_KEY.SaslHandshake, ['Mechanisms']],
  // Read to its last field, once per connection: a body that fails as the version sent is read as v0
  // (decodeBody), and one that ends before ThrottleTimeMs is seen (short-response-tolerated).
  [API_KEY.ApiVersions, ['ThrottleTimeMs']],
]);

/** The paths of every ErrorCode field of a message version ("Responses.PartitionResponses.ErrorCode"). */
export function errorCodePaths(m: MessageSchema, version: number): string[] {
  const layout = layoutFor(m, version);
  const out: string[] = [];
  const walk = (fields: readonly FieldSchema[], prefix: string): void => {
    for (const f of fields) {
      if (!inRange(f.versions, version)) continue;
      if (f.name === 'ErrorCode' && f.primitive === 'int16') out.push(prefix + f.name);
      else if (f.struct !== null) walk(f.struct.fields, `${prefix}${f.name}.`);
    }
  };
  if (layout !== null) walk(layout.fields, '');
  return out;
}

/**
 * Byte offset of a message version's top-level ErrorCode from the start of its body, read from the
 * schema: the sum of the fixed-size fields before it (ThrottleTimeMs, ...). Null when the version has
 * none, or a field of variable size (string, array, varint) comes before it.
 */
export function topErrorCodeOffset(m: MessageSchema, version: number): number | null {
  const layout = layoutFor(m, version);
  if (layout === null) return null;
  let at = 0;
  for (const f of layout.fields) {
    if (!inRange(f.versions, version) || (f.tag !== null && inRange(f.taggedVersions, version))) continue;
    if (f.name === 'ErrorCode' && f.primitive === 'int16' && !f.isArray) return at;
    const size = f.isArray || f.primitive === null ? undefined : FIXED_SIZE[f.primitive];
    if (size === undefined) return null;
    at += size;
  }
  return null;
}

/** Decoders of one protocol, compiled at first use per key and version. */
interface BodyPlans {
  request: Map<number, (Decoder | null)[]>;
  response: Map<number, (Decoder | null)[]>;
  fullRequest: Map<number, (Decoder | null)[]>;
  fullResponse: Map<number, (Decoder | null)[]>;
  scan: Map<number, (ErrorScanPlan | null)[]>;
}

function plans(p: Protocol): BodyPlans {
  if (p.bodyPlans === null) p.bodyPlans = { request: new Map(), response: new Map(), fullRequest: new Map(), fullResponse: new Map(), scan: new Map() } satisfies BodyPlans;
  return p.bodyPlans as BodyPlans;
}

/**
 * The error-code scan (schema/scan.ts) of a response version whose only fields kcid reads, in analyze's
 * selective mode, are its ErrorCodes: most responses. Null when kcid reads more of it (RESPONSE_FIELDS),
 * nothing, or the scan cannot read it: then the interpreter decodes it.
 */
export function errorScanFor(key: number, version: number, p: Protocol = protocol()): ErrorScanPlan | null {
  const byKey = plans(p).scan;
  const known = byKey.get(key)?.[version];
  if (known !== undefined) return known;
  // readsBody is true only for versions the schemas define: only those are cached.
  const api = p.api(key);
  if (api === undefined || !readsBody('response', key, version, false, p)) return null;
  let byVersion = byKey.get(key);
  if (byVersion === undefined) byKey.set(key, (byVersion = []));
  const plan = RESPONSE_FIELDS.has(key) ? null : errorScanPlan(api.response, version);
  byVersion[version] = plan;
  return plan;
}

/** The decoder of a request or response version: selective (null when nothing is read) or full. */
function decoder(p: Protocol, kind: 'request' | 'response', key: number, version: number, full: boolean): Decoder | null {
  const all = plans(p);
  const byKey = full ? (kind === 'request' ? all.fullRequest : all.fullResponse) : kind === 'request' ? all.request : all.response;
  const known = byKey.get(key)?.[version];
  if (known !== undefined) return known;
  const api = p.api(key);
  // Only what the schemas define is cached: a capture may name any key and version (65,536 of each).
  if (api === undefined || !p.isDefined(key, version) || version >= 0x7fff) return null;
  let byVersion = byKey.get(key);
  if (byVersion === undefined) byKey.set(key, (byVersion = []));
  const m = kind === 'request' ? api.request : api.response;
  const context = `${api.name} v${version} ${kind}`;
  // Responses: every ErrorCode is tapped as the decoder skips past it (only the top-level one is built).
  const tapErrorCodes = kind === 'response' && errorCodePaths(m, version).length > 0;
  let d: Decoder | null;
  if (full) d = compileDecoder(m, version, { tapErrorCodes }, context);
  else {
    const select = kind === 'request' ? [...(REQUEST_FIELDS.get(key) ?? [])] : [...(RESPONSE_FIELDS.get(key) ?? [])];
    if (kind === 'response' && p.bodyHasField('response', key, version, 'ErrorCode')) select.unshift('ErrorCode');
    d = select.length === 0 && !tapErrorCodes ? null : compileDecoder(m, version, { select, tapErrorCodes }, context);
  }
  byVersion[version] = d;
  return d;
}

/** Does kcid read anything of this body (in analyze's selective mode)? */
export function readsBody(kind: 'request' | 'response', key: number, version: number, full: boolean, p: Protocol = protocol()): boolean {
  return decoder(p, kind, key, version, full) !== null;
}

export interface DecodedBody {
  body: Struct;
  /** Responses: every non-zero ErrorCode, top level first, then per topic, partition, group (wire order). */
  errorCodes: readonly number[];
  /** False when the prefix kept ended before the body did. */
  complete: boolean;
  /** Where the decoder stopped (incomplete bodies), else null. */
  stoppedAt: string | null;
  /** An ApiVersions response read as v0 after the version sent failed: why, and what was left over; else null. */
  fallback: string | null;
  /** ApiVersions responses: bytes left in the frame after the body as read (after the fallback too); else 0. */
  leftover: number;
}

/**
 * Decodes a request or response body from buf[start, end), the frame ending at `frameEnd` (at or after
 * `end`). Null when kcid reads nothing of it (selective mode) or the version is not defined. Throws
 * BodyError for a body that does not parse ("Produce v11 request: TopicData[0]...: length ... overruns
 * the frame by 12 bytes").
 */
export function decodeBody(
  kind: 'request' | 'response',
  key: number,
  version: number,
  full: boolean,
  buf: Uint8Array,
  start: number,
  end: number,
  frameEnd: number,
  p: Protocol = protocol(),
): DecodedBody | null {
  const d = decoder(p, kind, key, version, full);
  if (d === null) return null;
  let r: Decoded;
  let fallback: string | null = null;
  try {
    r = runDecoder(d, buf, start, end, frameEnd);
  } catch (e) {
    // KIP-511: a broker answers an ApiVersions version it does not support with UNSUPPORTED_VERSION in a
    // v0 body. Kafka's client (ApiVersionsResponse.parse) reads the response as the version it sent and,
    // only when that fails, again as v0; a reading that works stands, whatever its ErrorCode.
    const lowest = p.api(key)?.definedVersions.lo;
    // An ApiVersions v1+ body that ends just before ThrottleTimeMs is a short body of the version sent
    // (kafkajs reads it so; short-response-tolerated), not a v0 answer.
    if (!(e instanceof BodyError) || kind !== 'response' || key !== API_KEY.ApiVersions || lowest === undefined || lowest === version) throw e;
    if (toleratedShortBody(key, version, e, frameEnd) !== null) throw e;
    const v0 = decoder(p, kind, key, lowest, full);
    if (v0 === null) throw e;
    r = runDecoder(v0, buf, start, end, frameEnd);
    fallback = `read as v${lowest}, as Kafka's client does, after the v${version} reading failed (${e.path === '' ? '' : `${e.path}: `}${e.problem})`;
    // A selective decode stops after its last field: what is left over is measured by reading all of it.
    const left = r.complete ? leftover(p, kind, key, lowest, full, r, buf, start, end, frameEnd) : 0;
    if (left > 0) fallback += `, leaving ${left} byte${left === 1 ? '' : 's'} over`;
    return { body: r.value, errorCodes: r.errorCodes ?? EMPTY_LIST, complete: r.complete, stoppedAt: r.stoppedAt, fallback, leftover: left };
  }
  // An ApiVersions body that leaves bytes over was perhaps not written as the version asked (tshark flags them too).
  const left = kind === 'response' && key === API_KEY.ApiVersions && r.complete ? leftover(p, kind, key, version, full, r, buf, start, end, frameEnd) : 0;
  return { body: r.value, errorCodes: r.errorCodes ?? EMPTY_LIST, complete: r.complete, stoppedAt: r.stoppedAt, fallback, leftover: left };
}

/** Bytes after the body that a complete reading `r` leaves in the frame (a selective one is read again in full). */
function leftover(p: Protocol, kind: 'request' | 'response', key: number, version: number, full: boolean, r: Decoded, buf: Uint8Array, start: number, end: number, frameEnd: number): number {
  if (full) return r.trailing;
  const all = decoder(p, kind, key, version, true);
  if (all === null || end < frameEnd) return 0;
  try {
    return runDecoder(all, buf, start, end, frameEnd).trailing;
  } catch {
    return 0;
  }
}


/**
 * Responses that end exactly before a last field, as a known client accepts them (the reason, for the
 * `short-response-tolerated` rule): key, the first version with that field, the field, who sends and who reads them.
 */
const TOLERATED_SHORT: readonly { key: number; from: number; field: string; why: string }[] = [
  { key: API_KEY.ApiVersions, from: 1, field: 'ThrottleTimeMs', why: 'as old brokers send it; kafkajs (apiVersions v1 response.js) reads ThrottleTimeMs only when four bytes are left, else takes 0' },
  { key: API_KEY.LeaveGroup, from: 3, field: 'Members', why: "as librdkafka's mock cluster sends it; librdkafka reads only ThrottleTimeMs and ErrorCode" },
];

/** Why a known client accepts this short body (the BodyError `e` of a response ending at `frameEnd`), or null. */
export function toleratedShortBody(key: number, version: number, e: { readonly offset: number; readonly path: string }, frameEnd: number): string | null {
  if (e.offset !== frameEnd) return null;
  for (const t of TOLERATED_SHORT) if (t.key === key && version >= t.from && e.path === t.field) return `it ends before ${t.field}, ${t.why}`;
  return null;
}

/**
 * Where a body broke, in `kcid show`'s words: "malformed at offset 14: ApiVersions v1 response: ThrottleTimeMs:
 * needs 4 bytes, the frame has 0 left", the offset from the message's first byte (its size prefix) at `messageStart`.
 */
export function bodyBreak(e: BodyError, messageStart: number): string {
  return `malformed at offset ${e.offset - messageStart}: ${e.message}`;
}
