/**
 * How tables show a time (`-t`, tshark's letters). Every format has milliseconds, enough to find
 * a packet in Wireshark next to its frame number; JSON formats keep microseconds in ISO 8601 UTC.
 *
 *   ad, ud  2025-12-01T00:00:00.004Z        absolute, with the date, UTC (the default)
 *   a, u    00:00:00.004                    time of day, UTC
 *   l       2025-12-01T01:00:00.004+01:00   local time with the date and offset, in TZ's zone
 *   r       12.004                          seconds since the first packet of the capture(s)
 *   e       1764547200.004                  seconds since the epoch
 *
 * kcid's absolute times are UTC (tshark's a/ad are local: use l for that), so u and ud, tshark's
 * UTC letters, are the same as a and ad.
 */
export const TIME_FORMATS = ['ad', 'a', 'ud', 'u', 'l', 'r', 'e'] as const;
export type TimeFormat = (typeof TIME_FORMATS)[number];

export interface Clock {
  /** The time `us` (µs since the epoch) as text. */
  (us: number): string;
  /** The widest text it gives for an ordinary time, for column widths. */
  width: number;
}

const DAY_MS = 86_400_000;

/** Date's range: a hostile capture can claim a time past it. */
const inRange = (ms: number): boolean => Math.abs(ms) <= 8.64e15 - DAY_MS;

/**
 * "2025-12-01T00:00:00.004" for a time `ms` in UTC (shifted by an offset for local time); years
 * outside 0000-9999 in ISO 8601's expanded form, "+010000-01-01T00:00:03.250".
 */
const isoMs = (ms: number): string => new Date(ms).toISOString().slice(0, -1);

/** "00:00:03.250" from isoMs's text, whatever the year's width. */
const timeOfDay = (iso: string): string => iso.slice(iso.indexOf('T') + 1);

/**
 * Seconds with milliseconds: 12.004, -0.250. Cut to the millisecond, not rounded, as the absolute
 * formats are: 0.0005 s is 0.000 in every format.
 */
function seconds(us: number): string {
  const ms = Math.floor(us / 1000);
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  return `${sign}${Math.floor(abs / 1000)}.${String(abs % 1000).padStart(3, '0')}`;
}

/** A time zone's offset from UTC in minutes at `ms`, from Intl (cached per hour: offsets change on the hour or half hour). */
function offsetFinder(timeZone: string | undefined): (ms: number) => number {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const cache = new Map<number, number>();
  return (ms) => {
    const key = Math.floor(ms / 1_800_000);
    let offset = cache.get(key);
    if (offset === undefined) {
      const at = key * 1_800_000;
      const p = Object.fromEntries(format.formatToParts(new Date(at)).map((x) => [x.type, x.value]));
      const local = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
      offset = Math.round((local - at) / 60_000);
      if (cache.size > 10_000) cache.clear();
      cache.set(key, offset);
    }
    return offset;
  };
}

const offsetText = (minutes: number): string => {
  if (minutes === 0) return 'Z';
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
};

export class TimeZoneError extends Error {
  override readonly name = 'TimeZoneError';
}

/**
 * A clock for `format`. `startUs`: the first packet (or a function giving it once known), for `r`. `timeZone`: an IANA name (TZ), for
 * `l`; undefined is the system's zone. Throws TimeZoneError for a zone Intl does not know.
 */
export function makeClock(format: TimeFormat, startUs: number | null | (() => number | null) = null, timeZone?: string): Clock {
  const start = typeof startUs === 'function' ? startUs : () => startUs;
  const withWidth = (f: (us: number) => string, width: number): Clock => Object.assign(f, { width });
  const guard = (f: (ms: number, us: number) => string) => (us: number) => {
    const ms = Math.floor(us / 1000);
    return inRange(ms) ? f(ms, us) : `@${us}us`;
  };
  switch (format) {
    case 'ad':
    case 'ud':
      return withWidth(guard((ms) => `${isoMs(ms)}Z`), 24);
    case 'a':
    case 'u':
      return withWidth(guard((ms) => timeOfDay(isoMs(ms))), 12);
    case 'r':
      return withWidth((us) => seconds(us - (start() ?? us)), 10);
    case 'e':
      return withWidth((us) => seconds(us), 14);
    case 'l': {
      let offset: (ms: number) => number;
      try {
        offset = offsetFinder(timeZone === undefined || timeZone === '' ? undefined : timeZone.replace(/^:/, ''));
      } catch {
        throw new TimeZoneError(`unknown time zone TZ=${timeZone ?? ''} (expected a name such as Europe/Paris or UTC)`);
      }
      return withWidth(
        guard((ms) => {
          const minutes = offset(ms);
          return `${isoMs(ms + minutes * 60_000)}${offsetText(minutes)}`;
        }),
        29,
      );
    }
  }
}
