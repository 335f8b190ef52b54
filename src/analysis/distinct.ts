/** Short lists of distinct values (a connection's ClientIds, header IDs, software), bounded. */
import type { SoftwareId } from './types.js';

/** Distinct values kept per connection for lists such as ClientIds (a hostile client could send millions). */
export const MAX_DISTINCT_VALUES = 16;

/** The same software name and version (a client sends them in ApiVersions). */
export const sameSoftware = (a: SoftwareId, b: SoftwareId): boolean => a.name === b.name && a.version === b.version;

/**
 * `list` with `value` added unless already there or the list is full (MAX_DISTINCT_VALUES): the
 * same array, or a new one-element array when `list` is empty (possibly the shared empty one).
 */
export function withDistinct<T>(list: T[], value: T, same: (a: T, b: T) => boolean = Object.is): T[] {
  if (list.length === 0) return [value];
  addDistinct(list, value, same);
  return list;
}

export function addDistinct<T>(list: T[], value: T, same: (a: T, b: T) => boolean = Object.is): void {
  if (list.length >= MAX_DISTINCT_VALUES) return;
  for (const v of list) if (same(v, value)) return;
  list.push(value);
}
