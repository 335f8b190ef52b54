/** Times: microseconds since the epoch (exact in a double until the year 2255). */

export function toMicros(tsSec: number, tsNsec: number): number {
  return tsSec * 1_000_000 + Math.floor(tsNsec / 1000);
}

/** ISO 8601 UTC with microseconds, e.g. 2026-12-01T02:21:56.123456Z. */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  // A hostile pcapng can claim a time past year 275760, where Date gives up.
  if (!(Math.abs(ms) <= 8.64e15)) return `@${us}us`;
  const micros = us - ms * 1000;
  const iso = new Date(ms).toISOString(); // yyyy-mm-ddThh:mm:ss.mmmZ
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}
