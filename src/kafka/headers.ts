/**
 * Kafka request and response headers (RequestHeader.json / ResponseHeader.json, KIP-482, KIP-1313).
 *
 * The layouts are data: KIP-1313 is still moving (a later revision discusses a request header v3), so a new
 * header version should be one more table entry, not new decoding code.
 */
import { isUtf8 } from 'node:buffer';
import { apiInfo, isFlexible, isValidVersion } from './apis.js';
import { DecodeError, Reader } from './reader.js';
import { EMPTY_LIST } from '../base/lists.js';
import { type HeaderProblem, type RequestHeader, type ResponseHeaderInfo, type TaggedFieldRef } from './types.js';

export type HeaderFieldKind = 'int16' | 'int32' | 'nullableString' | 'uuid' | 'taggedFields';

/** A tagged field the header defines: its value must be exactly `size` bytes. */
export interface HeaderTagSpec {
  tag: number;
  name: string;
  size: number;
}

export interface HeaderFieldSpec {
  name: string;
  kind: HeaderFieldKind;
  /** For 'taggedFields': the tags this header version defines. */
  tags?: readonly HeaderTagSpec[];
}

const REQUEST_API_KEY: HeaderFieldSpec = { name: 'RequestApiKey', kind: 'int16' };
const REQUEST_API_VERSION: HeaderFieldSpec = { name: 'RequestApiVersion', kind: 'int16' };
const CORRELATION_ID: HeaderFieldSpec = { name: 'CorrelationId', kind: 'int32' };
/**
 * Always an int16-length NULLABLE_STRING, never compact, even in the flexible header v2
 * ("flexibleVersions": "none"): a broker must read the header of an ApiVersions request of any version,
 * newer than it knows, to answer with the versions it supports.
 */
const CLIENT_ID: HeaderFieldSpec = { name: 'ClientId', kind: 'nullableString' };
/** KIP-1313: tag 0 of the v2 request header is the client instance ID, a 16-byte UUID. */
const CLIENT_INSTANCE_ID_TAG: HeaderTagSpec = { tag: 0, name: 'ClientInstanceId', size: 16 };

/**
 * Request header layouts by header version. Every layout starts with RequestApiKey, RequestApiVersion and
 * CorrelationId (the version is chosen from the first two), and fields named 'ClientId' and 'ClientInstanceId'
 * (as a field or a tag) land in the decoded header.
 */
export const REQUEST_HEADER_LAYOUTS: ReadonlyMap<number, readonly HeaderFieldSpec[]> = new Map([
  [0, [REQUEST_API_KEY, REQUEST_API_VERSION, CORRELATION_ID]],
  [1, [REQUEST_API_KEY, REQUEST_API_VERSION, CORRELATION_ID, CLIENT_ID]],
  [
    2,
    [
      REQUEST_API_KEY,
      REQUEST_API_VERSION,
      CORRELATION_ID,
      CLIENT_ID,
      { name: 'TaggedFields', kind: 'taggedFields', tags: [CLIENT_INSTANCE_ID_TAG] },
    ],
  ],
]);

/** Response header layouts by header version: v1 (flexible) adds tagged fields, none defined. */
export const RESPONSE_HEADER_LAYOUTS: ReadonlyMap<number, readonly HeaderFieldSpec[]> = new Map([
  [0, [CORRELATION_ID]],
  [1, [CORRELATION_ID, { name: 'TaggedFields', kind: 'taggedFields', tags: [] }]],
]);

/** Fields every request header layout starts with (key, version, correlation id): 8 bytes. */
const COMMON_PREFIX_FIELDS = 3;

/**
 * What kcid reads of a request whose key or version it does not know: the fields every known header version
 * from 1 on shares. Only ControlledShutdown v0 ever used header v0.
 */
const UNKNOWN_API_LAYOUT = REQUEST_HEADER_LAYOUTS.get(1)!;

/** Other tags kept per header at most; later ones are still checked but not listed. */
export const MAX_KEPT_TAGS = 64;

const CONTROLLED_SHUTDOWN = 7;
const API_VERSIONS = 18;

/** Request header version (Kafka's ApiMessageTypeGenerator), or null for an unknown key or version. */
export function requestHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 | 2 | null {
  if (!isValidVersion(apiKey, apiVersion)) return null;
  // ControlledShutdown v0 predates ClientId in the header.
  if (apiKey === CONTROLLED_SHUTDOWN && apiVersion === 0) return 0;
  return isFlexible(apiKey, apiVersion) ? 2 : 1;
}

/** Response header version (Kafka's ApiMessageTypeGenerator), or null for an unknown key or version. */
export function responseHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 | null {
  if (!isValidVersion(apiKey, apiVersion)) return null;
  // KIP-511: the ApiVersions response header is always v0, so a client that sent a version the broker does
  // not support can still read the broker's answer.
  if (apiKey === API_VERSIONS) return 0;
  return isFlexible(apiKey, apiVersion) ? 1 : 0;
}

/**
 * Like requestHeaderVersion, but a version above kcid's table for an API whose flexible versions are open
 * ('N+') is taken as flexible, hence header v2: Kafka never makes a flexible API inflexible again.
 */
function inferredRequestHeaderVersion(apiKey: number, apiVersion: number): 0 | 1 | 2 | null {
  const known = requestHeaderVersion(apiKey, apiVersion);
  if (known !== null) return known;
  const api = apiInfo(apiKey);
  if (api === undefined || api.firstFlexibleVersion === null || apiVersion <= api.maxVersion) return null;
  return 2;
}

export interface DecodeRequestHeaderOptions {
  /** Decode a version above kcid's table as flexible (header v2) when the API's flexible range is open. */
  inferNewerVersions?: boolean;
}

const NO_OPTIONS: DecodeRequestHeaderOptions = {};
const scratch = new Reader(new Uint8Array(0));

/**
 * Decodes a request header from buf[start, end), `start` being the first byte after the frame's size prefix.
 *
 * `isWholeFrame`: `end` is the frame's end. Then a length claiming bytes beyond `end` is an 'overrun'
 * problem (the header is returned with headerLength = end - start: no body can be located). Otherwise the
 * bytes are only a prefix and running past `end` throws DecodeError (ask for more bytes). Fewer than the 8
 * bytes of key, version and correlation id always throw.
 *
 * For an unknown key or version, headerVersion is null and decoding stops after ClientId (shared by every
 * header version from 1 on). Byte fields (clientInstanceId) alias `buf`: copy them to keep them.
 */
export function decodeRequestHeader(
  buf: Uint8Array,
  start: number,
  end: number,
  isWholeFrame: boolean,
  options: DecodeRequestHeaderOptions = NO_OPTIONS,
): RequestHeader {
  const r = scratch.reset(buf, start, end);
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const headerVersion = options.inferNewerVersions
    ? inferredRequestHeaderVersion(apiKey, apiVersion)
    : requestHeaderVersion(apiKey, apiVersion);
  const header: RequestHeader = {
    apiKey,
    apiVersion,
    correlationId,
    headerVersion,
    clientId: null,
    clientIdPresent: false,
    clientInstanceId: null,
    otherTags: EMPTY_LIST,
    headerLength: 0,
    problems: EMPTY_LIST,
  };
  const layout = headerVersion === null ? UNKNOWN_API_LAYOUT : REQUEST_HEADER_LAYOUTS.get(headerVersion)!;
  try {
    for (let i = COMMON_PREFIX_FIELDS; i < layout.length; i++) readRequestField(r, layout[i]!, header);
    header.headerLength = r.pos - start;
  } catch (e) {
    if (!(e instanceof DecodeError) || !isWholeFrame) throw e;
    addProblem(header, 'overrun', `header overruns the ${end - start}-byte frame (${e.message})`);
    header.headerLength = end - start;
  }
  return header;
}

function readRequestField(r: Reader, field: HeaderFieldSpec, header: RequestHeader): void {
  switch (field.kind) {
    case 'int16':
      r.int16();
      return;
    case 'int32':
      r.int32();
      return;
    case 'uuid': {
      const value = r.uuid();
      if (field.name === CLIENT_INSTANCE_ID_TAG.name) header.clientInstanceId = value;
      return;
    }
    case 'nullableString':
      if (field.name === CLIENT_ID.name) readClientId(r, header);
      else r.string();
      return;
    case 'taggedFields':
      readRequestTags(r, field.tags ?? [], header);
      return;
  }
}

function readClientId(r: Reader, header: RequestHeader): void {
  const lengthAt = r.pos;
  header.clientId = r.string();
  header.clientIdPresent = true;
  if (header.clientId === null) {
    // Kafka's generated reader takes any negative length as null; writers only send -1.
    const length = (((r.buf[lengthAt]! << 8) | r.buf[lengthAt + 1]!) << 16) >> 16;
    if (length !== -1) addProblem(header, 'bad-client-id', `ClientId length ${length} (Kafka reads it as null)`);
  } else if (!r.lastTextAscii && !isUtf8(r.buf.subarray(lengthAt + 2, r.pos))) {
    // Kafka decodes with new String(bytes, UTF_8): the broker accepts it and sees U+FFFD instead.
    addProblem(header, 'bad-client-id', 'ClientId is not valid UTF-8');
  }
}

function readRequestTags(r: Reader, known: readonly HeaderTagSpec[], header: RequestHeader): void {
  // The tagged-field loop of Reader.taggedFields, written out: no callback made per request.
  let previous = -1;
  let seenTag0 = false;
  const count = r.uvarint();
  for (let i = 0; i < count; i++) {
    const tag = r.uvarint();
    const size = r.uvarint();
    r.need(size);
    const at = r.pos;
    r.pos = at + size;
    // KIP-482: tagged fields are sent in ascending tag order, each tag at most once.
    if (tag === previous || (tag === 0 && seenTag0)) {
      addProblem(header, 'tag-repeated', `tag ${tag} appears more than once`);
    }
    if (tag < previous) addProblem(header, 'tags-not-ascending', `tag ${tag} follows tag ${previous}`);
    previous = tag;
    if (tag === 0) seenTag0 = true;
    let spec: HeaderTagSpec | undefined;
    for (let k = 0; k < known.length; k++) if (known[k]!.tag === tag) spec = known[k];
    if (spec === undefined) {
      if (header.otherTags.length === 0) header.otherTags = [{ tag, size }];
      else if (header.otherTags.length < MAX_KEPT_TAGS) header.otherTags.push({ tag, size } satisfies TaggedFieldRef);
      continue;
    }
    if (size !== spec.size) {
      addProblem(header, 'tag0-size', `tag ${tag} (${spec.name}) has ${size} bytes, expected ${spec.size}`);
      continue;
    }
    if (spec.name === CLIENT_INSTANCE_ID_TAG.name) header.clientInstanceId = r.buf.subarray(at, at + size);
  }
}

/** Records a problem once per code: a hostile header cannot grow the list. */
function addProblem(header: RequestHeader, code: HeaderProblem['code'], message: string): void {
  if (header.problems.length === 0) header.problems = [{ code, message }];
  else if (!header.problems.some((p) => p.code === code)) header.problems.push({ code, message });
}

/**
 * Decodes a response header of the given version (see responseHeaderVersion) from buf[start, end), `start`
 * being the first byte after the size prefix. Tagged fields (v1) are skipped. Throws DecodeError when the
 * bytes end before the header does.
 */
export function decodeResponseHeader(buf: Uint8Array, start: number, end: number, version: 0 | 1): ResponseHeaderInfo {
  const layout = RESPONSE_HEADER_LAYOUTS.get(version);
  if (layout === undefined) throw new DecodeError(`unknown response header version ${version}`, start);
  const r = scratch.reset(buf, start, end);
  let correlationId = 0;
  for (const field of layout) {
    if (field.kind === 'int32') correlationId = r.int32();
    else if (field.kind === 'taggedFields') r.taggedFields();
  }
  return { correlationId, headerVersion: version, headerLength: r.pos - start };
}
