/**
 * What the commands' runs share: the checks that need the file system (key logs, schemas), the
 * analysis options a run adds to its plan, the empty-filter gate, and where output goes (clock,
 * width, colours).
 */
import { markInputs } from '../base/safe-write.js';
import { accessSync, constants, statSync } from 'node:fs';
import { resolveBound } from '../analysis/filters.js';
import { hasFilters, parseApis } from '../analysis/filters.js';
import type { AnalyzeOptions } from '../analysis/run.js';
import { sanitize } from '../base/sanitize.js';
import { activateProtocol } from '../kafka/protocol.js';
import { makeClock, type Clock, type TimeFormat } from '../report/clock.js';
import type { Style } from '../report/style.js';
import { packageVersion, type Io } from './io.js';
import { UsageError } from './options.js';
import type { Out } from './output.js';
import type { CapturePlan, FilterPlan } from './plan.js';
import type { Progress } from './progress.js';

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

/**
 * The plan's capture options made ready to read with: key logs checked, the schemas loaded (a bad
 * --kafka-specs is one line and exit 2, before any capture is read), progress reported.
 */
export function readyCapture(plan: CapturePlan, progress: Progress | null, filters?: FilterPlan): AnalyzeOptions {
  const opts: AnalyzeOptions = { ...plan };
  if (plan.tlsKeylogs !== undefined) opts.tlsKeylogs = plan.tlsKeylogs.map(readableKeylog);
  if (progress !== null) opts.onProgress = (read, total, packets, connections, findings) => progress.update(read, total, packets, connections, findings);
  activateProtocol({ kafkaSpecs: opts.kafkaSpecs ?? null, kip1313: opts.kip1313 ?? 'voting' });
  if (filters?.apisAfterSchemas !== undefined) filters.filters.apis = parseApis(filters.apisAfterSchemas);
  return opts;
}

/**
 * At the start of a run over captures: one file named by two paths is refused
 * ({@link checkDistinctFiles}), and `kcid analyze -` typed at a terminal with nothing piped in,
 * which would wait in silence, says what it is waiting for (stdin is the terminal itself).
 */
export function startInputs(captures: readonly string[], io: Io): void {
  checkDistinctFiles(captures, 'capture');
  if (captures.includes('-') && io.stdinIsTTY === true) {
    io.stderr.write('kcid: reading a capture from standard input (the terminal): pipe one in, e.g. tcpdump -U -w - | kcid analyze -, or press Ctrl-D\n');
  }
}

/**
 * Filters that match nothing usually mean a typo, and a CI gate that checks nothing must not pass:
 * exit 2 with the filters named, unless --allow-empty says an empty match is expected (as eslint
 * refuses patterns that match no file unless told otherwise). Inputs with no Kafka at all, likewise.
 */
export function checkNotEmpty(matched: boolean, f: FilterPlan): void {
  if (matched || f.allowEmpty) return;
  // An analysis that found no Kafka at all must not pass a gate silently either.
  if (!hasFilters(f.filters)) throw new UsageError('no Kafka found in the input (see its capture notes; give --port if Kafka runs on other ports, or --allow-empty if that is expected)');
  const text = f.given.map(([flag, value]) => `${flag} ${sanitize(value)}`).join(' ');
  throw new UsageError(`the filters match no Kafka connection (${text}); give --allow-empty if that is expected`);
}

/**
 * --since and --until of different forms (an offset from the capture start and a time) are compared
 * once the start is known: a window empty by construction is a usage error, one line naming both.
 */
export function checkWindowAt(f: FilterPlan, startUs: number | null): void {
  const { since, until } = f.filters;
  if (since === undefined || until === undefined || startUs === null || 'offsetUs' in since === 'offsetUs' in until) return;
  const from = resolveBound(since, startUs);
  const to = resolveBound(until, startUs);
  if (from <= to) return;
  const clock = makeClock('ad');
  const show = (flag: string, text: string | undefined, offset: boolean, us: number) =>
    `${flag} ${sanitize(text ?? '')}${offset ? ` (${clock(us)}, from the capture's start at ${clock(startUs)})` : ''}`;
  throw new UsageError(`${show('--since', f.since, 'offsetUs' in since, from)} is after ${show('--until', f.until, 'offsetUs' in until, to)}: the window is empty`);
}

/**
 * The same file named twice by different paths (./F and F, an absolute path, a doubled slash, a
 * symlink, a hard link) would count everything twice: files are compared by device and inode.
 * A path that cannot be read is left for the reader to report.
 */
export function checkDistinctFiles(files: readonly string[], what: string): void {
  // No output path (a hard link or another name included) may write over an input (safe-write.ts).
  markInputs(files);
  const seen = new Map<string, string>();
  for (const f of files) {
    if (f === '-') continue;
    let key: string;
    try {
      const st = statSync(f, { bigint: true });
      key = `${st.dev}:${st.ino}`;
    } catch {
      continue;
    }
    const first = seen.get(key);
    if (first !== undefined) throw new UsageError(`${what} '${sanitize(f)}' is the same file as '${sanitize(first)}': it is given twice`);
    seen.set(key, f);
  }
}

/** The clock tables show times with (-t), for the inputs starting at `startUs`. TZ is read for -t l (the plan checked it). */
export function clockFor(format: TimeFormat, startUs: number | null | (() => number | null), io: Io): Clock {
  return makeClock(format, startUs, io.env.TZ);
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

/** "[1] broker-1.pcapng" lines: frames of several inputs show as 2:42, input 2's frame 42. */
export function inputLegend(files: readonly string[]): string {
  return `${files.map((f, i) => `[${i + 1}] ${f === '-' ? '- (standard input)' : sanitize(f)}`).join('\n')}\n`;
}

/** What every Parquet file kcid writes says about its writer, and the config file in use (when one is). */
export function parquetFileOptions(config: string | null = null): { createdBy: string; metadata: { key: string; value: string }[] } {
  const metadata = [{ key: 'kcid.version', value: packageVersion() }];
  if (config !== null) metadata.push({ key: 'kcid.config', value: config });
  return { createdBy: `kcid version ${packageVersion()}`, metadata };
}
