/**
 * Shapes: one definition per file format kcid reads that another program may have written
 * (summaries, baselines, configs), checked when the file is loaded. A check gives null, or one line
 * naming the first bad field by its path (`findings[3].severity: expected one of error, warning,
 * info, got "<a href=…>"`), so a damaged or hostile file is refused before any format renders it.
 * Fields a shape does not name are let through (a newer kcid may add some) and never read.
 */
import { quoted, sanitize } from './sanitize.js';

/** null when `v` has the shape, else what is wrong, with `path` naming where. */
export type Shape = (v: unknown, path: string) => string | null;

/** How a bad value shows in a message: its JSON, escaped and cut to 40 characters. */
export function shown(v: unknown): string {
  let text: string;
  try {
    if (typeof v === 'string') {
      const q = quoted(v);
      return q.length > 40 ? `${q.slice(0, 39)}…` : q;
    }
    text = v === undefined ? 'nothing' : Array.isArray(v) ? 'an array' : typeof v === 'object' && v !== null ? 'an object' : (JSON.stringify(v) ?? String(v));
  } catch {
    text = typeof v;
  }
  text = sanitize(text);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

const fail = (path: string, expected: string, v: unknown): string => `${path}: expected ${expected}, got ${shown(v)}`;

export const string: Shape = (v, path) => (typeof v === 'string' ? null : fail(path, 'a string', v));

// eslint-disable-next-line no-control-regex
const ESCAPED = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/**
 * Text kcid writes itself (rule IDs, messages, endpoints): a string with nothing sanitize would
 * escape, as kcid's own messages are made (wire strings in them are already escaped). Tables print
 * such text as it is, so a control character in it would reach the terminal.
 */
export const text: Shape = (v, path) => (typeof v !== 'string' ? fail(path, 'a string', v) : ESCAPED.test(v) ? fail(path, 'text without control or format characters', v) : null);

/** A string matching `re` (anchored by the caller), `what` naming it in the message. */
export const matching =
  (re: RegExp, what: string): Shape =>
  (v, path) =>
    typeof v === 'string' && re.test(v) ? null : fail(path, what, v);

export const bool: Shape = (v, path) => (typeof v === 'boolean' ? null : fail(path, 'true or false', v));
/** A finite number. */
export const number: Shape = (v, path) => (typeof v === 'number' && Number.isFinite(v) ? null : fail(path, 'a number', v));
/** An integer exact in a double. */
export const int: Shape = (v, path) => (Number.isSafeInteger(v) ? null : fail(path, 'an integer', v));
/** An integer from 0 up, exact in a double. */
export const count: Shape = (v, path) => (Number.isSafeInteger(v) && (v as number) >= 0 ? null : fail(path, 'an integer of 0 or more', v));

export const nullable =
  (s: Shape): Shape =>
  (v, path) =>
    v === null ? null : s(v, path);

export function oneOf(...values: readonly (string | number | boolean | null)[]): Shape {
  const allowed = new Set<unknown>(values);
  const expected = `one of ${values.map((x) => String(x)).join(', ')}`;
  return (v, path) => (allowed.has(v) ? null : fail(path, expected, v));
}

export const arrayOf =
  (s: Shape): Shape =>
  (v, path) => {
    if (!Array.isArray(v)) return fail(path, 'an array', v);
    for (let i = 0; i < v.length; i++) {
      const p = s(v[i], `${path}[${i}]`);
      if (p !== null) return p;
    }
    return null;
  };

export const tuple =
  (...shapes: Shape[]): Shape =>
  (v, path) => {
    if (!Array.isArray(v) || v.length !== shapes.length) return fail(path, `an array of ${shapes.length}`, v);
    for (let i = 0; i < shapes.length; i++) {
      const p = shapes[i]!(v[i], `${path}[${i}]`);
      if (p !== null) return p;
    }
    return null;
  };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object with `fields` (each required) and `optional` ones (absent, or of their shape). */
export function object(fields: Record<string, Shape>, optional: Record<string, Shape> = {}): Shape {
  const required = Object.entries(fields);
  const maybe = Object.entries(optional);
  return (v, path) => {
    if (!isObject(v)) return fail(path, 'an object', v);
    for (const [key, s] of required) {
      const p = Object.hasOwn(v, key) ? s(v[key], `${path}.${key}`) : `${path}.${key}: missing`;
      if (p !== null) return p;
    }
    for (const [key, s] of maybe) {
      if (!Object.hasOwn(v, key) || v[key] === undefined) continue;
      const p = s(v[key], `${path}.${key}`);
      if (p !== null) return p;
    }
    return null;
  };
}

/** The problem with `v` under `shape`, its path starting at `root` (the file's top level: ''). */
export function problem(shape: Shape, v: unknown, root = ''): string | null {
  const p = shape(v, root);
  return p === null ? null : p.replace(/^\./, '');
}
