/**
 * A non-blocking descriptor used as a blocking one. A pipe kcid inherits (standard input from
 * tcpdump or zcat) or one Node made non-blocking (standard output) answers EAGAIN when it is empty
 * or full; kcid, which reads and writes on its one thread anyway, sleeps and tries again.
 */

/** Something to sleep on (Atomics.wait with a timeout). */
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * `op()`, tried again after a sleep for as long as it fails with EAGAIN: 0.05 ms at first (a
 * reader such as jq empties a pipe again within microseconds), doubling up to 20 ms (a pager
 * waiting for its user, or a live capture that trickles in, costs next to nothing). Any other
 * error is thrown.
 */
export function untilReady<T>(op: () => T): T {
  let sleepMs = 0.05;
  for (;;) {
    try {
      return op();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, sleepMs);
      sleepMs = Math.min(20, sleepMs * 2);
    }
  }
}
