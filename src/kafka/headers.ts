/**
 * Kafka request and response headers, decoded by the layouts of the active protocol's RequestHeader and
 * ResponseHeader schemas (KIP-482 for the flexible versions, KIP-1313's overlay for tag 0 and header v3).
 * Each header version is compiled once into a plan of fields and tags, so no version number is tested
 * here: a header version a --kafka-specs schema adds is decoded by the same loop.
 */
import { isUtf8 } from 'node:buffer';
import { protocol, type Protocol } from './protocol.js';
import { DecodeError, Reader } from './reader.js';
import { FIXED_SIZE, inRange, layoutFor, SchemaError, type MessageSchema } from './schema/model.js';
import { EMPTY_LIST } from '../base/lists.js';
import { type HeaderProblem, type RequestHeader, type ResponseHeaderInfo, type TaggedFieldRef } from './types.js';

/** How the header decoder reads one field of a header version (compiled from the header schema). */
type FieldKind = 'int8' | 'int16' | 'int32' | 'int64' | 'uuid' | 'string' | 'compactString' | 'skip';

interface HeaderField {
  name: string;
  kind: FieldKind;
}

/** A tagged field a header version defines: a fixed-size one must be exactly `size` bytes (0: any size). */
interface HeaderTag {
  tag: number;
  name: string;
  size: number;
}

/** One header version's layout: its fields in wire order and, when flexible, its tagged fields. */
interface HeaderPlan {
  version: number;
  /** The fields after RequestApiKey, RequestApiVersion and CorrelationId (every version starts with them). */
  fields: HeaderField[];
  flexible: boolean;
  tags: HeaderTag[];
}

interface HeaderPlans {
  request: (HeaderPlan | undefined)[];
  response: (HeaderPlan | undefined)[];
  /** What kcid reads of a request whose key or version it does not know: the lowest version with ClientId. */
  unknown: HeaderPlan;
}

/** The fields every request header starts with, read by the decoder itself. */
const COMMON_REQUEST_FIELDS = ['RequestApiKey', 'RequestApiVersion', 'CorrelationId'];

function compile(m: MessageSchema, version: number, common: readonly string[]): HeaderPlan | undefined {
  const layout = layoutFor(m, version);
  if (layout === null) return undefined;
  const flexible = inRange(layout.flexibleVersions, version);
  const present = layout.fields.filter((f) => inRange(f.versions, version));
  const plain = present.filter((f) => f.tag === null || !inRange(f.taggedVersions, version));
  for (let i = 0; i < common.length; i++) {
    if (plain[i]?.name !== common[i]) throw new SchemaError(`${m.name} v${version}: field ${i} is not ${common[i]}`);
  }
  const fields: HeaderField[] = plain.slice(common.length).map((f) => {
    const p = f.isArray ? null : f.primitive;
    const fieldFlexible = flexible && f.flexibleVersions !== null && (f.flexibleVersions === undefined || inRange(f.flexibleVersions, version));
    let kind: FieldKind = 'skip';
    if (p === 'string') kind = fieldFlexible ? 'compactString' : 'string';
    else if (p === 'int8' || p === 'int16' || p === 'int32' || p === 'int64' || p === 'uuid') kind = p;
    else throw new SchemaError(`${m.name} v${version}: kcid does not read a ${f.type} header field (${f.name})`);
    return { name: f.name, kind };
  });
  const tags: HeaderTag[] = flexible
    ? present
        .filter((f) => f.tag !== null && inRange(f.taggedVersions, version))
        .map((f) => ({ tag: f.tag!, name: f.name, size: f.isArray ? 0 : (FIXED_SIZE[f.primitive ?? ''] ?? 0) }))
    : [];
  return { version, fields, flexible, tags };
}

/** The header layouts of the active protocol, compiled at first use. */
function plans(p: Protocol = protocol()): HeaderPlans {
  if (p.headerPlans !== null) return p.headerPlans as HeaderPlans;
  const req = p.schemas.requestHeader;
  const res = p.schemas.responseHeader;
  const request: (HeaderPlan | undefined)[] = [];
  for (let v = req.definedVersions.lo; v <= req.definedVersions.hi; v++) request[v] = compile(req, v, COMMON_REQUEST_FIELDS);
  const response: (HeaderPlan | undefined)[] = [];
  for (let v = res.definedVersions.lo; v <= res.definedVersions.hi; v++) response[v] = compile(res, v, ['CorrelationId']);
  const unknown = request.find((plan) => plan !== undefined && plan.fields.some((f) => f.name === CLIENT_ID));
  if (unknown === undefined) throw new SchemaError(`${req.name}: no version has a ClientId`);
  const compiled: HeaderPlans = { request, response, unknown: { ...unknown, fields: unknown.fields.slice(0, unknown.fields.findIndex((f) => f.name === CLIENT_ID) + 1), flexible: false, tags: [] } };
  p.headerPlans = compiled;
  return compiled;
}

const CLIENT_ID = 'ClientId';
const CLIENT_INSTANCE_ID = 'ClientInstanceId';

/** Other tags kept per header at most; later ones are still checked but not listed. */
export const MAX_KEPT_TAGS = 64;

export interface DecodeRequestHeaderOptions {
  /** Decode a version above the schemas with its API's newest header when the API's flexible range is open. */
  inferNewerVersions?: boolean;
  /** The protocol to decode by (default: the active one). */
  protocol?: Protocol;
  /**
   * The ClientInstanceId last decoded on this connection: an equal ID is returned as this same array
   * rather than a new copy (a client repeats its ID on every request).
   */
  lastInstanceId?: Uint8Array | null;
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
 * For an unknown key or version, headerVersion is null and decoding stops after ClientId (the lowest header
 * version that has one: every header since shares it). clientInstanceId is a copy, never a view of `buf`
 * (frame buffers are reused), and options.lastInstanceId itself when equal to it: treat it as read-only.
 */
export function decodeRequestHeader(
  buf: Uint8Array,
  start: number,
  end: number,
  isWholeFrame: boolean,
  options: DecodeRequestHeaderOptions = NO_OPTIONS,
): RequestHeader {
  const p = options.protocol ?? protocol();
  const r = scratch.reset(buf, start, end, start);
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const headerVersion = options.inferNewerVersions
    ? p.inferredRequestHeaderVersion(apiKey, apiVersion)
    : p.requestHeaderVersion(apiKey, apiVersion);
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
  const all = plans(p);
  const plan = (headerVersion === null ? undefined : all.request[headerVersion]) ?? all.unknown;
  try {
    const fields = plan.fields;
    for (let i = 0; i < fields.length; i++) readRequestField(r, fields[i]!, header);
    if (plan.flexible) readRequestTags(r, plan.tags, header, options.lastInstanceId ?? null);
    header.headerLength = r.pos - start;
  } catch (e) {
    if (!(e instanceof DecodeError) || !isWholeFrame) throw e;
    addProblem(header, 'overrun', `header overruns the ${end - start}-byte frame (${e.message})`);
    header.headerLength = end - start;
  }
  return header;
}

function readRequestField(r: Reader, field: HeaderField, header: RequestHeader): void {
  switch (field.kind) {
    case 'int8':
      r.int8();
      return;
    case 'int16':
      r.int16();
      return;
    case 'int32':
      r.int32();
      return;
    case 'int64':
      r.skip(8);
      return;
    case 'uuid': {
      const at = r.pos;
      r.skip(16);
      if (field.name === CLIENT_INSTANCE_ID) header.clientInstanceId = uuidCopy(r.buf, at, null);
      return;
    }
    case 'string':
      if (field.name === CLIENT_ID) readClientId(r, header);
      else r.string();
      return;
    case 'compactString':
      r.compactString();
      return;
    case 'skip':
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

function readRequestTags(r: Reader, known: readonly HeaderTag[], header: RequestHeader, last: Uint8Array | null): void {
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
    let spec: HeaderTag | undefined;
    for (let k = 0; k < known.length; k++) if (known[k]!.tag === tag) spec = known[k];
    if (spec === undefined) {
      if (header.otherTags.length === 0) header.otherTags = [{ tag, size }];
      else if (header.otherTags.length < MAX_KEPT_TAGS) header.otherTags.push({ tag, size } satisfies TaggedFieldRef);
      continue;
    }
    if (spec.size !== 0 && size !== spec.size) {
      addProblem(header, 'tag0-size', `tag ${tag} (${spec.name}) has ${size} bytes, expected ${spec.size}`);
      continue;
    }
    if (spec.name === CLIENT_INSTANCE_ID) header.clientInstanceId = spec.size === 16 ? uuidCopy(r.buf, at, last) : new Uint8Array(r.buf.subarray(at, at + size));
  }
}

/**
 * The 16 bytes at buf[at] as a Uint8Array of their own: `last` when it holds the same bytes, else a
 * copy (a Buffer view would cost as much as the copy, and would change as the frame buffer is reused).
 */
function uuidCopy(buf: Uint8Array, at: number, last: Uint8Array | null): Uint8Array {
  if (last !== null && last.length === 16) {
    let i = 0;
    while (i < 16 && last[i] === buf[at + i]) i++;
    if (i === 16) return last;
  }
  const id = new Uint8Array(16);
  for (let i = 0; i < 16; i++) id[i] = buf[at + i]!;
  return id;
}

/** Records a problem once per code: a hostile header cannot grow the list. */
function addProblem(header: RequestHeader, code: HeaderProblem['code'], message: string): void {
  if (header.problems.length === 0) header.problems = [{ code, message }];
  else if (!header.problems.some((p) => p.code === code)) header.problems.push({ code, message });
}

/**
 * Decodes a response header of the given version (see Protocol.responseHeaderVersion) from buf[start, end),
 * `start` being the first byte after the size prefix. Tagged fields (flexible versions) are skipped.
 * Throws DecodeError when the bytes end before the header does, or for a version the schemas do not define.
 */
export function decodeResponseHeader(buf: Uint8Array, start: number, end: number, version: number, p: Protocol = protocol()): ResponseHeaderInfo {
  const plan = plans(p).response[version];
  if (plan === undefined) throw new DecodeError(`unknown response header version ${version}`, start);
  const r = scratch.reset(buf, start, end, start);
  const correlationId = r.int32();
  for (const f of plan.fields) readRequestField(r, f, DISCARD);
  if (plan.flexible) r.taggedFields();
  return { correlationId, headerVersion: version, headerLength: r.pos - start };
}

/**
 * The length of the response header of this version at buf[start, end): what decodeResponseHeader(...)
 * .headerLength gives, read without building its result when the header has no fields but the
 * correlation id and no tagged fields (every response header Kafka defines, as sent). Throws as it does.
 */
export function responseHeaderLength(buf: Uint8Array, start: number, end: number, version: number, p: Protocol = protocol()): number {
  const plan = plans(p).response[version];
  if (plan !== undefined && plan.fields.length === 0) {
    if (!plan.flexible && end - start >= 4) return 4;
    if (plan.flexible && end - start >= 5 && buf[start + 4] === 0) return 5;
  }
  return decodeResponseHeader(buf, start, end, version, p).headerLength;
}

/** Bytes of a response header of this version when its tagged fields are empty (the usual case). */
export function responseHeaderBytes(version: number, p: Protocol = protocol()): number {
  const plan = plans(p).response[version];
  if (plan === undefined) return 4;
  let n = 4;
  for (const f of plan.fields) n += FIXED_SIZE[f.kind] ?? 0;
  return plan.flexible ? n + 1 : n;
}

/** A header to read response fields into and forget. */
const DISCARD: RequestHeader = {
  apiKey: 0, apiVersion: 0, correlationId: 0, headerVersion: null, clientId: null, clientIdPresent: false,
  clientInstanceId: null, otherTags: [], headerLength: 0, problems: [],
};
