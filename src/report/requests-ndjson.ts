/**
 * `kcid requests --format ndjson`: one JSON object per row, written straight into the output's bytes
 * (base/byte-text.ts). The keys are literals in a fixed order (the order of {@link RequestRow}'s
 * fields, as JSON.stringify of requestJson(row) would write them) and each value is escaped as
 * safeJson escapes it (writeJsonString: JSON.stringify's escapes, plus \u escapes for what a
 * terminal would act on), so a line is byte for byte what safeJson(requestJson(row)) writes
 * (test/requests-ndjson.test.ts holds it there), without the object copied and serialised, nor a
 * string made, once per row.
 */
import { ByteArena, ByteText, latin1Bytes, writeIntAt } from '../base/byte-text.js';
import { writeJsonString } from '../base/json-text.js';
import { writeIsoMicros } from '../base/time.js';
import type { RequestRow } from './requests.js';

/**
 * Room for every literal of a line without its pieces and bodies (about 330 bytes) and its numbers
 * (NUMBER_ROOM each): what is written at a position held in a local, between the checks.
 */
const LINE_ROOM = 768;
/** The longest text String gives a number: a sign, 17 digits, a point and an exponent ("-1.2345678901234567e-100"). */
const NUMBER_ROOM = 32;
const NULL = latin1Bytes('null');

/** A literal, at buf[at] (the caller made room); the position after it. */
function put(buf: Uint8Array, at: number, b: Uint8Array): number {
  const n = b.length;
  if (n < 20) for (let i = 0; i < n; i++) buf[at + i] = b[i]!;
  else buf.set(b, at);
  return at + n;
}

/** A number as JSON.stringify writes it, at buf[at] (NUMBER_ROOM made); the position after it. */
function numAt(buf: Uint8Array, at: number, n: number | null): number {
  if (n === null) return put(buf, at, NULL);
  if (Number.isSafeInteger(n)) return writeIntAt(buf, at, n);
  if (!Number.isFinite(n)) return put(buf, at, NULL);
  const text = String(n);
  for (let i = 0; i < text.length; i++) buf[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/**
 * A latency in ms, at buf[at] (NUMBER_ROOM made); the position after it. The rows make it as a
 * whole number of µs over 1000: written from that number's digits ("0.043", "12.5", "7"), which is
 * what String writes for k / 1000 while k is well within a double's integers (each multiple of
 * 0.001 then has a double of its own, so the shortest decimal that reads back as it is the
 * multiple itself, trailing zeros dropped). Anything else is written as String writes it.
 */
function millisAt(buf: Uint8Array, at: number, ms: number | null): number {
  if (ms === null || !Number.isFinite(ms)) return put(buf, at, NULL);
  const k = Math.round(ms * 1000);
  if (k / 1000 !== ms || Math.abs(k) >= 1e15) return numAt(buf, at, ms);
  const whole = Math.trunc(k / 1000);
  let frac = Math.abs(k - whole * 1000);
  if (k < 0 && whole === 0) buf[at++] = 0x2d; // -0.5: the sign the whole part cannot carry
  at = writeIntAt(buf, at, whole);
  if (frac === 0) return at;
  buf[at++] = 0x2e;
  buf[at++] = 0x30 + Math.floor(frac / 100);
  frac %= 100;
  if (frac === 0) return at;
  buf[at++] = 0x30 + Math.floor(frac / 10);
  frac %= 10;
  if (frac !== 0) buf[at++] = 0x30 + frac;
  return at;
}

/** A number as JSON.stringify writes it: NaN and the infinities as null, -0 as 0. */
function num(out: ByteText, n: number | null): void {
  out.room(NUMBER_ROOM);
  out.pos = numAt(out.buf, out.pos, n);
}

function tags(out: ByteText, list: RequestRow['otherTags']): void {
  if (list.length === 0) return out.ascii('[]');
  for (let i = 0; i < list.length; i++) {
    out.ascii(i === 0 ? '[{"tag":' : ',{"tag":');
    num(out, list[i]!.tag);
    out.ascii(',"size":');
    num(out, list[i]!.size);
    out.byte(0x7d);
  }
  out.byte(0x5d);
}

/** `truncated`, indexed by (request cut ? 2 : 0) + (response cut ? 1 : 0). */
const TRUNCATED = ['[]', '["response"]', '["request"]', '["request","response"]'].map(latin1Bytes);

/** A body's JSON: text (the form made from a decoded value) or the bytes written from the wire. */
function body(out: ByteText, json: string | Uint8Array): void {
  if (typeof json === 'string') out.utf8(json);
  else out.bytes(json);
}

/** The keys and literals of a line, as bytes. */
const FRAME = latin1Bytes('{"frame":');
const TIME = latin1Bytes(',"time":');
const TIME_OPEN = latin1Bytes(',"time":"');
const CLIENT = latin1Bytes(',"client":');
const BROKER = latin1Bytes(',"broker":');
const APIKEY = latin1Bytes(',"apiKey":');
const APINAME = latin1Bytes(',"apiName":');
const APIVERSION = latin1Bytes(',"apiVersion":');
const HEADERVERSION = latin1Bytes(',"headerVersion":');
const CORRELATIONID = latin1Bytes(',"correlationId":');
const CLIENTID = latin1Bytes(',"clientId":');
const CLIENTINSTANCEID = latin1Bytes(',"clientInstanceId":');
const HEADERCLIENTINSTANCEID = latin1Bytes(',"headerClientInstanceId":');
const OTHERTAGS = latin1Bytes(',"otherTags":');
const NO_OTHER_TAGS = latin1Bytes(',"otherTags":[],"responseFrame":');
const RESPONSEFRAME = latin1Bytes(',"responseFrame":');
const ERRORCODE = latin1Bytes(',"errorCode":');
const ERRORNAME = latin1Bytes(',"errorName":');
const LATENCYMS = latin1Bytes(',"latencyMs":');
const INPUT = latin1Bytes(',"input":');
const END = latin1Bytes('}\n');
const REQUEST = latin1Bytes(',"request":');
const TELEMETRY = latin1Bytes(',"telemetry":');
const RESPONSE = latin1Bytes(',"response":');
const TRUNCATED_KEY = latin1Bytes(',"truncated":');
const CAPTURED = latin1Bytes(',"requestCaptured":true');
const NOT_CAPTURED = latin1Bytes(',"requestCaptured":false');

/**
 * Runs of a line's text that many rows share (an API's name and versions, an error's code and name),
 * written once and copied into each row that has the same values. A piece keeps the value it was
 * written from besides its key, and is used only when the row's is equal (===), so a row's bytes never
 * depend on the rows before it. The bytes live in shared slabs (ByteArena): a typed array of their
 * own each would be memory outside the heap, which the garbage collector counts against it.
 */
interface Piece {
  name: string | null;
  bytes: Uint8Array;
}

/** Where a piece is written before it is kept (writing is synchronous), and where it is kept. */
const PIECE_SCRATCH = new ByteText(1024);
const PIECES = new ByteArena(64 * 1024);

function keep(write: (out: ByteText) => void): Uint8Array {
  const out = PIECE_SCRATCH;
  out.pos = 0;
  write(out);
  return PIECES.keep(out.buf, 0, out.pos);
}

/**
 * `,"apiKey":…,"apiName":…,"apiVersion":…,"headerVersion":…,"correlationId":`, by API key, then by
 * version and header version: int16s on the wire, so at most 32,768 × 32,768 × 4 pieces a hostile
 * capture could ask for; past MAX_API_PIECES the cache starts over.
 */
let apiPieces: (Piece | undefined)[][] = [];
let apiPieceCount = 0;
const MAX_API_PIECES = 4096;

function apiText(out: ByteText, row: RequestRow): void {
  out.lit(APIKEY);
  num(out, row.apiKey);
  out.lit(APINAME);
  writeJsonString(out, row.apiName);
  out.lit(APIVERSION);
  num(out, row.apiVersion);
  out.lit(HEADERVERSION);
  num(out, row.headerVersion);
  out.lit(CORRELATIONID);
}

/** The API piece of a row, or null when its values are not the wire's (the row is written field by field). */
function apiPiece(row: RequestRow): Uint8Array | null {
  const { apiKey, apiVersion, headerVersion } = row;
  // Whole numbers in the wire's ranges (a row made elsewhere may hold anything; a negative version is
  // no version Kafka defines): else the row is written field by field.
  if (apiKey === null || apiVersion === null || headerVersion === null || !(apiKey >= 0 && apiKey < 0x8000 && (apiKey | 0) === apiKey) ||
    !(apiVersion >= 0 && apiVersion < 0x8000 && (apiVersion | 0) === apiVersion) || !(headerVersion >= 0 && headerVersion < 4 && (headerVersion | 0) === headerVersion)) {
    return null;
  }
  // Indexed by version and header version: a few dozen slots for the versions clients send.
  const byVersion = (apiPieces[apiKey] ??= []);
  const at = apiVersion * 4 + headerVersion;
  let piece = byVersion[at];
  if (piece === undefined || piece.name !== row.apiName) {
    if (apiPieceCount >= MAX_API_PIECES) (apiPieces = []), (apiPieceCount = 0);
    piece = { name: row.apiName, bytes: keep((o) => apiText(o, row)) };
    (apiPieces[apiKey] ??= [])[at] = piece;
    apiPieceCount++;
  }
  return piece.bytes;
}

/** `,"errorCode":…,"errorName":…,"latencyMs":`, by code (an int16: 65,536 pieces at most). */
const errorPieces = new Map<number, Piece>();

function errorText(out: ByteText, row: RequestRow): void {
  out.lit(ERRORCODE);
  num(out, row.errorCode);
  out.lit(ERRORNAME);
  writeJsonString(out, row.errorName);
  out.lit(LATENCYMS);
}

/** The error piece of a row, or null when it has no code, or one that is not an int16. */
function errorPiece(row: RequestRow): Uint8Array | null {
  const code = row.errorCode;
  if (code === null || !(code >= -0x8000 && code < 0x8000 && (code | 0) === code)) return null;
  let piece = errorPieces.get(code);
  if (piece === undefined || piece.name !== row.errorName) {
    piece = { name: row.errorName, bytes: keep((o) => errorText(o, row)) };
    errorPieces.set(code, piece);
  }
  return piece.bytes;
}

/** `,"client":"…","broker":"…"`: made once per connection, kept in its ConnState's textState. */
interface Endpoints {
  client: string;
  broker: string;
  bytes: Uint8Array;
}

function endpointsText(out: ByteText, row: RequestRow): void {
  out.lit(CLIENT);
  writeJsonString(out, row.client);
  out.lit(BROKER);
  writeJsonString(out, row.broker);
}

function endpointsPiece(row: RequestRow, conn: TextState): Uint8Array {
  let e = conn.textState as Endpoints | null;
  if (e === null || e.client !== row.client || e.broker !== row.broker) {
    e = { client: row.client, broker: row.broker, bytes: keep((o) => endpointsText(o, row)) };
    conn.textState = e;
  }
  return e.bytes;
}

/** Where a connection's text made once is kept: its ConnState (analysis/connection-state.ts). */
export interface TextState {
  textState: unknown;
}

/**
 * A piece at out.buf[at] (room made), or when there is none (null) the text it stands for, written
 * through `out`, with `room` made again after it: the position after it (out.buf may have grown).
 */
function pieceAt(out: ByteText, at: number, piece: Uint8Array | null, text: (out: ByteText, row: RequestRow) => void, row: RequestRow, room: number): number {
  if (piece !== null) return put(out.buf, at, piece);
  out.pos = at;
  text(out, row);
  out.room(room);
  return out.pos;
}

/**
 * One row as a line, into `out`. With --bodies, `request` and `response` follow (Kafka's JSON
 * converter form, terminal-safe as schema/json.ts writes it), and `truncated` lists the bodies
 * decoded only as far as kcid kept; a PushTelemetry row has its metrics decoded between them, as
 * `telemetry`. `input` is counted from 1, as the tables number inputs; `timeUs` is not written, and
 * is what `time` is written from when the row carries no text of it.
 *
 * Runs many rows share are copied from pieces made once (`conn`, the row's connection, keeps its
 * endpoints' text). Room for the literals, numbers and pieces is made once, and they are written at
 * a position held in a local; strings go through `out` (they may grow it), and room is made again after each.
 */
export function writeRequestNdjson(out: ByteText, row: RequestRow, conn: TextState = { textState: null }): void {
  const endpoints = endpointsPiece(row, conn);
  const api = apiPiece(row);
  const error = errorPiece(row);
  const room = LINE_ROOM + endpoints.length + (api === null ? 0 : api.length) + (error === null ? 0 : error.length);
  out.room(room);
  let buf = out.buf;
  let at = put(buf, out.pos, FRAME);
  at = numAt(buf, at, row.frame);
  if (row.time === '') {
    out.pos = put(buf, at, TIME_OPEN);
    writeIsoMicros(out, row.timeUs);
    out.byte(0x22);
  } else {
    out.pos = put(buf, at, TIME);
    writeJsonString(out, row.time);
  }
  out.room(room);
  buf = out.buf;
  at = pieceAt(out, put(buf, out.pos, endpoints), api, apiText, row, room);
  buf = out.buf;
  at = numAt(buf, at, row.correlationId);
  out.pos = put(buf, at, CLIENTID);
  writeJsonString(out, row.clientId);
  out.lit(CLIENTINSTANCEID);
  writeJsonString(out, row.clientInstanceId);
  out.lit(HEADERCLIENTINSTANCEID);
  writeJsonString(out, row.headerClientInstanceId);
  if (row.otherTags.length === 0) out.lit(NO_OTHER_TAGS);
  else {
    out.lit(OTHERTAGS);
    tags(out, row.otherTags);
    out.lit(RESPONSEFRAME);
  }
  out.room(room);
  buf = out.buf;
  at = pieceAt(out, numAt(buf, out.pos, row.responseFrame), error, errorText, row, room);
  buf = out.buf;
  at = millisAt(buf, at, row.latencyMs);
  at = put(buf, at, INPUT);
  at = numAt(buf, at, row.input + 1);
  at = put(buf, at, row.requestCaptured ? CAPTURED : NOT_CAPTURED);
  const b = row.bodies;
  if (b === undefined) {
    out.pos = put(buf, at, END);
    return;
  }
  out.pos = put(buf, at, REQUEST);
  body(out, b.request);
  if (b.telemetry !== undefined) {
    out.lit(TELEMETRY);
    out.utf8(b.telemetry);
  }
  out.lit(RESPONSE);
  body(out, b.response);
  out.lit(TRUNCATED_KEY);
  out.lit(TRUNCATED[(b.requestComplete ? 0 : 2) + (b.responseComplete ? 0 : 1)]!);
  out.lit(END);
}

/** One row's line as a string (writeRequestNdjson's bytes, decoded). */
export function requestNdjson(row: RequestRow): string {
  const out = new ByteText(1024);
  writeRequestNdjson(out, row);
  return Buffer.from(out.buf.buffer, out.buf.byteOffset, out.pos).toString('utf8');
}
