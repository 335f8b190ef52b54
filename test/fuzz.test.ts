/**
 * The mutation fuzzer's short fixed-seed run (the long one is `npm run fuzz`, see scripts/fuzz/),
 * plus sweeps that need no randomness: a small capture cut at every offset, and one damaged record
 * at a time. Every case must keep the properties of scripts/fuzz/check.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkCapture, installAllocationHook } from '../scripts/fuzz/check.js';
import { makeCase } from '../scripts/fuzz/engine.js';
import { layoutOf } from '../scripts/fuzz/layout.js';
import { loadSeeds, smallSeed } from '../scripts/fuzz/seeds.js';
import { Scenario } from './builder/scenario.js';
import { removeTmpFiles, tmpFile } from './builder/capture.js';
import { run, type Io } from '../src/cli/main.js';

const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url));
/** The short run: seed and case count are fixed so that `npm test` is reproducible. */
const SEED = 20251201;
const CASES = 250;

let uninstall: () => void = () => {};
beforeAll(() => {
  uninstall = installAllocationHook();
});
afterAll(() => {
  uninstall();
  removeTmpFiles();
});

async function analyzeJson(path: string): Promise<{ code: number; out: string; err: string }> {
  const r = { code: 0, out: '', err: '' };
  const io: Io = { stdout: { write: (s: string) => (r.out += s) }, stderr: { write: (s: string) => (r.err += s) }, env: { NO_COLOR: '1' } };
  r.code = await run(['analyze', '--format', 'json', '--fail-on', 'none', '--allow-empty', path], io);
  return r;
}

describe('mutation fuzzer, short run', () => {
  it(`keeps every property on ${CASES} mutants of the seed corpus (seed ${SEED})`, async () => {
    const seeds = loadSeeds(FIXTURES);
    expect(seeds.map((s) => s.name)).toContain('built:kip1313.pcap');
    const path = tmpFile('case.pcap', '');
    const failures: string[] = [];
    for (let i = 0; i < CASES; i++) {
      const c = makeCase(seeds, SEED, i);
      writeFileSync(path, c.bytes);
      const o = await checkCapture(path, { budgetMs: 10_000 });
      if (o.failure !== null) {
        failures.push(`case ${i} (${c.base}; ${c.steps.join('; ')}): ${o.failure.kind}: ${o.failure.message} ` +
          `[reproduce and save: npm run fuzz -- --seed ${SEED} --from ${i} --iterations 1]`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('the checker catches what it is meant to catch', async () => {
    // A file that is not a capture: all commands exit 2 with one line naming the file.
    const notCapture = tmpFile('junk.pcap', 'hello, not a capture at all');
    const o = await checkCapture(notCapture);
    expect(o.failure).toBeNull();
    expect(o.exitCode).toBe(2);
  });
});

describe('truncation at every offset', () => {
  for (const [name, bytes] of [
    ['pcap', smallSeed().bytes],
    ['pcapng', pcapngOfSmall()],
  ] as const) {
    it(`${name}: every cut keeps exactly the records before it, and says where the file was cut`, async () => {
      const layout = layoutOf(bytes);
      const packetUnits = layout.units.filter((u) => u.data >= 0);
      expect(packetUnits.length).toBeGreaterThan(5);
      const path = tmpFile(`cut.${name}`, '');
      const wrong: string[] = [];
      for (let cut = 0; cut < bytes.length; cut++) {
        writeFileSync(path, bytes.subarray(0, cut));
        const r = await analyzeJson(path);
        const whole = packetUnits.filter((u) => u.end <= cut).length;
        if (cut < (name === 'pcap' ? 24 : 28)) {
          // Not even a file header: one line on stderr, exit 2.
          if (r.code !== 2 || !/^kcid: .+: .+\n$/.test(r.err)) wrong.push(`cut ${cut}: exit ${r.code} ${r.err}`);
          continue;
        }
        if (r.code !== 0) {
          wrong.push(`cut ${cut}: exit ${r.code} ${r.err}`);
          continue;
        }
        const report = JSON.parse(r.out) as { inputs: { packets: number }[]; findings: { rule: string; frame: number }[] };
        if (report.inputs[0]!.packets !== whole) wrong.push(`cut ${cut}: ${report.inputs[0]!.packets} packets, expected ${whole}`);
        const inside = layout.units.some((u) => u.start < cut && cut < u.end);
        const truncated = report.findings.filter((f) => f.rule === 'capture-truncated');
        if (inside && packetUnits.some((u) => u.start < cut && cut < u.end)) {
          if (truncated.length !== 1 || truncated[0]!.frame !== whole + 1) wrong.push(`cut ${cut}: capture-truncated ${JSON.stringify(truncated)}`);
        } else if (!inside && truncated.length !== 0) {
          wrong.push(`cut ${cut}: at a record boundary, yet ${JSON.stringify(truncated)}`);
        }
      }
      expect(wrong).toEqual([]);
    });
  }
});

describe('a damaged record costs that record only', () => {
  it.each([
    ['incl_len 0x7fffffff', 0x7fffffff],
    ['incl_len 0xffffffff', 0xffffffff],
    ['incl_len 64 MiB + 1', 0x04000001],
  ])('pcap, every record in turn with %s: the others are all analysed', async (_what, value) => {
    const bytes = smallSeed().bytes;
    const layout = layoutOf(bytes);
    const path = tmpFile('damaged.pcap', '');
    const wrong: string[] = [];
    for (const [i, u] of layout.units.entries()) {
      const b = Buffer.from(bytes);
      b.writeUInt32LE(value, u.start + 8);
      writeFileSync(path, b);
      const r = await analyzeJson(path);
      const report = JSON.parse(r.out) as { inputs: { packets: number; notes: string[] }[] };
      const packets = report.inputs[0]!.packets;
      if (packets !== layout.units.length - 1) wrong.push(`record ${i + 1}: ${packets} packets of ${layout.units.length - 1}`);
      const notes = report.inputs[0]!.notes.join(' | ');
      if (!notes.includes(`record at byte ${u.start}`)) wrong.push(`record ${i + 1}: notes do not name the record at byte ${u.start}: ${notes}`);
    }
    expect(wrong).toEqual([]);
  });
});

function pcapngOfSmall(): Buffer {
  // The same conversation as smallSeed(), written as pcapng (SHB, IDB, EPBs).
  const s = new Scenario();
  const c = s.connect({ client: '10.0.0.1:50000', broker: '10.0.0.2:9092' });
  c.request({ apiKey: 18, apiVersion: 3, clientId: 'tiny' });
  c.close();
  return s.pcapng();
}

