/** Sizes as people type them: '1GiB', '200MB', '50m', '1073741824'. MB is 10^6, MiB 2^20. */
const UNITS = {
  '': 1, b: 1,
  k: 1024, kib: 1024, kb: 1e3,
  m: 1024 ** 2, mib: 1024 ** 2, mb: 1e6,
  g: 1024 ** 3, gib: 1024 ** 3, gb: 1e9,
};

export function parseBytes(text) {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(String(text).trim());
  const unit = m === null ? undefined : UNITS[m[2].toLowerCase()];
  if (m === null || unit === undefined) throw new Error(`invalid size '${text}' (e.g. 1GiB, 200MB, 50MiB)`);
  return Math.round(Number(m[1]) * unit);
}

/** Decimal megabytes, as MB/s counts them. */
export function formatBytes(n) {
  return n >= 10e6 ? `${(n / 1e6).toFixed(0)} MB` : `${(n / 1e6).toFixed(1)} MB`;
}
