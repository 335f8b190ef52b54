/** Shared test helpers: run the whole pipeline on a built capture, or the CLI in-process. */
import { spawnSync } from 'node:child_process';
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
