/**
 * The structure-aware decoder fuzz targets' short run (the long one: `npm run fuzz -- decoders`,
 * scripts/fuzz/decoders-main.ts): a fixed seed, every target, each case within its CPU budget.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { prepare, targets } from '../scripts/fuzz/decoders.js';

const SEED = 20261204;
const CASES = 60;
const BUDGET_MS = 2000;

beforeAll(async () => {
  await prepare();
});

describe('decoder fuzz targets, short run', () => {
  for (const target of targets()) {
    it(`${target.name}: ${CASES} cases of seed ${SEED}, none failing or over ${BUDGET_MS} ms of CPU`, () => {
      const failures: string[] = [];
      for (let i = 0; i < CASES; i++) {
        const t0 = process.cpuUsage();
        const failure = target.run(SEED, i);
        const used = process.cpuUsage(t0);
        const ms = (used.user + used.system) / 1000;
        if (failure !== null || ms > BUDGET_MS) {
          failures.push(`case ${i}: ${failure ?? `${ms.toFixed(0)} ms of CPU`} [npm run fuzz -- decoders --target ${target.name} --seed ${SEED} --from ${i} --iterations 1]`);
        }
      }
      expect(failures).toEqual([]);
    });
  }

});
