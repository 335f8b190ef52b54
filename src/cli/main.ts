/**
 * The command line: parse options, wire the stages, render, set the exit code. Thin on purpose:
 * `run()` takes argv and an Io and returns the exit code (0 clean, 1 findings at or above
 * --fail-on, 2 usage or input error), so tests drive it without a process.
 */
import { Command, CommanderError, Option } from 'commander';
import { CaptureError } from '../capture/types.js';
import { BaselineError } from '../analysis/baseline.js';
import { FilterError } from '../analysis/filters.js';
import { SummaryError } from '../analysis/summary-io.js';
import { RULES, ruleById } from '../analysis/rules/index.js';
import { registerShow } from './show-command.js';
import { DEFAULT_KAFKA_PORTS } from '../analysis/run.js';
import { safeJson } from '../base/json-text.js';
import { wrap } from '../report/wrap.js';
import { TIME_FORMATS } from '../report/clock.js';
import { runCommand } from './commands.js';
import { ANALYZE_FORMATS } from './report-writer.js';
import { ExportError } from '../export/errors.js';
import { ConfigError } from './config.js';
import { UsageError } from './options.js';
import { EXIT_CLEAN, EXIT_ERROR, GateStatus, packageVersion, type Io } from './io.js';
import { OutputClosed } from './output.js';
import { SchemaError } from '../kafka/protocol.js';
import { isatty } from 'node:tty';

export type { Io } from './io.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Options shared by every command that reads captures. */
function addCaptureOptions(cmd: Command): Command {
  return cmd
    .option('-p, --port <ports>', `Kafka broker ports, comma-separated (default: ${DEFAULT_KAFKA_PORTS.join(',')})`)
    .option('--no-detect', 'do not detect Kafka on other ports from the traffic itself')
    .option('--tls-keylog <file>', 'NSS key log (SSLKEYLOGFILE) to decrypt TLS connections with; repeatable. A secret: never printed', collect)
    .option('--max-frame-bytes <size>', 'larger frames mean the stream is out of sync (default: 100MiB, socket.request.max.bytes)')
    .option('--max-connections <n>', 'live TCP connections tracked at once; the least recently active is retired beyond (default: 100000)')
    .option('--idle-timeout <seconds>', 'retire a connection idle this long in capture time (default: 600)')
    .option('--max-connection-summaries <n>', 'connections kept per capture for instances and the connection list; later ones are counted only (default: 250000)')
    .option('--max-findings <n>', 'findings of one rule listed per capture; the rest are counted only (default: 1000)')
    .option('-j, --jobs <n>', 'captures analysed in parallel, on this thread and worker threads (default: the number of cores minus one)')
    .option('-q, --quiet', 'no progress line on stderr')
    .option('--instance <id>', 'only this client instance (base64 or hex UUID, or a unique prefix)')
    .option('--client-id <clientId>', 'only connections that name this ClientId')
    .option('--client <host[:port]>', 'only this client address')
    .option('--broker <host[:port]>', 'only this broker address')
    .option('--api <apis>', 'only these APIs, e.g. Produce,Fetch (names or keys)')
    .option('--since <time>', 'only from this time: 2026-12-01, 2026-12-01 02:00:00 (UTC unless a zone is given), or an offset from the capture start such as 90s or 5m')
    .option('--until <time>', 'only up to this time (same forms as --since)')
    .option('--max-telemetry-bytes <size>', 'largest PushTelemetry frame kept, and the most its metrics may decompress to, when they are decoded (default: 16MiB)')
    .option('--kafka-specs <path>', "decode with your Kafka's message schemas: a folder of its common/message JSON files or a kafka-clients jar")
    .addOption(
      new Option('--kip-1313 <revision>', 'the KIP-1313 revision request headers are judged by: voting (tag 0 in header v2 on every request) or accepted (header v3: the ID on the first request only)')
        .choices(['voting', 'accepted'])
        .default('voting'),
    )
    .option('--allow-empty', 'no Kafka found, or filters that match nothing, is not an error (exit 0, not 2)')
    .addOption(timeFormatOption());
}

/** -t as tshark's: how tables show times. */
function timeFormatOption(): Option {
  return new Option('-t, --time-format <format>', 'times in tables: ad (UTC with date, ISO 8601), a (UTC time of day), l (local, from TZ), r (seconds since the first packet), e (epoch); u, ud as a, ad')
    .choices(TIME_FORMATS)
    .default('ad');
}

/** Options shared by the commands that produce a report (analyze, merge). */
function addReportOptions(cmd: Command, formats: readonly string[]): Command {
  return cmd
    .addOption(new Option('-f, --format <format>', 'output format').choices(formats).default('table'))
    .addOption(new Option('--fail-on <severity>', 'exit 1 when a finding is at least this severe').choices(['error', 'warning', 'info', 'none']).default('error'))
    .option('--rule <rule=severity>', 'set a rule\'s severity (error, warning, info or off); repeatable', collect)
    .option('--config <file>', 'rule settings file (default: the nearest kcid.config.json, from the current folder up to the repository root)')
    .option('--no-config', 'ignore any kcid.config.json (rule settings from the command line only)')
    .option('--verbose', 'say on stderr which config file is in use')
    .option('--baseline <file>', 'report only findings not recorded in this baseline')
    .option('--write-baseline <file>', "record this run's findings as the baseline")
    .option('-o, --output <file>', 'write the report to this file instead of stdout');
}

/** Options the user set on the command line (not defaults): they win over the config file. */
const givenOnCli =
  (cmd: Command) =>
  (option: string): boolean =>
    cmd.getOptionValueSource(option) === 'cli';

export { ANALYZE_FORMATS };

export async function run(argv: string[], io: Io): Promise<number> {
  let exitCode = EXIT_CLEAN;
  const gate = io.gate ?? new GateStatus();
  io = { ...io, gate };
  const program = new Command('kcid')
    .description('Analyse Apache Kafka wire traffic in pcap/pcapng captures: client instance IDs (KIP-1313) and the rules around them.')
    .version(packageVersion(), '-V, --version')
    .option('--color', 'colour the output even when it is not a terminal (as FORCE_COLOR=1)')
    .option('--no-color', 'no colour (as NO_COLOR=1)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(`kcid: ${s.replace(/^error: /, '')}`),
    });

  addReportOptions(
    addCaptureOptions(
      program
        .command('analyze')
        .description('Group Kafka traffic by client instance and report violations of the KIP-1313 rules')
        .argument('<captures...>', "pcap or pcapng files (gzip ok), or '-' for stdin"),
    )
      .option('--follow', "print each finding as it is found, the summary at end of input or Ctrl-C (for live input: '-')")
      .option('--telemetry', 'also show the KIP-714 telemetry conversations, every push decoded (JSON: a telemetry member; the telemetry rules run without it)'),
    ANALYZE_FORMATS,
  ).action(async (captures: string[], o: object, cmd: Command) => {
    exitCode = await runCommand('analyze', captures, o, io, givenOnCli(cmd));
  });

  addCaptureOptions(
    program
      .command('requests')
      .description('List every Kafka request with its header fields and the response that answers it')
      .argument('<captures...>', "pcap or pcapng files (gzip ok), or '-' for stdin")
      .addOption(new Option('-f, --format <format>', 'output format').choices(['table', 'ndjson', 'parquet']).default('table'))
      .option('--follow', "print each request as soon as it is answered or given up on (for live input: '-')")
      .option('--bodies', "decode every request and response body (ndjson: Kafka's JSON converter form, secrets hidden; table: a summary)")
      .option('--max-body-bytes <size>', 'with --bodies: bytes of each frame kept for decoding; a larger frame is decoded as far as that (default: 8MiB)')
      .option('-o, --output <file>', 'write to this file instead of stdout'),
  ).action(async (captures: string[], o: object, cmd: Command) => {
    exitCode = await runCommand('requests', captures, o, io, givenOnCli(cmd));
  });

  addCaptureOptions(
    program
      .command('clients')
      .description('One row per client instance: IDs, software, addresses, brokers, requests, errors, latency, findings; --instance for one in detail')
      .argument('<captures...>', "pcap or pcapng files (gzip ok), or '-' for stdin")
      .addOption(new Option('-f, --format <format>', 'output format').choices(['table', 'json']).default('table'))
      .option('--rule <rule=severity>', "set a rule's severity (error, warning, info or off); repeatable", collect)
      .option('--config <file>', 'rule settings file (default: the nearest kcid.config.json, from the current folder up to the repository root)')
    .option('--no-config', 'ignore any kcid.config.json (rule settings from the command line only)')
    .option('--verbose', 'say on stderr which config file is in use')
      .option('-o, --output <file>', 'write to this file instead of stdout'),
  ).action(async (captures: string[], o: object, cmd: Command) => {
    exitCode = await runCommand('clients', captures, o, io, givenOnCli(cmd));
  });

  addCaptureOptions(
    program
      .command('export')
      .description('Write Parquet tables (requests, connections, instances, findings, telemetry) per capture, Hive-style, for DuckDB, Spark or Trino')
      .argument('<captures...>', "pcap or pcapng files (gzip ok), or '-' for stdin")
      .requiredOption('--to <dir>', 'the folder: DIR/<table>/capture=NAME/part-0.parquet')
      .option('--name <name>', 'the capture name in the layout (one input; default: the file name without extensions, stdin for -)')
      .option('--overwrite', 'replace a capture exported before (by default that is an error)')
      .option('--rule <rule=severity>', "set a rule's severity (error, warning, info or off); repeatable", collect)
      .option('--config <file>', 'rule settings file (default: the nearest kcid.config.json, from the current folder up to the repository root)')
    .option('--no-config', 'ignore any kcid.config.json (rule settings from the command line only)')
    .option('--verbose', 'say on stderr which config file is in use'),
  ).action(async (captures: string[], o: object, cmd: Command) => {
    exitCode = await runCommand('export', captures, o, io, givenOnCli(cmd));
  });

  addReportOptions(
    program
      .command('merge')
      .description("Combine partial results ('kcid analyze --format summary-json') into one report")
      .argument('<summaries...>', 'summary files'),
    ANALYZE_FORMATS,
  )
    .option('--instance <id>', 'only this client instance')
    .option('--client-id <clientId>', 'only connections that name this ClientId')
    .option('--client <host[:port]>', 'only this client address')
    .option('--broker <host[:port]>', 'only this broker address')
    .option('--api <apis>', 'only these APIs')
    .option('--since <time>', 'only from this time')
    .option('--until <time>', 'only up to this time')
    .option('--allow-empty', 'no Kafka found, or filters that match nothing, is not an error (exit 0, not 2)')
    .option('--telemetry', 'also show the KIP-714 telemetry conversations the summaries hold (JSON: a telemetry member)')
    .addOption(timeFormatOption())
    .action(async (files: string[], o: object, cmd: Command) => {
      exitCode = await runCommand('merge', files, o, io, givenOnCli(cmd));
    });

  addCaptureOptions(
    program
      .command('telemetry')
      .description('KIP-714 client telemetry per client instance: subscriptions, each push and the metrics inside it, and the conversation checked')
      .argument('<captures...>', "pcap or pcapng files (gzip ok), or '-' for stdin")
      .addOption(new Option('-f, --format <format>', 'output format').choices(['table', 'json']).default('table'))
      .option('--rule <rule=severity>', "set a rule's severity (error, warning, info or off); repeatable", collect)
      .option('--config <file>', 'rule settings file (default: the nearest kcid.config.json, from the current folder up to the repository root)')
    .option('--no-config', 'ignore any kcid.config.json (rule settings from the command line only)')
    .option('--verbose', 'say on stderr which config file is in use')
      .option('-o, --output <file>', 'write to this file instead of stdout'),
  ).action(async (captures: string[], o: object, cmd: Command) => {
    exitCode = await runCommand('telemetry', captures, o, io, givenOnCli(cmd));
  });

  registerShow(program, io, (code) => (exitCode = code));

  program
    .command('rules')
    .description('List the rules, or explain one')
    .argument('[rule]', 'a rule id')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action((id: string | undefined, o: { format: string }) => {
      exitCode = rulesCommand(id, o.format, io);
    });

  // --color/--no-color may come before or after the command: read once the command line is parsed.
  program.hook('preAction', () => {
    const color = program.opts<{ color?: boolean }>().color;
    if (color !== undefined) io = { ...io, color };
  });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT_CLEAN : EXIT_ERROR;
    // `kcid requests big.pcap | head`: the reader has what it wanted; a gate still fails on what was found.
    if (e instanceof OutputClosed) return gate.code;
    if (
      e instanceof CaptureError ||
      e instanceof UsageError ||
      e instanceof FilterError ||
      e instanceof SummaryError ||
      e instanceof ConfigError ||
      e instanceof BaselineError ||
      e instanceof SchemaError ||
      e instanceof ExportError
    ) {
      io.stderr.write(`kcid: ${(e as Error).message}\n`);
      return EXIT_ERROR;
    }
    const message = e instanceof Error ? e.message : String(e);
    io.stderr.write(`kcid: internal error: ${message}${io.env.KCID_DEBUG ? `\n${(e as Error).stack ?? ''}` : ' (set KCID_DEBUG=1 for details)'}\n`);
    return EXIT_ERROR;
  }
}

/** Which revision of KIP-1313 a rule comes from (../shared/spec: the voting revision, then the accepted one). */
const REVISION_TEXT = {
  voting: 'the voting revision (request header v2: "tag 0 introduces client instance ID", on every request).',
  accepted:
    'the accepted revision (request header v3: "If a connection uses the v3 request header in its first request, it must specify the client instance ID and then omit the client instance ID from all subsequent requests on that connection").',
  both: 'both the voting revision (request header v2) and the accepted one (request header v3).',
} as const;

/** A rule as `kcid rules --format json` prints it. */
const ruleJson = (r: (typeof RULES)[number]) => ({ id: r.id, severity: r.severity, revision: r.revision ?? null, summary: r.summary, explanation: r.explanation, spec: r.spec });

function rulesCommand(id: string | undefined, format: string, io: Io): number {
  if (format === 'json') {
    const r = id === undefined ? undefined : ruleById(id);
    if (id !== undefined && r === undefined) throw new UsageError(`unknown rule '${id}' (see 'kcid rules' for the list)`);
    io.stdout.write(`${safeJson(r === undefined ? RULES.map(ruleJson) : ruleJson(r), 2)}\n`);
    return EXIT_CLEAN;
  }
  const width = io.stdout.isTTY === true ? (io.stdout.columns ?? 80) : Infinity;
  if (id === undefined) {
    // On a terminal each summary wraps under its column (under the rule on a very narrow one); into a pipe, one line each.
    const idWidth = Math.max(...RULES.map((r) => r.id.length));
    const indent = idWidth + 2 + 7 + 2 + 8 + 2;
    for (const r of RULES) {
      const head = `${r.id.padEnd(idWidth)}  ${r.severity.padEnd(7)}  ${(r.revision ?? '-').padEnd(8)}  `;
      if (width - indent >= 30) {
        io.stdout.write(`${wrap(r.summary, width - indent).map((l, i) => (i === 0 ? head : ' '.repeat(indent)) + l).join('\n')}\n`);
      } else {
        io.stdout.write(`${r.id}  ${r.severity}  ${r.revision ?? '-'}\n${wrap(r.summary, Math.max(20, width - 4)).map((l) => `    ${l}`).join('\n')}\n`);
      }
    }
    return EXIT_CLEAN;
  }
  const r = ruleById(id);
  if (r === undefined) throw new UsageError(`unknown rule '${id}' (see 'kcid rules' for the list)`);
  const revision = r.revision === undefined ? '' : `\n\nKIP-1313 revision: ${REVISION_TEXT[r.revision]}`;
  const text = `${r.id} (${r.severity})\n\n${r.summary}\n\n${r.explanation}\n\nSpec: ${r.spec}${revision}`;
  // On a terminal, paragraphs wrap at spaces to its width rather than mid-word by the terminal.
  const fit = (line: string) => (width === Infinity ? line : wrap(line, width).join('\n'));
  io.stdout.write(`${text.split('\n').map(fit).join('\n')}\n`);
  return EXIT_CLEAN;
}

/** The signals that end --follow as end of input would: the summary is printed and the gate's exit code returned. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function main(argv: string[]): Promise<number> {
  // `kcid requests big.pcap | head`: a closed pipe is the reader's choice, not an error; the exit
  // code is what was found so far (1 after a finding at or above --fail-on).
  const gate = new GateStatus();
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(gate.code);
      throw e;
    });
  }
  return run(argv, {
    gate,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    // isatty, not process.stdin.isTTY: making the stdin stream costs a run 15 ms it may not need.
    stdinIsTTY: isatty(0),
    releaseInput: () => process.stdin.destroy(),
    // Ctrl-C, and the ends systemd, docker stop and timeout send (SIGTERM) or a closed terminal (SIGHUP).
    onInterrupt: (handler) => {
      for (const signal of STOP_SIGNALS) process.on(signal, handler);
      return () => {
        for (const signal of STOP_SIGNALS) process.off(signal, handler);
      };
    },
  });
}
