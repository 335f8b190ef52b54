/**
 * TCP sequence numbers are 32-bit and wrap (RFC 9293 §3.4): two of them are compared by
 * their signed 32-bit difference, as RFC 1982 serial number arithmetic does. Streams may
 * carry more than 4 GiB; only numbers within 2^31 of each other are ever compared.
 */

/** `a - b` as a signed 32-bit integer: > 0 when `a` is after `b`. */
export function seqDiff(a: number, b: number): number {
  return (a - b) | 0;
}

/** `a + n` modulo 2^32. */
export function seqAdd(a: number, n: number): number {
  return (a + n) >>> 0;
}
