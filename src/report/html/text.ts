/** Text for the page: every string that reaches it, wire strings above all, goes through {@link esc}. */
import { sanitize } from '../../base/sanitize.js';
import { displayWidth, takeWidth } from '../../base/width.js';
import { groupDigits } from '../../base/digits.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text or an attribute value (always double-quoted by the page): control and format characters as
 * visible escapes first (sanitize), then the five characters HTML gives meaning to. A ClientId of
 * `<img src=x onerror=alert(1)>` is shown as those characters.
 */
export function esc(s: string): string {
  return sanitize(s).replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);
}

/** A tooltip of several lines (our own line breaks; each line escaped as {@link esc} does). */
export function escLines(s: string): string {
  return s.split('\n').map(esc).join('&#10;');
}

/** At most `n` columns (display width: whole characters, a CJK one or an emoji two), with an ellipsis when cut; for labels in the SVG. */
export function clip(s: string, n: number): string {
  return displayWidth(s) <= n ? s : `${takeWidth(s, n - 1)}\u2026`;
}

export const count = (n: number): string => groupDigits(n);

export function plural(n: number, word: string): string {
  return `${count(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** A duration in µs for an axis or a tooltip: 850 µs, 12.5 ms, 3.2 s, 4 min 10 s, 2 h 5 min. */
export function duration(us: number): string {
  if (us === 0) return '0';
  const a = Math.abs(us);
  const sign = us < 0 ? '-' : '';
  if (a < 1000) return `${sign}${Math.round(a)} µs`;
  if (a < 1_000_000) return `${sign}${trim(a / 1000)} ms`;
  if (a < 60_000_000) return `${sign}${trim(a / 1_000_000)} s`;
  const s = Math.round(a / 1_000_000);
  if (s < 3600) return `${sign}${Math.floor(s / 60)} min${s % 60 === 0 ? '' : ` ${s % 60} s`}`;
  const m = Math.round(s / 60);
  if (m < 48 * 60) return `${sign}${Math.floor(m / 60)} h${m % 60 === 0 ? '' : ` ${m % 60} min`}`;
  return `${sign}${trim(m / 1440)} d`;
}

/** Three significant digits at most, no trailing zeros. */
function trim(x: number): string {
  return String(Number(x.toPrecision(3)));
}

/** A latency in milliseconds, or '-'. */
export function ms(v: number | null): string {
  return v === null ? '-' : `${v} ms`;
}

/** Coordinates in the SVG with at most two decimals (smaller pages, stable bytes). */
export function n2(x: number): string {
  return String(Math.round(x * 100) / 100);
}
