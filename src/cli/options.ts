/** Option parsing as pure functions: each returns a value or throws a UsageError with one line. */
import type { Severity } from '../analysis/types.js';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** "9092,19092" → {9092, 19092}. */
export function parsePorts(text: string): Set<number> {
  const ports = new Set<number>();
  for (const part of text.split(',')) {
    const p = part.trim();
    if (!/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535) {
      throw new UsageError(`invalid port '${p}' in --port (expected numbers from 1 to 65535, separated by commas)`);
    }
    ports.add(Number(p));
  }
  return ports;
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

/** "104857600", "100MiB", "64k" → bytes. */
export function parseSize(text: string, option: string): number {
  const m = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m === null ? undefined : UNITS[m[2]!.toLowerCase()];
  if (m === null || unit === undefined) throw new UsageError(`invalid size '${text}' for ${option} (e.g. 104857600, 100MiB, 64KiB)`);
  const n = Number(m[1]) * unit;
  if (n < 16 || n > 0x7fffffff) throw new UsageError(`${option} must be between 16 bytes and 2 GiB - 1, got '${text}'`);
  return n;
}

export type FailOn = Severity | 'none';

export function parseFailOn(text: string): FailOn {
  if (text === 'error' || text === 'warning' || text === 'info' || text === 'none') return text;
  throw new UsageError(`invalid --fail-on '${text}' (expected error, warning, info or none)`);
}

export function parseChoice<T extends string>(text: string, choices: readonly T[], option: string): T {
  if ((choices as readonly string[]).includes(text)) return text as T;
  throw new UsageError(`invalid ${option} '${text}' (expected ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]})`);
}
