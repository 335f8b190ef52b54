/**
 * TCP sequence numbers are 32-bit and wrap (RFC 9293 §3.4): two of them are compared by
 * their signed 32-bit difference, as RFC 1982 serial number arithmetic does. Streams may
 * carry more than 4 GiB; only numbers within 2^31 of each other are ever compared.
 *
 * kcid keeps them as signed 32-bit integers (the wire's unsigned value | 0): V8 stores those
 * as small integers, where the half of all values above 2^31, as unsigned numbers, would each
 * be a number on the heap (measured: 9 MB of them per GiB of produce-heavy traffic).
 */

/** `a - b` as a signed 32-bit integer: > 0 when `a` is after `b`. */
export function seqDiff(a: number, b: number): number {
  return (a - b) | 0;
}

/** `a + n` modulo 2^32, as a signed 32-bit integer. */
export function seqAdd(a: number, n: number): number {
  return (a + n) | 0;
}
