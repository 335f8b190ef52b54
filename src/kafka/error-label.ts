/**
 * How kcid shows a Kafka error code everywhere: its name and its number, `UNSUPPORTED_VERSION (35)`.
 * The one place that turns a code into words, so a different error table needs one import changed.
 */
import { errorName, KNOWN_ERROR_CODES } from './errors.js';

const KNOWN: ReadonlySet<number> = new Set(KNOWN_ERROR_CODES);

/** `UNSUPPORTED_VERSION (35)`, `NONE (0)`; a code no Kafka release names: `unknown error (999)`. */
export function errorLabel(code: number): string {
  return KNOWN.has(code) ? `${errorName(code)} (${code})` : `unknown error (${code})`;
}
