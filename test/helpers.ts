/**
 * Shared test helpers: run the whole pipeline on a built capture, or the CLI in-process; compare
 * with a golden file; skip a test with its reason; find the tools tests of other people's code use.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { expect } from 'vitest';
import { buildReport, type Report, type ReportOptions } from '../src/analysis/report.js';
import { analyzeInput, DEFAULT_MAX_FRAME_BYTES, type AnalyzeOptions } from '../src/analysis/run.js';
import type { CaptureSummary, Finding } from '../src/analysis/types.js';
import { run, type Io } from '../src/cli/main.js';
import { tmpDir } from './builder/capture.js';
import { uuidFromHex } from './builder/kafka.js';
import type { Scenario } from './builder/scenario.js';

/** Is `tool` on the PATH (tshark, kcat, tcpdump, ...)? Tests of other people's tools skip without them. */
export function onPath(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;
}

declare module 'vitest' {
  interface TaskMeta {
    /** Why the test (or every test of the suite) is skipped: test/skip-report.ts prints it. */
    skipReason?: string;
  }
}

/**
 * Options for `describe(name, options, fn)` or `it(...)`: skipped unless `ok`, with `reason` for the
 * list of skips printed at the end of `npm test` (test/skip-report.ts; under CI=true a skip not on
 * test/skips-allowed.json fails the run). Say what is missing and how to get it.
 */
export function skipUnless(ok: unknown, reason: string): { skip: boolean; meta: { skipReason: string } } {
  return { skip: !ok, meta: { skipReason: reason } };
}

/** Where ../shared's public captures would be: tests over them are listed as skipped without them. */
export const NO_SHARED = '../shared/captures/public is absent (the public captures; CI has them)';
/** util-linux's `script`, which runs kcid in a real pseudo-terminal. */
export const HAVE_SCRIPT = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
export const NO_SCRIPT = '`script` (util-linux) is not on the PATH: no pseudo-terminal to run kcid in';
export const NO_OPENSSL = 'no openssl on the PATH to make the test certificate (Debian: openssl; .ci/run installs it)';
export const NO_TSHARK = 'tshark is not on the PATH (Debian: apt-get install tshark; .ci/run installs it)';

/**
 * `actual` holds exactly the bytes of `expected`. Faster than toEqual on large buffers (vitest's
 * deep equality walks a typed array index by index as object keys: seconds for a few MB); on a
 * difference it shows the first differing byte and the bytes around it.
 */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const e = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  if (a.equals(e)) return;
  let at = 0;
  while (at < a.length && at < e.length && a[at] === e[at]) at++;
  const around = (b: Buffer): string => b.subarray(Math.max(0, at - 16), at + 16).toString('hex');
  expect({ length: a.length, firstDifference: at, bytes: around(a) }).toEqual({ length: e.length, firstDifference: at, bytes: around(e) });
}

const GOLDEN = new URL('./golden/', import.meta.url);
export const golden = (name: string): URL => new URL(name, GOLDEN);

/**
 * `actual` must equal test/golden/NAME. A missing golden fails; `UPDATE_GOLDEN=1` writes the goldens
 * instead of comparing (review the diff), and is refused under CI.
 */
export function checkGolden(name: string, actual: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = golden(name);
  if (env.UPDATE_GOLDEN === '1') {
    if (env.CI !== undefined && env.CI !== '' && env.CI !== 'false') throw new Error('UPDATE_GOLDEN=1 under CI: goldens are written by hand, then reviewed');
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file)) throw new Error(`test/golden/${name} is missing: UPDATE_GOLDEN=1 npx vitest run <this test file> writes it (review it, then commit it)`);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}

/**
 * A Chromium or Chrome for the browser tests, found as puppeteer users expect: CHROME_PATH,
 * PUPPETEER_EXECUTABLE_PATH or CHROMIUM if set (then only that), else the usual names on the PATH
 * (Debian's `chromium` is /usr/bin/chromium), else a browser puppeteer downloaded into its cache.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const v of ['CHROME_PATH', 'PUPPETEER_EXECUTABLE_PATH', 'CHROMIUM']) {
    const p = env[v];
    if (p !== undefined && p !== '') return existsSync(p) ? p : null;
  }
  const names = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    for (const n of names) if (dir !== '' && existsSync(join(dir, n))) return join(dir, n);
  }
  const cache = join(env.PUPPETEER_CACHE_DIR ?? join(homedir(), '.cache', 'puppeteer'), 'chrome');
  if (existsSync(cache)) {
    const found = spawnSync('find', [cache, '-type', 'f', '-name', 'chrome', '-perm', '-u+x'], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l !== '').sort();
    if (found.length > 0) return found.at(-1)!;
  }
  return null;
}

/** Four client instance IDs with their Kafka (base64url) spelling, checked by hand. */
export const ID_A = uuidFromHex('0123456789abcdef0123456789abcdef');
export const ID_A_B64 = 'ASNFZ4mrze8BI0VniavN7w';
export const ID_B = uuidFromHex('f0e1d2c3b4a5968778695a4b3c2d1e0f');
export const ID_B_B64 = '8OHSw7Sllod4aVpLPC0eDw';
export const ID_C = uuidFromHex('11111111222222223333333344444444');
export const ID_C_B64 = 'ERERESIiIiIzMzMzRERERA';
export const ID_D = uuidFromHex('99999999aaaaaaaabbbbbbbbcccccccc');
export const ID_D_B64 = 'mZmZmaqqqqq7u7u7zMzMzA';
export const ZERO = new Uint8Array(16);

export const DEFAULTS: AnalyzeOptions = { kafkaPorts: new Set([9092]), detect: true, maxFrameBytes: DEFAULT_MAX_FRAME_BYTES };

export async function analyzeFiles(files: string[], opts: Partial<AnalyzeOptions> = {}, report: ReportOptions = {}): Promise<Report> {
  const summary: CaptureSummary = { version: 1, inputs: [], connections: [], findings: [] };
  for (const [i, file] of files.entries()) {
    const r = await analyzeInput(file, i, { ...DEFAULTS, ...opts });
    summary.inputs.push(r.input);
    summary.connections.push(...r.connections);
    summary.findings.push(...r.findings);
    for (const t of r.telemetry ?? []) (summary.telemetry ??= []).push(t);
  }
  return buildReport(summary, report);
}

export async function analyzeScenario(s: Scenario, opts: Partial<AnalyzeOptions> = {}): Promise<Report> {
  return analyzeFiles([s.file()], opts);
}

/** Findings as [rule, frame, message] triples, the shape most tests compare. */
export function brief(findings: readonly Finding[]): [string, number | null, string][] {
  return findings.map((f) => [f.rule, f.frame, f.message]);
}

export function ruleIds(report: Report): string[] {
  return report.findings.map((f) => f.rule);
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `kcid ARGS` in-process with a fake terminal: not a TTY and no environment unless asked. */
export async function runKcid(args: string[], o: { tty?: boolean; env?: NodeJS.ProcessEnv; columns?: number; cwd?: string } = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    stdout: { write: (s: string) => (stdout += s), isTTY: o.tty ?? false, columns: o.columns ?? 200 },
    stderr: { write: (s: string) => (stderr += s), isTTY: false },
    env: o.env ?? {},
    cwd: o.cwd ?? tmpDir(),
  };
  const code = await run(args, io);
  return { code, stdout, stderr };
}
