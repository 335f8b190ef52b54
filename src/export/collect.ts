/**
 * Collects V8's garbage between row groups when the heap has grown past a budget, which keeps an
 * export's peak RSS near the live data instead of wherever V8's heuristics let the heap grow.
 *
 * Why: encoding a row group (hyparquet-writer) makes many short-lived arrays, and buffered values
 * outlive a scavenge and are promoted; V8 then lets the old generation grow to 150-180 MB before a
 * full collection, though about 40 MB is live. Measured on chatty (200 MB, 421,473 requests, 2
 * cores shared and loaded), peak RSS of `kcid export`: 275 MB as V8 chooses, 182 MB with a full
 * collection after every row group, and see {@link HEAP_BUDGET} for the budget chosen. Smaller young generations
 * (`--max-semi-space-size=2`) made it worse (308 MB); smaller row groups stopped helping below
 * 16,384 rows.
 *
 * `gc` is V8's own function, exposed by turning its flag on at run time and reading it from a new
 * context (the flag applies to contexts made after it is set). Where that fails (a runtime without
 * V8 flags), export still works and only loses the bound.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full collection runs when the heap has grown this much since the last one (or the start).
 * Encoding one row group of chatty's requests grows the heap by 25-40 MB, so at 16 MiB nearly
 * every group ends with a collection (28 on chatty), each cheap because little is live (17-63 MB).
 * Measured peak RSS on chatty, shared loaded machine, ndjson 140 MB: budget 16 MiB 185 MB,
 * 24 MiB 191 MB, 48 MiB 213 MB, 80 MiB 255 MB, none 275 MB.
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
