/**
 * The commands behind the options: analyze, requests, clients, merge. Each parses its options
 * with pure functions, runs the stages, renders, and returns the exit code.
 */
import { accessSync, constants, readFileSync, statSync, writeFileSync } from 'node:fs';
import { applyBaseline, parseBaseline, writeBaseline } from '../analysis/baseline.js';
import {
  checkWindow,
  filterReport,
  hasFilters,
  parseApis,
  parseEndpointPattern,
  parseTimeBound,
  resolveInstance,
  rowPredicate,
  captureStartUs,
  type Filters,
} from '../analysis/filters.js';
import { pcapMagic } from '../capture/pcap.js';
import { analyzeAll, defaultJobs, mergeResults } from '../analysis/parallel.js';
import { buildReport, reachesThreshold, type Report, type SeveritySetting } from '../analysis/report.js';
import { LiveChecks } from '../analysis/live-checks.js';
import { REPORT_RULES, TELEMETRY_RULES, telemetryNeeds } from '../analysis/rules/index.js';
import { analyzeInput, DEFAULT_KAFKA_PORTS, DEFAULT_MAX_FRAME_BYTES, type AnalyzeOptions } from '../analysis/run.js';
import { mergeSummaries, parseSummary, SummaryError, writeSummaryJson } from '../analysis/summary-io.js';
import type { CaptureSummary, Finding } from '../analysis/types.js';
import type { ConnState } from '../analysis/connection-state.js';
import { findingJson, writeReportJson } from '../report/json.js';
import { safeJson } from '../base/json-text.js';
import { sanitize } from '../base/sanitize.js';
import { RequestRows, RequestTable, requestJson, type RequestRow } from '../report/requests.js';
import { writeRequestNdjson } from '../report/requests-ndjson.js';
import { makeClock, TimeZoneError, type Clock, type TimeFormat } from '../report/clock.js';
import type { Style } from '../report/style.js';
import { activateProtocol, API_KEY, apiLabel } from '../kafka/protocol.js';
import { loadConfig, mergeSeverities, parseRuleSetting, type Config } from './config.js';
import { EXIT_CLEAN, EXIT_FINDINGS, packageVersion, type Io } from './io.js';
import { parseFailOn, parsePorts, parseSize, UsageError, type FailOn } from './options.js';
import { Out, writeProblem } from './output.js';
import { Progress } from './progress.js';
import { DEFAULT_MAX_TELEMETRY_BYTES } from '../telemetry/names.js';

export interface CommonCliOptions {
  port?: string;
  maxConnections?: string;
  idleTimeout?: string;
  maxConnectionSummaries?: string;
  maxFindings?: string;
  detect: boolean;
  maxFrameBytes?: string;
  tlsKeylog?: string[];
  jobs?: string;
  quiet?: boolean;
  instance?: string;
  clientId?: string;
  client?: string;
  broker?: string;
  api?: string;
  since?: string;
  until?: string;
  maxTelemetryBytes?: string;
  telemetry?: boolean;
  kafkaSpecs?: string;
  kip1313?: string;
  allowEmpty?: boolean;
  timeFormat?: string;
}

export interface AnalyzeCliOptions extends CommonCliOptions {
  format: string;
  failOn: string;
  rule?: string[];
  config?: string;
  baseline?: string;
  writeBaseline?: string;
  output?: string;
  follow?: boolean;
}

function parseCount(text: string, option: string, min: number, max: number): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`invalid ${option} '${text}' (expected a whole number from ${min} to ${max.toLocaleString('en-US')})`);
  }
  return Number(text);
}

export function parseJobs(text: string | undefined): number {
  if (text === undefined) return defaultJobs();
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 256) throw new UsageError(`invalid --jobs '${text}' (expected a whole number from 1 to 256)`);
  return Number(text);
}

/** A key log is read by each analysis; a missing or unreadable one is a usage error now, not one per capture. */
function readableKeylog(path: string): string {
  try {
    if (!statSync(path).isFile()) throw new UsageError(`--tls-keylog ${path}: not a file`);
    accessSync(path, constants.R_OK);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`--tls-keylog ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'cannot be read'}`);
  }
  return path;
}

export function captureOptions(o: CommonCliOptions, progress: Progress | null): AnalyzeOptions {
  const opts: AnalyzeOptions = {
    kafkaPorts: o.port === undefined ? new Set(DEFAULT_KAFKA_PORTS) : parsePorts(o.port),
    detect: o.detect,
    maxFrameBytes: o.maxFrameBytes === undefined ? DEFAULT_MAX_FRAME_BYTES : parseSize(o.maxFrameBytes, '--max-frame-bytes'),
  };
  if (o.tlsKeylog !== undefined) opts.tlsKeylogs = o.tlsKeylog.map(readableKeylog);
  if (o.maxConnections !== undefined) opts.maxConnections = parseCount(o.maxConnections, '--max-connections', 1, 10_000_000);
  if (o.idleTimeout !== undefined) opts.idleTimeoutSec = parseCount(o.idleTimeout, '--idle-timeout', 1, 31_536_000);
  if (o.maxConnectionSummaries !== undefined) opts.maxSummaries = parseCount(o.maxConnectionSummaries, '--max-connection-summaries', 1, 100_000_000);
  if (o.maxFindings !== undefined) opts.maxFindings = parseCount(o.maxFindings, '--max-findings', 1, 100_000_000);
  if (o.maxTelemetryBytes !== undefined) opts.maxTelemetryBytes = parseSize(o.maxTelemetryBytes, '--max-telemetry-bytes');
  if (o.telemetry === true) opts.decodeTelemetry = true;
  if (progress !== null) opts.onProgress = (read, total, packets, connections, findings) => progress.update(read, total, packets, connections, findings);
  if (o.kafkaSpecs !== undefined) opts.kafkaSpecs = o.kafkaSpecs;
  if (o.kip1313 === 'accepted') opts.kip1313 = 'accepted';
  // Load the schemas now: a bad --kafka-specs is one line and exit 2, before any capture is read.
  activateProtocol({ kafkaSpecs: opts.kafkaSpecs ?? null, kip1313: opts.kip1313 ?? 'voting' });
  return opts;
}

export function parseFilters(o: Partial<CommonCliOptions>): Filters {
  const f: Filters = {};
  if (o.instance !== undefined) f.instance = o.instance;
  if (o.clientId !== undefined) f.clientId = o.clientId;
  if (o.client !== undefined) f.client = parseEndpointPattern(o.client, '--client');
  if (o.broker !== undefined) f.broker = parseEndpointPattern(o.broker, '--broker');
  if (o.api !== undefined) f.apis = parseApis(o.api);
  if (o.since !== undefined) f.since = parseTimeBound(o.since, '--since');
  if (o.until !== undefined) f.until = parseTimeBound(o.until, '--until');
  checkWindow(f);
  return f;
}

/**
 * `kcid analyze -` typed at a terminal with nothing piped in would wait in silence: say what it is
 * waiting for (stdin is the terminal itself).
 */
function announceStdin(captures: readonly string[], io: Io): void {
  if (captures.includes('-') && io.stdinIsTTY === true) {
    io.stderr.write('kcid: reading a capture from standard input (the terminal): pipe one in, e.g. tcpdump -U -w - | kcid analyze -, or press Ctrl-D\n');
  }
}

/** The same capture twice would count every request twice; '-' can be read once. */
export function checkInputs(files: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f)) throw new UsageError(f === '-' ? "'-' (stdin) can be given only once" : `${what} '${f}' is given twice`);
    seen.add(f);
  }
}

/** The filter options given, as typed: "--broker nothost --api Produce". */
function filterText(o: Partial<CommonCliOptions>): string {
  const names: [keyof CommonCliOptions, string][] = [
    ['instance', '--instance'],
    ['clientId', '--client-id'],
    ['client', '--client'],
    ['broker', '--broker'],
    ['api', '--api'],
    ['since', '--since'],
    ['until', '--until'],
  ];
  return names.flatMap(([key, flag]) => (o[key] === undefined ? [] : [`${flag} ${sanitize(String(o[key]))}`])).join(' ');
}

/**
 * Filters that match nothing usually mean a typo, and a CI gate that checks nothing must not pass:
 * exit 2 with the filters named, unless --allow-empty says an empty match is expected (as eslint
 * refuses patterns that match no file unless told otherwise). Inputs with no Kafka at all, likewise.
 */
function checkNotEmpty(matched: boolean, o: Partial<CommonCliOptions>, filters: Filters): void {
  if (matched || o.allowEmpty === true) return;
  // An analysis that found no Kafka at all must not pass a gate silently either (issue 27).
  if (!hasFilters(filters)) throw new UsageError('no Kafka found in the input (see its capture notes; give --port if Kafka runs on other ports, or --allow-empty if that is expected)');
  throw new UsageError(`the filters match no Kafka connection (${filterText(o)}); give --allow-empty if that is expected`);
}

/** Was this option given on the command line (rather than left at its default)? */
export type GivenOnCli = (option: 'failOn' | 'port' | 'maxFrameBytes') => boolean;

/**
 * kcid.config.json (or --config): its failOn, port and maxFrameBytes apply where the command
 * line did not set them; its rule severities are returned for severities() to merge.
 */
export function applyConfig<T extends { config?: string; failOn?: string; port?: string; maxFrameBytes?: string }>(o: T, given: GivenOnCli, io: Io): Config {
  const config = loadConfig(o.config ?? null, io.cwd ?? process.cwd());
  if (config.failOn !== undefined && !given('failOn')) o.failOn = config.failOn;
  if (config.port !== undefined && !given('port')) o.port = config.port.join(',');
  if (config.maxFrameBytes !== undefined && !given('maxFrameBytes')) o.maxFrameBytes = String(config.maxFrameBytes);
  return config;
}

/** Rule severities: the config file's, then --rule settings on top. */
export function severities(config: Config, o: { rule?: string[] }): Map<string, SeveritySetting> {
  return mergeSeverities(config, (o.rule ?? []).map(parseRuleSetting));
}

/** The clock tables show times with (-t), for the inputs starting at `startUs`. TZ is read for -t l. */
export function clockFor(o: { timeFormat?: string }, startUs: number | null | (() => number | null), io: Io): Clock {
  try {
    return makeClock((o.timeFormat ?? 'ad') as TimeFormat, startUs, io.env.TZ);
  } catch (e) {
    if (e instanceof TimeZoneError) throw new UsageError(e.message);
    throw e;
  }
}

/** Columns for tables: the terminal's, or a fixed 200 when not a terminal (files and CI logs stay stable). */
export function tableWidth(out: Out): number {
  return out.isTTY ? (out.columns ?? 200) : 200;
}

/**
 * Colours for a terminal. The formatters for people (tables, colour, JUnit, SARIF, Markdown) are
 * loaded when asked for: `--format json` in CI does not pay for modules it never uses.
 */
export async function styleFor(out: Out, io: Io): Promise<Style> {
  const { makeStyle, wantsColor } = await import('../report/style.js');
  // --output FILE is never coloured unless --color asks.
  return makeStyle(wantsColor({ isTTY: out.isTTY }, io.env, io.color) && (out.isTTY || io.color === true || !out.toFile));
}

/** From merged summary to the report shown: severities, baseline, filters. */
function reportFrom(summary: CaptureSummary, o: AnalyzeCliOptions, config: Config): Report {
  let report = buildReport(summary, { severities: severities(config, o) });
  if (o.writeBaseline !== undefined) {
    try {
      writeFileSync(o.writeBaseline, writeBaseline(report));
    } catch (e) {
      throw new UsageError(`cannot write --write-baseline ${o.writeBaseline}: ${writeProblem(e)}`);
    }
  }
  if (o.baseline !== undefined) {
    let text: string;
    try {
      text = readFileSync(o.baseline, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read --baseline ${o.baseline}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
    report = applyBaseline(report, parseBaseline(text, o.baseline)).report;
  }
  return filterReport(report, parseFilters(o));
}

/** Writes the report in the chosen format; the JSON formats are written in pieces as they are made. */
async function emit(judged: Report, summary: CaptureSummary, o: AnalyzeCliOptions, config: Config, out: Out, io: Io): Promise<void> {
  const write = (s: string) => out.write(s);
  // The telemetry rules always judge the conversations; --telemetry also shows them (JSON's telemetry member).
  const report = o.telemetry === true ? judged : { ...judged, telemetry: [] };
  if (o.format === 'json') writeReportJson(report, write);
  else if (o.format === 'summary-json') writeSummaryJson(summary, write);
  else out.write(await render(report, o, config, out, io));
}

async function render(report: Report, o: AnalyzeCliOptions, config: Config, out: Out, io: Io): Promise<string> {
  const format = o.format;
  switch (format) {
    case 'ndjson':
      return (await import('../report/ndjson.js')).renderFindingsNdjson(report);
    case 'junit':
      return (await import('../report/junit.js')).renderJunit(report, { failOn: parseFailOn(o.failOn) });
    case 'sarif':
      return (await import('../report/sarif.js')).renderSarif(report, packageVersion(), undefined, severities(config, o));
    case 'markdown':
      return (await import('../report/markdown.js')).renderMarkdown(report, { failOn: parseFailOn(o.failOn) });
    case 'html':
      return (await import('../report/html/page.js')).renderHtml(report, { version: packageVersion() });
    default:
      return (await import('../report/table.js')).renderTable(report, await styleFor(out, io), tableWidth(out), clockFor(o, captureStartUs(report), io), out.isTTY);
  }
}

export async function analyzeCommand(captures: string[], o: AnalyzeCliOptions, io: Io, given: GivenOnCli): Promise<number> {
  const config = applyConfig(o, given, io);
  const failOn = parseFailOn(o.failOn);
  checkInputs(captures, 'capture');
  announceStdin(captures, io);
  if (o.follow === true) return followAnalyze(captures, o, io, config);
  const progress = Progress.forStream(io.stderr, o.quiet === true);
  const opts = captureOptions(o, progress);
  // The telemetry rules read the pushes' metrics unless configured off; --telemetry shows them all.
  if (opts.decodeTelemetry !== true) opts.telemetry = telemetryNeeds(severities(config, o));
  // The page draws traffic over time, and a summary keeps it for `kcid merge --format html`.
  if (o.format === 'html' || o.format === 'summary-json') opts.activity = true;
  parseFilters(o); // fail on a bad filter before reading anything
  if (o.format === 'parquet' && o.output === undefined) throw new UsageError('--format parquet writes a file: give it with -o FILE');
  progress?.start(captures.length === 1 ? captures[0]! : `${captures.length} captures`);
  const summary = await analyzeAll(captures, opts, parseJobs(o.jobs));
  progress?.writing();
  try {
    return await writeReport(summary, o, config, failOn, io);
  } finally {
    progress?.done();
  }
}

export async function mergeCommand(files: string[], o: AnalyzeCliOptions, io: Io, given: GivenOnCli): Promise<number> {
  const config = applyConfig(o, given, io);
  const failOn = parseFailOn(o.failOn);
  checkInputs(files, 'summary');
  const parts = files.map((file) => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new SummaryError(`${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot read: ${(e as Error).message}`}`);
    }
    const capture = captureKind(bytes);
    if (capture !== null) {
      throw new SummaryError(`${file}: is a ${capture} capture, not a summary (analyse it with 'kcid analyze', or make a summary with 'kcid analyze ${file} --format summary-json')`);
    }
    return parseSummary(bytes.toString('utf8'), file);
  });
  return writeReport(mergeSummaries(parts), o, config, failOn, io);
}

/** "pcap", "pcapng" or "gzip" when the bytes start like one (summaries are JSON), else null. */
function captureKind(bytes: Buffer): string | null {
  if (bytes.length < 4) return null;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes.readUInt32BE(0) === 0x0a0d0d0a) return 'pcapng';
  return pcapMagic(bytes) === null ? null : 'pcap';
}

/** From the merged summary (of captures, or of summary files) to the report written, and the exit code. */
async function writeReport(summary: CaptureSummary, o: AnalyzeCliOptions, config: Config, failOn: FailOn, io: Io): Promise<number> {
  if (o.format === 'parquet' && o.output === undefined) throw new UsageError('--format parquet writes a file: give it with -o FILE');
  const out = o.format === 'parquet' ? null : new Out(io.stdout, o.output);
  const report = reportFrom(summary, o, config);
  checkNotEmpty(report.connections.length > 0, o, parseFilters(o));
  if (out === null) (await import('../export/single.js')).writeFindingsParquet(report, o.output!, parquetFileOptions());
  else {
    await emit(report, summary, o, config, out, io);
    out.close();
  }
  return reachesThreshold(report, failOn) ? EXIT_FINDINGS : EXIT_CLEAN;
}

/** One finding as one line, for follow mode's table format: its time first (-t), as tcpdump prints. */
function findingLine(f: Finding, style: Style, clock: Clock): string {
  const api = f.apiKey === null ? '' : `  ${apiLabel(f.apiKey, f.apiVersion ?? 0)} corr ${f.correlationId}`;
  const where = f.client === null ? '' : `  ${f.client} -> ${f.broker}`;
  const time = f.timeUs === null ? '' : `${clock(f.timeUs)}  `;
  return `${time}${style.severity(f.severity)}  ${f.rule}  frame ${f.frame ?? '-'}${where}${api}  ${f.message}\n`;
}

/**
 * `tcpdump -U -w - port 9092 | kcid analyze - --follow`: findings are printed as they are found
 * (one line each; one JSON object each with --format ndjson), those across connections too, when
 * their evidence is complete (live-checks.ts); then, at the end of input or on Ctrl-C, the
 * findings only the whole capture can show and the summary.
 */
async function followAnalyze(captures: string[], o: AnalyzeCliOptions, io: Io, config: Config): Promise<number> {
  if (captures.length !== 1) throw new UsageError('--follow reads one input (use - for stdin)');
  if (o.format !== 'table' && o.format !== 'ndjson') throw new UsageError(`--follow writes table or ndjson, not ${o.format}`);
  const failOn = parseFailOn(o.failOn);
  const settings = severities(config, o);
  const filters = parseFilters(o);
  const out = new Out(io.stdout, o.output, true);
  const style = await styleFor(out, io);
  const { renderInstances, summaryLine } = await import('../report/table.js');
  const controller = new AbortController();
  const stopListening = io.onInterrupt?.(() => controller.abort()) ?? (() => {});
  let startUs: number | null = null;
  const clock = clockFor(o, () => startUs, io);
  const opts: AnalyzeOptions = { ...captureOptions(o, null), signal: controller.signal };
  if (opts.decodeTelemetry !== true) opts.telemetry = telemetryNeeds(settings);
  const show = (f: Finding) => {
    const setting = settings.get(f.rule);
    if (setting === 'off') return;
    const shown = setting === undefined ? f : { ...f, severity: setting };
    if (hasFilters(filters) && filterReport(single(shown), filters).findings.length === 0) return;
    out.write(o.format === 'ndjson' ? `${safeJson(findingJson(shown))}\n` : findingLine(shown, style, clock));
  };
  // The checks across connections print each finding when its evidence is complete, not at the end.
  const live = new LiveChecks(show);
  opts.live = live;
  let result;
  try {
    result = await analyzeInput(captures[0]!, 0, opts, show, { captureStart: (us) => (startUs = us) });
  } finally {
    stopListening();
  }
  const summary = mergeResults([result]);
  const report = reportFrom(summary, o, config);
  checkNotEmpty(report.connections.length > 0, o, filters);
  const crossRules = new Set([...REPORT_RULES, ...TELEMETRY_RULES].map((r) => r.id));
  for (const f of report.findings) if (crossRules.has(f.rule) && !live.shown(f)) out.write(o.format === 'ndjson' ? `${safeJson(findingJson(f))}\n` : findingLine(f, style, clock));
  if (o.format === 'ndjson') {
    out.write(`${safeJson({ summary: { ...report.counts, findings: { ...report.counts.findings } } })}\n`);
  } else {
    out.write(`\n${summaryLine(report)}\n${renderInstances(report, style, tableWidth(out), clock)}\n`);
  }
  out.close();
  return reachesThreshold(report, failOn) ? EXIT_FINDINGS : EXIT_CLEAN;
}

/** A report holding one finding, so the report filters can judge it. */
function single(f: Finding): Report {
  return {
    inputs: [],
    instances: [],
    connections: [],
    findings: [f],
    telemetry: [],
    counts: { connections: 0, requests: 0, responses: 0, instances: 0, findings: { error: 0, warning: 0, info: 0 } },
  };
}

export interface RequestsCliOptions extends CommonCliOptions {
  format: string;
  follow?: boolean;
  output?: string;
  bodies?: boolean;
  maxBodyBytes?: string;
}

/** --max-body-bytes by default: a few MiB holds any body but Produce and Fetch payload, which is sized, never decoded. */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

export async function requestsCommand(captures: string[], o: RequestsCliOptions, io: Io): Promise<number> {
  const follow = o.follow === true;
  checkInputs(captures, 'capture');
  announceStdin(captures, io);
  if (follow && captures.length !== 1) throw new UsageError('--follow reads one input (use - for stdin)');
  const filters = parseFilters(o);
  const progress = follow ? null : Progress.forStream(io.stderr, o.quiet === true);
  const controller = new AbortController();
  const stopListening = follow ? (io.onInterrupt?.(() => controller.abort()) ?? (() => {})) : () => {};
  // Rows show no findings: no rule is run and no telemetry conversation is collected (--bodies decodes each push for its row).
  const opts: AnalyzeOptions = { ...captureOptions(o, progress), telemetry: 'off', judge: false, ...(follow ? { signal: controller.signal } : {}) };
  if (o.maxBodyBytes !== undefined && o.bodies !== true) throw new UsageError('--max-body-bytes goes with --bodies');
  if (o.bodies === true) {
    opts.maxBodyBytes = o.maxBodyBytes === undefined ? DEFAULT_MAX_BODY_BYTES : parseSize(o.maxBodyBytes, '--max-body-bytes');
    // NDJSON shows the bodies as JSON, which the Kafka stage writes from the wire; the table summarises decoded values.
    if (o.format === 'ndjson') opts.bodyForm = 'json';
  }
  // --bodies opens PushTelemetry's metrics too (the analysis keeps those frames whole, up to --max-telemetry-bytes).
  const telemetry = o.bodies === true ? { read: (await import('../telemetry/index.js')).readPushMetrics, maxBytes: opts.maxTelemetryBytes ?? DEFAULT_MAX_TELEMETRY_BYTES } : null;
  const parquet = o.format === 'parquet' ? await requestsParquet(captures, o.output, follow) : null;
  const out = new Out(io.stdout, parquet === null ? o.output : undefined, follow);
  const multiple = captures.length > 1;
  let startUs: number | null = null;
  const clock = clockFor(o, () => startUs, io);
  const tty = out.isTTY;
  // On a terminal (not --follow, where rows must not wait), the first rows decide the column widths.
  const sampling = o.format === 'table' && tty && !follow;
  const sample: RequestRow[] = [];
  let table: RequestTable | null = null;
  const layOut = () => {
    table = new RequestTable({ ...(tty ? { width: out.columns ?? 80 } : {}), ...(sampling ? { sample } : {}), multipleInputs: multiple, clock });
    if (multiple) out.write(inputLegend(captures));
    out.write(table.header());
    for (const row of sample) out.write(table.row(row));
    sample.length = 0;
  };
  if (o.format === 'table' && !sampling) layOut();
  const show = (row: RequestRow, s: ConnState) => {
    if (o.format !== 'table') {
      writeRequestNdjson(out.bytes, row, s);
      return out.wrote();
    }
    if (table !== null) return out.write(table.row(row));
    sample.push(row);
    if (sample.length >= SAMPLE_ROWS) layOut();
  };
  let kept = 0;
  let orphans = 0;
  try {
    for (const [i, file] of captures.entries()) {
      startUs = null;
      const keep = rowPredicate(filters, () => startUs);
      // No row needs `time` as text: NDJSON writes it from timeUs, the table through its clock.
      const rows = new RequestRows(i, (row, s, us) => {
        if (!keep(row, s.clientIds, us)) return;
        kept++;
        if (!row.requestCaptured) orphans++;
        // The Parquet requests table holds requests (a response without its request is not one).
        if (parquet !== null) {
          if (row.requestCaptured) parquet.add(row, us, i);
        } else show(row, s);
      }, o.bodies !== true || parquet !== null ? false : o.format === 'table' ? 'summary' : 'json', telemetry, false);
      rows.captureStart = (us: number) => {
        startUs = us;
      };
      progress?.start(file);
      await analyzeInput(file, i, opts, () => {}, rows);
      rows.finish();
      progress?.done();
    }
    parquet?.close();
  } catch (e) {
    parquet?.abort();
    throw e;
  } finally {
    stopListening();
  }
  if (o.format === 'table') {
    if (table === null) layOut();
    out.write(table!.footer());
    const requests = kept - orphans;
    out.write(`${requests.toLocaleString('en-US')} ${requests === 1 ? 'request' : 'requests'}${orphans === 0 ? '' : `, ${orphans.toLocaleString('en-US')} ${orphans === 1 ? 'response' : 'responses'} whose request was not captured`}\n`);
  }
  out.close();
  checkNotEmpty(kept > 0, o, filters);
  return EXIT_CLEAN;
}

/** Rows `kcid requests` on a terminal measures before it prints the header. */
const SAMPLE_ROWS = 200;

/** "[1] broker-1.pcapng" lines: frames of several inputs show as 2:42, input 2's frame 42. */
export function inputLegend(files: readonly string[]): string {
  return `${files.map((f, i) => `[${i + 1}] ${f === '-' ? '- (standard input)' : sanitize(f)}`).join('\n')}\n`;
}

/** `kcid requests --format parquet -o FILE`: the export's requests table, every capture in one file. */
async function requestsParquet(captures: string[], output: string | undefined, follow: boolean) {
  if (output === undefined) throw new UsageError('--format parquet writes a file: give it with -o FILE');
  if (follow) throw new UsageError('--follow writes table or ndjson, not parquet');
  const { openRequestsParquet } = await import('../export/single.js');
  return openRequestsParquet(captures, output, parquetFileOptions());
}

/** Rows kept for `clients --instance`, at most this many. */
const MAX_TIMELINE_ROWS = 10_000;

export async function clientsCommand(
  captures: string[],
  o: CommonCliOptions & { format: string; rule?: string[]; config?: string; output?: string },
  io: Io,
  given: GivenOnCli,
): Promise<number> {
  const config = applyConfig(o, given, io);
  checkInputs(captures, 'capture');
  announceStdin(captures, io);
  const progress = Progress.forStream(io.stderr, o.quiet === true);
  const opts = captureOptions(o, progress);
  const { instance, ...others } = parseFilters(o);
  const out = new Out(io.stdout, o.output);
  const style = await styleFor(out, io);
  const { renderClientDetail, renderClientsJson, renderClientsTable } = await import('../report/clients.js');
  if (instance === undefined) {
    opts.telemetry = telemetryNeeds(severities(config, o));
    progress?.start(captures.length === 1 ? captures[0]! : `${captures.length} captures`);
    const summary = await analyzeAll(captures, opts, parseJobs(o.jobs));
    progress?.done();
    const report = filterReport(buildReport(summary, { severities: severities(config, o) }), others);
    checkNotEmpty(report.connections.length > 0, o, others);
    out.write(o.format === 'json' ? renderClientsJson(report) : renderClientsTable(report, style, tableWidth(out)));
    out.close();
    return EXIT_CLEAN;
  }
  // One instance in detail: keep request rows (bounded) to draw its timeline once it is known, and
  // its telemetry conversation (pushes decoded) for a summary of it.
  opts.decodeTelemetry = true;
  const rows: RequestRow[] = [];
  let truncated = false;
  const results = [];
  for (const [i, file] of captures.entries()) {
    const observer = new RequestRows(i, (row) => {
      if (rows.length < MAX_TIMELINE_ROWS) rows.push(row);
      else truncated = true;
    });
    progress?.start(file);
    results.push(await analyzeInput(file, i, opts, () => {}, observer));
    observer.finish();
    progress?.done();
  }
  const report = filterReport(buildReport(mergeResults(results), { severities: severities(config, o) }), others);
  const ids = report.instances.flatMap((x) => (x.clientInstanceId === null ? [] : [x.clientInstanceId]));
  const id = resolveInstance(instance, ids);
  const inst = report.instances.find((x) => x.clientInstanceId === id)!;
  const conns = new Set(inst.connections.map((c) => `${c.input}\u0000${c.client}\u0000${c.broker}`));
  const mine = rows.filter((r) => conns.has(`${r.input}\u0000${r.client}\u0000${r.broker}`));
  const telemetry = report.telemetry.filter((c) => c.instanceId === id);
  const { renderTelemetrySummary, telemetryJson } = await import('../report/telemetry.js');
  if (o.format === 'json') {
    out.write(`${safeJson({ instance: JSON.parse(renderClientsJson({ ...report, instances: [inst] }))[0], requests: mine.map(requestJson), telemetry: telemetryJson(telemetry) }, 2)}\n`);
  } else {
    const width = out.isTTY ? tableWidth(out) : Infinity;
    out.write(renderClientDetail(report, inst, mine, truncated, style, clockFor(o, captureStartUs(report), io), width));
    out.write(renderTelemetrySummary(telemetry, style, width));
  }
  out.close();
  return EXIT_CLEAN;
}

export interface ExportCliOptions extends CommonCliOptions {
  to: string;
  overwrite?: boolean;
  name?: string;
  rule?: string[];
  config?: string;
}

/** `kcid export <capture...> --to DIR`: Parquet tables per capture, Hive-style (src/export/). */
export async function exportCommand(captures: string[], o: ExportCliOptions, io: Io, given: GivenOnCli): Promise<number> {
  const config = applyConfig(o, given, io);
  checkInputs(captures, 'capture');
  if (o.jobs !== undefined) throw new UsageError('kcid export reads its captures one after another: --jobs does not apply (run several exports at once instead)');
  const progress = Progress.forStream(io.stderr, o.quiet === true);
  const filters = parseFilters(o);
  const { exportCaptures } = await import('../export/export.js');
  const out = new Out(io.stdout, undefined);
  let startUs: number | null = null;
  const keep = rowPredicate(filters, () => startUs);
  const opts = captureOptions(o, progress);
  opts.telemetry = telemetryNeeds(severities(config, o));
  await exportCaptures(captures, opts, {
    dir: o.to,
    overwrite: o.overwrite === true,
    ...(o.name === undefined ? {} : { name: o.name }),
    severities: severities(config, o),
    ...(hasFilters(filters)
      ? {
          keepRow: (row: RequestRow, s, us) => keep(row, s.clientIds, us),
          keepPush: (p) => keep({ clientInstanceId: p.instanceId, client: p.client, broker: p.broker, apiKey: API_KEY.PushTelemetry }, p.clientId === null ? [] : [p.clientId], p.timeUs),
          filterReport: (r: Report) => filterReport(r, filters),
        }
      : {}),
    file: parquetFileOptions(),
    onStart: (file) => {
      startUs = null;
      progress?.start(file);
    },
    onCaptureStart: (us) => {
      startUs = us;
    },
    onCapture: (file, n) => {
      progress?.done();
      const telemetry = n.telemetry === 0 ? '' : `, ${n.telemetry} telemetry pushes`;
      out.write(`${file}: capture=${n.capture}: ${n.requests} requests, ${n.connections} connections, ${n.instances} instances, ${n.findings} findings${telemetry}\n`);
    },
  });
  out.close();
  return EXIT_CLEAN;
}

/** What every Parquet file kcid writes says about its writer. */
function parquetFileOptions(): { createdBy: string; metadata: { key: string; value: string }[] } {
  return { createdBy: `kcid version ${packageVersion()}`, metadata: [{ key: 'kcid.version', value: packageVersion() }] };
}
