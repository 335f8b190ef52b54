/**
 * Wire strings (ClientId, software name, group and member IDs, SASL mechanisms) reach a terminal
 * only through here. Control characters (C0, DEL, C1), and the Unicode format characters that can
 * reorder or hide text (bidi overrides and isolates, zero-width characters, line separators), are
 * written as escapes, so a hostile ClientId cannot move the cursor, set the window title or make
 * one ID look like another. Backslash is escaped too, so every output maps back to one input.
 */

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\\\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

function escape(ch: string): string {
  if (ch === '\\') return '\\\\';
  const code = ch.charCodeAt(0);
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

export function sanitize(s: string): string {
  return s.replace(UNSAFE, escape);
}

/** A wire string in double quotes, as messages show it: escaped, with its own quotes escaped too. */
export function quoted(s: string): string {
  return `"${sanitize(s).replace(/"/g, '\\"')}"`;
}
