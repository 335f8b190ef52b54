/**
 * JSON text that is safe to print to a terminal and byte-stable: JSON.stringify already escapes
 * C0 controls; DEL, C1 controls (0x9b is an 8-bit CSI) and Unicode format characters are valid
 * in JSON strings but not harmless on a terminal, so they are written as \u escapes too. The
 * value is unchanged.
 */
import type { ByteText } from './byte-text.js';

const TERMINAL_UNSAFE = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

const escapeUnit = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

export function safeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(TERMINAL_UNSAFE, escapeUnit);
}

/** JSON text written by another serializer (JSON.stringify's escapes), made terminal-safe the same way. */
export function terminalSafe(jsonText: string): string {
  return jsonText.replace(TERMINAL_UNSAFE, escapeUnit);
}

/**
 * A list rendered element by element by {@link writeJson}: `items` mapped through `map` one at a
 * time, so a report with a quarter of a million connections never holds all their JSON objects,
 * nor one string of the whole document (V8 strings stop at about 512 MB). JSON.stringify sees the
 * mapped array through toJSON, so both give the same bytes.
 */
export class JsonList<T> {
  /**
   * @param text optional fast path: the JSON text of one item as JSON.stringify(map(item), null,
   *   indent) would write it with its lines starting at `newline` (newline + the item's indent).
   *   Used only when indent is 2; the tests hold it to JSON.stringify's bytes.
   */
  constructor(
    readonly items: readonly T[],
    readonly map: (item: T) => unknown,
    readonly text?: (item: T, newline: string) => string,
  ) {}

  toJSON(): unknown[] {
    return this.items.map(this.map);
  }
}

/** Elements of a {@link JsonList} stringified per call. */
const LIST_BATCH = 256;

/**
 * Writes `value` as safeJson(value, indent || undefined) would (indent 0: one line), in pieces:
 * objects and arrays down to `depth` levels are written member by member (and every
 * {@link JsonList} element by element); below that, JSON.stringify writes each member whole.
 */
export function writeJson(value: unknown, indent: number, write: (s: string) => void, depth = 2): void {
  writeValue(value, indent, write, depth, indent === 0 ? '' : '\n');
  write('\n');
}

function writeValue(value: unknown, indent: number, write: (s: string) => void, depth: number, newline: string): void {
  if (value instanceof JsonList) {
    const { items, map, text: itemText } = value;
    if (items.length === 0) return write('[]');
    if (itemText !== undefined && indent === 2) {
      const inner = `${newline}  `;
      const pieces: string[] = [];
      for (let i = 0; i < items.length; i++) {
        pieces.push(i === 0 ? `[${inner}` : `,${inner}`, itemText(items[i]!, inner));
        if (pieces.length >= 2 * LIST_BATCH) write(pieces.splice(0).join(''));
      }
      pieces.push(`${newline}]`);
      return write(pieces.join(''));
    }
    // Elements go to JSON.stringify a batch at a time (one call, one re-indent per batch): the
    // batch's "[" and "]" lines are cut off and its lines moved to this list's depth.
    for (let from = 0; from < items.length; from += LIST_BATCH) {
      const batch = new Array<unknown>(Math.min(LIST_BATCH, items.length - from));
      for (let i = 0; i < batch.length; i++) batch[i] = map(items[from + i]!);
      const text = stringifyAt(batch, indent, newline);
      // text is "[" + elements + newline + "]" (indent 0: "[" + elements + "]").
      write((from === 0 ? '[' : ',') + text.slice(1, text.length - 1 - newline.length));
    }
    return write(`${newline}]`);
  }
  if (depth <= 0 || value === null || typeof value !== 'object') return write(stringifyAt(value, indent, newline));
  const inner = indent === 0 ? '' : newline + ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return write('[]');
    value.forEach((v, i) => {
      write(i === 0 ? `[${inner}` : `,${inner}`);
      // JSON.stringify writes undefined, functions and symbols in arrays as null.
      writeValue(v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : v, indent, write, depth - 1, inner);
    });
    return write(`${newline}]`);
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return write(stringifyAt(value, indent, newline));
  let first = true;
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    write(`${first ? '{' : ','}${inner}${safeJson(k)}${indent === 0 ? ':' : ': '}`);
    writeValue(v, indent, write, depth - 1, inner);
    first = false;
  }
  write(first ? '{}' : `${newline}}`);
}

/** safeJson(value, indent), indented to sit after `newline` (JSON strings hold no raw line breaks). */
function stringifyAt(value: unknown, indent: number, newline: string): string {
  const text = safeJson(value, indent === 0 ? undefined : indent);
  return indent === 0 || newline === '\n' ? text : text.replace(/\n/g, newline);
}

/** A parsed JSON value that is an object (not null, not an array): the files kcid reads are checked with it. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Characters a JSON string can hold as they are, with nothing a terminal would act on. */
const PLAIN = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/** One string as safeJson writes it: quoted directly when every character is plain printable ASCII. */
export function jsonString(s: string | null): string {
  if (s === null) return 'null';
  return PLAIN.test(s) ? `"${s}"` : safeJson(s);
}

/**
 * jsonString(s)'s bytes, written into `out`: plain printable ASCII is stored as it is checked, in
 * one pass; a string with anything else is written as safeJson writes it.
 */
export function writeJsonString(out: ByteText, s: string | null): void {
  if (s === null) return out.ascii('null');
  const n = s.length;
  out.room(n + 2);
  const buf = out.buf;
  const from = out.pos;
  let at = from;
  buf[at++] = 0x22;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    // PLAIN: 0x20-0x7e but '"' (0x22) and '\\' (0x5c).
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
      out.pos = from;
      return out.utf8(safeJson(s));
    }
    buf[at++] = c;
  }
  buf[at++] = 0x22;
  out.pos = at;
}
