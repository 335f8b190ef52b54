/**
 * JSON text that is safe to print to a terminal and byte-stable: JSON.stringify already escapes
 * C0 controls; DEL, C1 controls (0x9b is an 8-bit CSI) and Unicode format characters are valid
 * in JSON strings but not harmless on a terminal, so they are written as \u escapes too. The
 * value is unchanged.
 */
const TERMINAL_UNSAFE = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

const escapeUnit = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

export function safeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(TERMINAL_UNSAFE, escapeUnit);
}
