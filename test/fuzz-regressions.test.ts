/**
 * Replays every input the fuzzer saved in test/regressions/ (NAME.bin, with NAME.json saying how it
 * was found and what failed): each must now keep every property of scripts/fuzz/check.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkCapture, installAllocationHook } from '../scripts/fuzz/check.js';
import { loadRegressions } from '../scripts/fuzz/engine.js';
import { removeTmpFiles, tmpFile } from './builder/capture.js';

const DIR = fileURLToPath(new URL('./regressions', import.meta.url));
const regressions = loadRegressions(DIR);

afterAll(removeTmpFiles);

describe('saved fuzz regressions', () => {
  it('every saved input has its description, and every description its input', () => {
    let names: string[] = [];
    try {
      names = readdirSync(DIR).filter((n) => n !== '.gitkeep' && n !== 'README.md');
    } catch {
      // No regressions saved yet.
    }
    const stems = (ext: string) => names.filter((n) => n.endsWith(ext)).map((n) => n.slice(0, -ext.length)).sort();
    expect(stems('.bin')).toEqual(stems('.json'));
    expect(names.every((n) => n.endsWith('.bin') || n.endsWith('.json'))).toBe(true);
  });

  it.runIf(regressions.length > 0).each(regressions.map((r) => [r.meta.name, r] as const))('%s keeps every property now', async (_name, r) => {
    const file = tmpFile(`${r.meta.name}.pcap`, r.bytes);
    const uninstall = installAllocationHook();
    try {
      const o = await checkCapture(file, { budgetMs: 20_000 });
      expect(o.failure, `${r.meta.failure.kind} (${r.meta.failure.message}) when found`).toBeNull();
    } finally {
      uninstall();
    }
  });
});
