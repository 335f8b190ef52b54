/**
 * What every command's plan is made of: the options as commander gives them, checked by pure
 * functions into typed values. A plan reads no file and touches no stream: it sees the options, the
 * config file already loaded, which options the command line set, the number of cores and the
 * environment (PlanContext), and returns a plan or the one-line usage error (exit 2).
 */
import { checkWindow, parseApis, parseEndpointPattern, parseTimeBound, type Filters } from '../analysis/filters.js';
import type { SeveritySetting } from '../analysis/report.js';
import { DEFAULT_KAFKA_PORTS, DEFAULT_MAX_FRAME_BYTES, type AnalyzeOptions } from '../analysis/run.js';
import { makeClock, TimeZoneError, type TimeFormat } from '../report/clock.js';
import { mergeSeverities, parseRuleSetting, type Config } from './config.js';
import { EXIT_ERROR } from './io.js';
import { parseFailOn, parsePorts, parseSize, UsageError, type FailOn } from './options.js';
import { groupDigits } from '../base/digits.js';

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

/** The options a config file may set: `--config FILE`, or false for --no-config. */
export interface ConfigCliOptions {
  config?: string | false;
  rule?: string[];
  /** --verbose: the config file in use (or why none) on stderr. */
  verbose?: boolean;
}

/** Was this option given on the command line (rather than left at its default)? */
export type GivenOnCli = (option: 'failOn' | 'port' | 'maxFrameBytes') => boolean;

/** All a plan may look at besides the options. */
export interface PlanContext {
  /** The config file in use (kcid.config.json, --config), or an empty one. */
  config: Config;
  given: GivenOnCli;
  /** Cores this process may use (os.availableParallelism()). */
  cores: number;
  env: NodeJS.ProcessEnv;
}

/** A plan, or the one line to print (after "kcid: ") and the exit code. */
export type Planned<P> = { plan: P } | { error: string; exitCode: typeof EXIT_ERROR };

/**
 * Runs `make`, turning the one-line errors its parsers throw (UsageError, and FilterError from
 * the analysis' filter parsers) into a Planned error; anything else is a bug and is thrown.
 */
export function planned<P>(make: () => P): Planned<P> {
  try {
    return { plan: make() };
  } catch (e) {
    if (e instanceof Error && (e instanceof UsageError || e.name === 'FilterError')) return { error: e.message, exitCode: EXIT_ERROR };
    throw e;
  }
}

/** How a capture is read, as analyzeInput takes it, minus what a run adds (progress, signal). */
export type CapturePlan = AnalyzeOptions;

export function parseCount(text: string, option: string, min: number, max: number): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`invalid ${option} '${text}' (expected a whole number from ${min} to ${groupDigits(max)})`);
  }
  return Number(text);
}

/**
 * --jobs: captures analysed at once, never more than there are cores or inputs (a worker beyond
 * either only costs memory and start-up). Default: the cores minus one, at least 1.
 */
export function parseJobs(text: string | undefined, cores: number, inputs: number): number {
  const cap = Math.max(1, Math.min(cores, inputs));
  if (text === undefined) return Math.max(1, Math.min(cores - 1, inputs));
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 256) throw new UsageError(`invalid --jobs '${text}' (expected a whole number from 1 to 256)`);
  return Math.min(Number(text), cap);
}

/** The config file's failOn, port and maxFrameBytes where the command line did not set them. */
export function withConfig<T extends { failOn?: string; port?: string; maxFrameBytes?: string }>(o: T, ctx: PlanContext): T {
  const { config, given } = ctx;
  const e = { ...o };
  if (config.failOn !== undefined && !given('failOn')) e.failOn = config.failOn;
  if (config.port !== undefined && !given('port')) e.port = config.port.join(',');
  if (config.maxFrameBytes !== undefined && !given('maxFrameBytes')) e.maxFrameBytes = String(config.maxFrameBytes);
  return e;
}

/** Rule severities: the config file's, then --rule settings on top. */
export function severities(config: Config, o: { rule?: string[] }): Map<string, SeveritySetting> {
  return mergeSeverities(config, (o.rule ?? []).map(parseRuleSetting));
}

export function captureOptions(o: CommonCliOptions): CapturePlan {
  const opts: AnalyzeOptions = {
    kafkaPorts: o.port === undefined ? new Set(DEFAULT_KAFKA_PORTS) : parsePorts(o.port),
    detect: o.detect,
    maxFrameBytes: o.maxFrameBytes === undefined ? DEFAULT_MAX_FRAME_BYTES : parseSize(o.maxFrameBytes, '--max-frame-bytes'),
  };
  if (o.tlsKeylog !== undefined) opts.tlsKeylogs = [...o.tlsKeylog];
  if (o.maxConnections !== undefined) opts.maxConnections = parseCount(o.maxConnections, '--max-connections', 1, 10_000_000);
  if (o.idleTimeout !== undefined) opts.idleTimeoutSec = parseCount(o.idleTimeout, '--idle-timeout', 1, 31_536_000);
  if (o.maxConnectionSummaries !== undefined) opts.maxSummaries = parseCount(o.maxConnectionSummaries, '--max-connection-summaries', 1, 100_000_000);
  if (o.maxFindings !== undefined) opts.maxFindings = parseCount(o.maxFindings, '--max-findings', 1, 100_000_000);
  if (o.maxTelemetryBytes !== undefined) opts.maxTelemetryBytes = parseSize(o.maxTelemetryBytes, '--max-telemetry-bytes');
  if (o.telemetry === true) opts.decodeTelemetry = true;
  if (o.kafkaSpecs !== undefined) opts.kafkaSpecs = o.kafkaSpecs;
  if (o.kip1313 === 'accepted') opts.kip1313 = 'accepted';
  return opts;
}

export function parseFilters(o: Partial<CommonCliOptions>): Filters {
  const f: Filters = {};
  if (o.instance !== undefined) f.instance = o.instance;
  if (o.clientId !== undefined) f.clientId = o.clientId;
  if (o.client !== undefined) f.client = parseEndpointPattern(o.client, '--client');
  if (o.broker !== undefined) f.broker = parseEndpointPattern(o.broker, '--broker');
  // With --kafka-specs, API names come from those schemas: --api is read once they are loaded (readyCapture).
  if (o.api !== undefined && o.kafkaSpecs === undefined) f.apis = parseApis(o.api);
  if (o.since !== undefined) f.since = parseTimeBound(o.since, '--since');
  if (o.until !== undefined) f.until = parseTimeBound(o.until, '--until');
  checkWindow(f);
  return f;
}

/** The filters and the text of their time bounds as typed (for the window check once the capture start is known). */
export interface FilterPlan {
  filters: Filters;
  since?: string;
  until?: string;
  /** --allow-empty */
  allowEmpty: boolean;
  /** --api with --kafka-specs: parsed into filters.apis once the schemas are loaded. */
  apisAfterSchemas?: string;
  /** The filter options given, as typed: "--broker nothost --api Produce" (sanitised when shown). */
  given: [string, string][];
}

export function filterPlan(o: Partial<CommonCliOptions>): FilterPlan {
  const names: [keyof CommonCliOptions, string][] = [
    ['instance', '--instance'],
    ['clientId', '--client-id'],
    ['client', '--client'],
    ['broker', '--broker'],
    ['api', '--api'],
    ['since', '--since'],
    ['until', '--until'],
  ];
  return {
    filters: parseFilters(o),
    ...(o.since === undefined ? {} : { since: o.since }),
    ...(o.until === undefined ? {} : { until: o.until }),
    allowEmpty: o.allowEmpty === true,
    ...(o.api !== undefined && o.kafkaSpecs !== undefined ? { apisAfterSchemas: o.api } : {}),
    given: names.flatMap(([key, flag]) => (o[key] === undefined ? [] : [[flag, String(o[key])] as [string, string]])),
  };
}

/** The same capture twice would count every request twice; '-' can be read once. (Paths naming one file are found by the run.) */
export function checkInputs(files: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f)) throw new UsageError(f === '-' ? "'-' (stdin) can be given only once" : `${what} '${f}' is given twice`);
    seen.add(f);
  }
}

export function planFailOn(text: string): FailOn {
  return parseFailOn(text);
}

/** -t as given (default ad); -t l with a TZ that names no zone is a usage error. */
export function planTimeFormat(o: { timeFormat?: string }, env: NodeJS.ProcessEnv, used: boolean): TimeFormat {
  const format = (o.timeFormat ?? 'ad') as TimeFormat;
  if (used) {
    try {
      makeClock(format, null, env.TZ);
    } catch (e) {
      if (e instanceof TimeZoneError) throw new UsageError(e.message);
      throw e;
    }
  }
  return format;
}
