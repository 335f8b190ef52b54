/**
 * Collects V8's garbage between row groups when the heap has grown past a budget, which keeps an
 * export's peak RSS near the live data instead of wherever V8's heuristics let the heap grow.
 *
 * Two heaps call it (each thread has its own V8 heap, and its own copy of this module): the
 * encoder thread after each row group, where hyparquet-writer leaves 10-25 MB of garbage and the
 * live heap is about one group, so the collection is cheap; and the main thread after handing a
 * group over, where the capture's analysis is live (60 MB on chatty), so it runs only when the
 * rows' leftovers have grown the heap {@link HEAP_BUDGET}, a few times per capture. Before the
 * encoder had its thread, the main thread collected after nearly every group: 28 full collections
 * on chatty, 3-5 CPU seconds of 17.
 *
 * `gc` is V8's own function, exposed by turning its flag on at run time and reading it from a new
 * context (the flag applies to contexts made after it is set). Where that fails (a runtime without
 * V8 flags), export still works and only loses the bound.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full collection runs when the heap has grown this much since the last one (or the start).
 * Measured when the encoder shared the main thread (peak RSS on chatty, ndjson 140 MB): budget
 * 16 MiB 185 MB, 24 MiB 191 MB, 48 MiB 213 MB, 80 MiB 255 MB, none 275 MB.
 */
export const HEAP_BUDGET = 16 * 1024 * 1024;

type Gc = () => void;

let gcFn: Gc | null | undefined;

function gc(): Gc | null {
  if (gcFn !== undefined) return gcFn;
  const own = (globalThis as { gc?: Gc }).gc;
  if (typeof own === 'function') return (gcFn = own);
  try {
    setFlagsFromString('--expose-gc');
    const fn = runInNewContext('gc') as unknown;
    gcFn = typeof fn === 'function' ? (fn as Gc) : null;
  } catch {
    gcFn = null;
  }
  return gcFn;
}

/** The heap's used size after the last collection this made (a floor the budget is added to). */
let floor = 0;

/** Called after each row group: collects when the heap is {@link HEAP_BUDGET} above its floor. */
export function collectIfGrown(budget = HEAP_BUDGET): void {
  const used = process.memoryUsage().heapUsed;
  if (used < floor + budget) return;
  const fn = gc();
  if (fn === null) return;
  fn();
  floor = process.memoryUsage().heapUsed;
}
