/**
 * The command line: parse options, wire the stages, render, set the exit code. Thin on purpose:
 * `run()` takes argv and an Io and returns the exit code (0 clean, 1 findings at or above
 * --fail-on, 2 usage or input error), so tests drive it without a process.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { CaptureError } from '../capture/types.js';
import { buildReport, reachesThreshold } from '../analysis/report.js';
import { analyzeInput, DEFAULT_KAFKA_PORT, DEFAULT_MAX_FRAME_BYTES, type AnalyzeOptions } from '../analysis/run.js';
import type { CaptureSummary, Finding } from '../analysis/types.js';
import { RULES, ruleById } from '../analysis/rules/index.js';
import { renderJson } from '../report/json.js';
import { RequestRows, requestNdjson, requestTableHeader, requestTableRow } from '../report/requests.js';
import { makeStyle, wantsColor } from '../report/style.js';
import { renderTable } from '../report/table.js';
import { Progress } from './progress.js';
import { parseChoice, parseFailOn, parsePorts, parseSize, UsageError, type FailOn } from './options.js';

export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean; columns?: number };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

const EXIT_CLEAN = 0;
const EXIT_FINDINGS = 1;
const EXIT_ERROR = 2;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

interface CommonOptions {
  port?: string;
  detect: boolean;
  maxFrameBytes?: string;
  quiet?: boolean;
}

function analyzeOptions(o: CommonOptions, io: Io, progress: Progress | null): AnalyzeOptions {
  const opts: AnalyzeOptions = {
    kafkaPorts: o.port === undefined ? new Set([DEFAULT_KAFKA_PORT]) : parsePorts(o.port),
    detect: o.detect,
    maxFrameBytes: o.maxFrameBytes === undefined ? DEFAULT_MAX_FRAME_BYTES : parseSize(o.maxFrameBytes, '--max-frame-bytes'),
  };
  if (progress !== null) opts.onProgress = (read, total, packets) => progress.update(read, total, packets);
  void io;
  return opts;
}

function addCommonOptions(cmd: Command): Command {
  return cmd
    .option('-p, --port <ports>', `Kafka broker ports, comma-separated (default: ${DEFAULT_KAFKA_PORT})`)
    .option('--no-detect', 'do not detect Kafka on other ports from the traffic itself')
    .option('--max-frame-bytes <size>', 'larger frames mean the stream is out of sync (default: 100MiB, socket.request.max.bytes)')
    .option('-q, --quiet', 'no progress line on stderr');
}

/** A buffered writer: many small writes become few large ones. */
class Out {
  private buf = '';
  constructor(private readonly stream: Io['stdout']) {}
  write(s: string): void {
    this.buf += s;
    if (this.buf.length >= 65536) this.flush();
  }
  flush(): void {
    if (this.buf.length > 0) this.stream.write(this.buf);
    this.buf = '';
  }
}

async function analyzeCommand(captures: string[], o: CommonOptions & { format: string; failOn: string }, io: Io): Promise<number> {
  const format = parseChoice(o.format, ['table', 'json'] as const, '--format');
  const failOn: FailOn = parseFailOn(o.failOn);
  const progress = Progress.forStream(io.stderr, o.quiet === true);
  const opts = analyzeOptions(o, io, progress);
  const summary: CaptureSummary = { version: 1, inputs: [], connections: [], findings: [] };
  for (const [i, file] of captures.entries()) {
    progress?.start(file);
    const result = await analyzeInput(file, i, opts);
    progress?.done();
    summary.inputs.push(result.input);
    summary.connections.push(...result.connections);
    summary.findings.push(...result.findings);
  }
  const report = buildReport(summary);
  const out = new Out(io.stdout);
  out.write(format === 'json' ? renderJson(report) : renderTable(report, makeStyle(wantsColor(io.stdout, io.env)), io.stdout.isTTY === true ? (io.stdout.columns ?? 200) : 200));
  out.flush();
  return reachesThreshold(report, failOn) ? EXIT_FINDINGS : EXIT_CLEAN;
}

async function requestsCommand(captures: string[], o: CommonOptions & { format: string }, io: Io): Promise<number> {
  const format = parseChoice(o.format, ['table', 'ndjson'] as const, '--format');
  const progress = Progress.forStream(io.stderr, o.quiet === true);
  const opts = analyzeOptions(o, io, progress);
  const out = new Out(io.stdout);
  const multiple = captures.length > 1;
  if (format === 'table') out.write(requestTableHeader());
  for (const [i, file] of captures.entries()) {
    const rows = new RequestRows(i, (row) => out.write(format === 'ndjson' ? requestNdjson(row) : requestTableRow(row, multiple)));
    progress?.start(file);
    await analyzeInput(file, i, opts, (_f: Finding) => {}, rows);
    rows.finish();
    progress?.done();
  }
  out.flush();
  return EXIT_CLEAN;
}

function rulesCommand(id: string | undefined, io: Io): number {
  if (id === undefined) {
    const width = Math.max(...RULES.map((r) => r.id.length));
    for (const r of RULES) io.stdout.write(`${r.id.padEnd(width)}  ${r.severity.padEnd(7)}  ${r.summary}\n`);
    return EXIT_CLEAN;
  }
  const r = ruleById(id);
  if (r === undefined) throw new UsageError(`unknown rule '${id}' (see 'kcid rules' for the list)`);
  io.stdout.write(`${r.id} (${r.severity})\n\n${r.summary}\n\n${r.explanation}\n\nSpec: ${r.spec}\n`);
  return EXIT_CLEAN;
}

export async function run(argv: string[], io: Io): Promise<number> {
  let exitCode = EXIT_CLEAN;
  const program = new Command('kcid')
    .description('Analyse Apache Kafka wire traffic in pcap/pcapng captures: client instance IDs (KIP-1313) and the rules around them.')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(`kcid: ${s.replace(/^error: /, '')}`),
    });

  addCommonOptions(
    program
      .command('analyze')
      .description('Group Kafka traffic by client instance and report violations of the KIP-1313 rules')
      .argument('<captures...>', "pcap or pcapng files (gzip ok), or '-' for stdin")
      .addOption(new Option('-f, --format <format>', 'output format').choices(['table', 'json']).default('table'))
      .addOption(new Option('--fail-on <severity>', 'exit 1 when a finding is at least this severe').choices(['error', 'warning', 'info', 'none']).default('error')),
  ).action(async (captures: string[], o: CommonOptions & { format: string; failOn: string }) => {
    exitCode = await analyzeCommand(captures, o, io);
  });

  addCommonOptions(
    program
      .command('requests')
      .description('List every Kafka request with its header fields and the response that answers it')
      .argument('<captures...>', "pcap or pcapng files (gzip ok), or '-' for stdin")
      .addOption(new Option('-f, --format <format>', 'output format').choices(['table', 'ndjson']).default('table')),
  ).action(async (captures: string[], o: CommonOptions & { format: string }) => {
    exitCode = await requestsCommand(captures, o, io);
  });

  program
    .command('rules')
    .description('List the rules, or explain one')
    .argument('[rule]', 'a rule id')
    .action((id: string | undefined) => {
      exitCode = rulesCommand(id, io);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT_CLEAN : EXIT_ERROR;
    if (e instanceof CaptureError || e instanceof UsageError) {
      io.stderr.write(`kcid: ${e.message}\n`);
      return EXIT_ERROR;
    }
    const message = e instanceof Error ? e.message : String(e);
    io.stderr.write(`kcid: internal error: ${message}${io.env.KCID_DEBUG ? `\n${(e as Error).stack ?? ''}` : ' (set KCID_DEBUG=1 for details)'}\n`);
    return EXIT_ERROR;
  }
}

export async function main(argv: string[]): Promise<number> {
  // `kcid requests big.pcap | head`: a closed pipe is the reader's choice, not an error.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(EXIT_CLEAN);
      throw e;
    });
  }
  return run(argv, { stdout: process.stdout, stderr: process.stderr, env: process.env });
}
