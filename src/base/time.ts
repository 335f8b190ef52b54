/** Times: microseconds since the epoch (exact in a double until the year 2255). */
import type { ByteText } from './byte-text.js';

export function toMicros(tsSec: number, tsNsec: number): number {
  return tsSec * 1_000_000 + Math.floor(tsNsec / 1000);
}

/** The second last formatted by isoMicros, and its text up to the fraction ("2026-12-01T02:21:56."). */
let cachedSecond = NaN;
let cachedPrefix = '';

/**
 * ISO 8601 UTC with microseconds, e.g. 2026-12-01T02:21:56.123456Z. Rows come in time order, so
 * the date and time of day are made once per second (through Date) and only the six digits per call.
 */
export function isoMicros(us: number): string {
  const second = Math.floor(us / 1_000_000);
  const micros = us - second * 1_000_000;
  // A whole µs in [0, 1e6) of a second whose text is the plain 24-character form (years 0000-9999).
  if (second === cachedSecond && Number.isSafeInteger(us) && micros >= 0 && micros < 1_000_000) {
    return `${cachedPrefix}${String(1_000_000 + micros).slice(1)}Z`;
  }
  const text = isoMicrosByDate(us);
  // "yyyy-mm-ddThh:mm:ss.uuuuuuZ": 27 characters with the point at 19 (an expanded year, +010000-..., has not).
  if (Number.isSafeInteger(us) && micros >= 0 && micros < 1_000_000 && text.length === 27 && text.charCodeAt(19) === 46) {
    cachedSecond = second;
    cachedPrefix = text.slice(0, 20);
  }
  return text;
}

/** isoMicros(us)'s characters (all ASCII), written into `out`: the cached second's text, then the six digits. */
export function writeIsoMicros(out: ByteText, us: number): void {
  const second = Math.floor(us / 1_000_000);
  const micros = us - second * 1_000_000;
  if (second !== cachedSecond || !Number.isSafeInteger(us) || micros < 0 || micros >= 1_000_000) return out.ascii(isoMicros(us));
  out.ascii(cachedPrefix);
  out.room(7);
  const buf = out.buf;
  let at = out.pos + 6;
  out.pos = at + 1;
  buf[at] = 0x5a; // Z
  for (let m = micros, i = 0; i < 6; i++) {
    const q = Math.floor(m / 10);
    buf[--at] = 0x30 + (m - q * 10);
    m = q;
  }
}

/** isoMicros through Date every time: what the cached form must equal. */
export function isoMicrosByDate(us: number): string {
  const ms = Math.floor(us / 1000);
  // A hostile pcapng can claim a time past year 275760, where Date gives up.
  if (!(Math.abs(ms) <= 8.64e15)) return `@${us}us`;
  const micros = us - ms * 1000;
  // yyyy-mm-ddThh:mm:ss.mmmZ, or ±yyyyyy-mm-dd... outside the years 0000-9999: up to the Z either way.
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
}
