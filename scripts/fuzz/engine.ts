/**
 * Fuzz cases and regressions. Case `index` of run `seed` is a pure function of the two numbers
 * (and the seed corpus), so any case is reproduced with `--seed S --from INDEX --iterations 1`.
 * A failing case is saved in test/regressions/ as NAME.bin (the capture) and NAME.json (how it
 * was made and what failed); test/fuzz-regressions.test.ts replays every one.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mutate, type Seed } from './mutate.js';
import { Rng } from './rng.js';
import type { CaseFailure } from './check.js';

export interface FuzzCase {
  seed: number;
  index: number;
  base: string;
  steps: string[];
  bytes: Buffer;
}

export function makeCase(seeds: readonly Seed[], seed: number, index: number): FuzzCase {
  const rng = Rng.forCase(seed, index);
  const base = seeds[rng.int(seeds.length)]!;
  const { bytes, steps } = mutate(base, rng, seeds);
  return { seed, index, base: base.name, steps, bytes };
}

export interface Regression {
  /** File name stem in test/regressions/. */
  name: string;
  /** How the input was found: the fuzz run's seed and case index (null for hand-made ones). */
  seed: number | null;
  index: number | null;
  base: string;
  steps: string[];
  failure: CaseFailure;
  /** What was wrong in kcid, once fixed (filled in by hand). */
  fixed?: string;
}

export function saveRegression(dir: string, c: FuzzCase, failure: CaseFailure): string {
  mkdirSync(dir, { recursive: true });
  const name = `fuzz-${c.seed}-${c.index}`;
  const meta: Regression = { name, seed: c.seed, index: c.index, base: c.base, steps: c.steps, failure };
  writeFileSync(join(dir, `${name}.bin`), c.bytes);
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(meta, null, 2)}\n`);
  return name;
}

export function loadRegressions(dir: string): { meta: Regression; bytes: Buffer }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => {
      const meta = JSON.parse(readFileSync(join(dir, n), 'utf8')) as Regression;
      return { meta, bytes: readFileSync(join(dir, `${n.slice(0, -5)}.bin`)) };
    });
}

/** Failures that differ only in numbers are one bug: keep a few inputs per signature, not thousands. */
export function signature(f: CaseFailure): string {
  return `${f.kind}: ${f.message.replace(/\d+/g, 'N').slice(0, 160)}`;
}
