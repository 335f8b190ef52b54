/**
 * `npm run fuzz -- flood [--connections N] [--mode M] [--max-rss-mb MB]`: writes each flood capture
 * of flood.ts at N/4, N/2 and N packets, runs `kcid analyze --format json` on it in a child process,
 * and reports time and peak resident memory. Fails (exit 1) when a run does not exit 0/1, when
 * memory passes the limit, when time grows more than 6 times for 4 times the input (not linear),
 * or, for the floods of one connection per packet, when memory grows more than 1.5 times from N/2
 * to N. By N/2 = 500,000 those have passed the caps on live connections (100,000) and summaries
 * (250,000), so what is live stays the same from there: linear growth would double; what remains
 * is old-generation garbage V8 lets build up between full collections (measured about 1.4x).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { floodCapture, FLOOD_MODES, type FloodMode } from './flood.js';

interface FloodRun {
  mode: FloodMode;
  packets: number;
  bytes: number;
  code: number;
  ms: number;
  maxRssMb: number;
  stderr: string;
}

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** Runs analyze on `file` in a child process that reports its own peak RSS. */
function analyzeInChild(file: string, extra: string[]): { code: number; ms: number; maxRssMb: number; stderr: string } {
  const script =
    `const { main } = await import(${JSON.stringify(CLI)});` +
    `const code = await main(process.argv.slice(1));` +
    `process.stderr.write('maxrss ' + process.resourceUsage().maxRSS + '\\n');` +
    `process.exitCode = code;`;
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, 'analyze', '--format', 'json', '--fail-on', 'none', ...extra, file], {
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 16 << 20,
  });
  const ms = Date.now() - started;
  const stderr = r.stderr.toString();
  const m = /maxrss (\d+)/.exec(stderr);
  return { code: r.status ?? -1, ms, maxRssMb: m ? Math.round(Number(m[1]) / 1024) : -1, stderr: stderr.replace(/maxrss \d+\n/, '').trim() };
}

export function flood(argv: string[]): number {
  let n = 1_000_000;
  let modes: FloodMode[] = [...FLOOD_MODES];
  let maxRssMb = 2048;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--connections') n = Number(argv[++i]);
    else if (a === '--mode') modes = [argv[++i] as FloodMode];
    else if (a === '--max-rss-mb') maxRssMb = Number(argv[++i]);
    else throw new Error(`unknown option ${a}\nusage: npm run fuzz -- flood [--connections N] [--mode ${FLOOD_MODES.join('|')}] [--max-rss-mb MB]`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'kcid-flood-'));
  const runs: FloodRun[] = [];
  let failed = false;
  try {
    for (const mode of modes) {
      // The probe floods carry 1400 bytes a packet: a tenth as many packets keeps the file near 150 MB.
      const full = mode === 'probe' || mode === 'frame' ? Math.ceil(n / 10) : n;
      const sizes = [Math.ceil(full / 4), Math.ceil(full / 2), full];
      const done: FloodRun[] = [];
      for (const packets of sizes) {
        const file = join(dir, `${mode}-${packets}.pcap`);
        const bytes = floodCapture(packets, mode);
        writeFileSync(file, bytes);
        const r = { mode, packets, bytes: bytes.length, ...analyzeInChild(file, []) };
        rmSync(file);
        runs.push(r);
        const problems: string[] = [];
        if (r.code !== 0 && r.code !== 1) problems.push(`exit ${r.code}: ${r.stderr}`);
        if (r.maxRssMb > maxRssMb) problems.push(`peak RSS ${r.maxRssMb} MB > ${maxRssMb} MB`);
        const quarter = done[0];
        const half = done[1];
        if (packets === full && quarter !== undefined && r.ms > 6 * Math.max(quarter.ms, 200)) {
          problems.push(`time ${r.ms} ms for 4x the packets of ${quarter.ms} ms: not linear`);
        }
        const pastCaps = half !== undefined && half.packets >= 350_000 && mode !== 'probe' && mode !== 'frame';
        if (packets === full && pastCaps && r.maxRssMb > 1.5 * Math.max(half.maxRssMb, 200)) {
          problems.push(`peak RSS ${r.maxRssMb} MB for 2x the packets of ${half.maxRssMb} MB: not flat past the caps`);
        }
        failed ||= problems.length > 0;
        process.stdout.write(
          `flood ${mode.padEnd(8)} ${String(packets).padStart(8)} packets ${(bytes.length / 1048576).toFixed(1).padStart(6)} MiB: ` +
            `exit ${r.code}, ${String(r.ms).padStart(6)} ms, peak RSS ${String(r.maxRssMb).padStart(5)} MB${problems.length > 0 ? `  FAIL: ${problems.join('; ')}` : ''}\n`,
        );
        done.push(r);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}
