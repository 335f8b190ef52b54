#!/usr/bin/env node
/**
 * Writes one benchmark input: `node scripts/bench/generate.mjs SCENARIO FILE [--size 200MB] [--seed 1]`.
 * Prints its manifest (packets, connections, requests, violations injected) as JSON.
 */
import { generate, SCENARIOS } from './lib/scenarios.mjs';
import { parseBytes } from './lib/units.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const size = parseBytes(opt('--size', '200MB'));
const seed = Number(opt('--seed', '1'));
const [scenario, file] = args;
if (!SCENARIOS.includes(scenario) || file === undefined) {
  process.stderr.write(`usage: generate.mjs (${SCENARIOS.join('|')}) FILE [--size 200MB] [--seed 1]\n`);
  process.exit(2);
}
const t0 = performance.now();
const manifest = generate(scenario, file, size, seed);
manifest.generateSeconds = +((performance.now() - t0) / 1000).toFixed(2);
process.stdout.write(`${JSON.stringify(manifest, null, 2)}\n`);
