/**
 * `kcid export <capture...> --to DIR`: each capture becomes one Parquet file per table in a
 * Hive-style layout,
 *
 *     DIR/requests/capture=NAME/part-0.parquet
 *     DIR/connections/capture=NAME/part-0.parquet
 *     DIR/instances/capture=NAME/part-0.parquet
 *     DIR/findings/capture=NAME/part-0.parquet
 *     DIR/telemetry/capture=NAME/part-0.parquet            (a capture with PushTelemetry requests)
 *     DIR/telemetry_metrics/capture=NAME/part-0.parquet
 *
 * so a day's captures add folders and never rewrite old ones, and any engine that reads Hive
 * partitions (DuckDB, Spark, Trino, Athena, BigQuery) sees `capture` as a column. A capture's
 * files depend on that capture alone: its instances are grouped, and its cross-connection rules
 * run, within it; across captures the same questions are SQL over `connections` (README).
 *
 * Requests are written while the capture is read (row groups as they fill); the other tables,
 * made from the capture's summary, when it ends. A capture appears whole or not at all: its
 * tables are written into a hidden staging folder in DIR (`.kcid-staging.HOST.PID.RANDOM/TABLE/
 * part-0.parquet`, which no engine reads: they skip names starting with `.`), and only when every
 * table is complete are they renamed into place, one rename per table (a folder when the capture
 * is new, the file over the old one with --overwrite), undone if one fails. A failure, SIGINT or
 * SIGTERM removes the staging folder; a staging folder left by a process that is gone (SIGKILL,
 * a crash) is removed by the next export into DIR on the same host. --overwrite replaces and
 * removes only what kcid writes in a capture's folders: `part-0.parquet`, and the
 * `part-0.parquet.PID.tmp` files versions before staging left when interrupted.
 *
 * Telemetry is decoded (as `kcid analyze --telemetry` does, so the findings include the KIP-714
 * rules'); a capture without PushTelemetry has no telemetry folders, and what that costs is the
 * one comparison per request by which the analyzer sees none.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, fstatSync, linkSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { buildReport, type Report, type SeveritySetting } from '../analysis/report.js';
import { mergeResults } from '../analysis/parallel.js';
import { analyzeInput, type AnalyzeOptions } from '../analysis/run.js';
import type { ConnState } from '../analysis/connection-state.js';
import type { TelemetryPushEvent } from '../analysis/types.js';
import { RequestRows, type RequestRow } from '../report/requests.js';
import { intervalMs } from '../report/telemetry-json.js';
import { ExportError } from './errors.js';
import { ParquetTableWriter, withTable, type ParquetFileOptions, type Table } from './parquet.js';
import { captureName, escapePartition } from './names.js';
import {
  CONNECTIONS,
  FINDINGS,
  INSTANCES,
  REQUESTS,
  TELEMETRY,
  TELEMETRY_METRICS,
  type ConnectionRecord,
  type FindingRecord,
  type InstanceRecord,
  type Origin,
  type RequestRecord,
  type TelemetryMetricRecord,
  type TelemetryRecord,
} from './tables.js';

/** The tables of an export, in the order they are written; the last two only for a capture with pushes. */
export const TABLE_NAMES = ['requests', 'connections', 'instances', 'findings', 'telemetry', 'telemetry_metrics'] as const;
/**
 * mkdir -p, one level at a time: Node 20's recursive mkdirSync loops forever where mkdir answers
 * ENOENT under a folder that exists (`--to /proc/x`).
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let p = resolve(dir); !existsSync(p); p = dirname(p)) {
    missing.push(p);
    if (dirname(p) === p) break;
  }
  for (const p of missing.reverse()) mkdirSync(p);
}

/** Checks (and makes) the --to folder: one clear line if it cannot be used. */
export function prepareExportDir(dir: string): void {
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new ExportError(`--to ${dir}: is a file, not a folder`);
  try {
    makeDirs(dir);
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
        ? 'not writable'
        : code === 'ENOTDIR' || code === 'EEXIST'
          ? 'a part of the path is a file'
          : code === 'ENOENT'
            ? 'no folder can be made there'
            : (e as Error).message;
    throw new ExportError(`--to ${dir}: ${why}`);
  }
}

export interface ExportOptions {
  dir: string;
  /** Replace a capture's folders when they exist (by default that is an error: exports add, they do not rewrite). */
  overwrite: boolean;
  /** The partition name of the one capture, instead of its file name. */
  name?: string;
  severities?: ReadonlyMap<string, SeveritySetting>;
  /** Request rows to keep (filters), and the report as filtered. */
  keepRow?: (row: RequestRow, s: ConnState, us: number) => boolean;
  /** Pushes to keep (the same filters). */
  keepPush?: (p: TelemetryPushEvent) => boolean;
  filterReport?: (report: Report) => Report;
  /** Told when a capture starts to be read, and the time of its first packet (filters with offsets). */
  onStart?: (file: string) => void;
  onCaptureStart?: (us: number) => void;
  /** Told what was written, once a capture's files are in place. */
  onCapture?: (file: string, counts: ExportCounts) => void;
  file?: ParquetFileOptions;
}

export interface ExportCounts {
  capture: string;
  requests: number;
  connections: number;
  instances: number;
  findings: number;
  /** PushTelemetry requests (0: the capture has no telemetry folders). */
  telemetry: number;
}

/** The capture names of the inputs, refusing two inputs that would share a partition. */
export function captureNames(files: readonly string[], name: string | undefined): string[] {
  if (name !== undefined) {
    if (files.length !== 1) throw new ExportError('--name names one capture (give one input)');
    if (name.trim() === '') throw new ExportError('--name must not be empty');
    return [name];
  }
  const names = files.map(captureName);
  const seen = new Map<string, string>();
  for (const [i, n] of names.entries()) {
    const other = seen.get(n);
    if (other !== undefined) throw new ExportError(`${other} and ${files[i]} would both be capture=${n} (rename one, or export it alone with --name)`);
    seen.set(n, files[i]!);
  }
  return names;
}

/** The file of each table in a capture's folder. */
const PART = 'part-0.parquet';
/** What versions of kcid before staging left in a capture's folder when interrupted: removed by the next export of it. */
const LEGACY_TMP = /^part-0\.parquet\.\d+\.tmp$/;

/** This host in a staging folder's name (another host's are never swept: its PIDs are not ours). */
const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'host';
const STAGING = /^\.kcid-staging\.(.+)\.(\d+)\.[0-9a-f]+$/;

/** A capture's folder holds a complete export (its part-0.parquet), not only leftovers. */
function exported(folder: string): boolean {
  return existsSync(join(folder, PART));
}

/** The process `pid` is running (here). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the staging folders in `dir` of processes on this host that are gone (killed, crashed). */
function sweepStaging(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = STAGING.exec(name);
    if (m === null || m[1] !== HOST || Number(m[2]) === process.pid || alive(Number(m[2]))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/** Removes in a capture's folder the temporary files older versions of kcid left there. */
function removeLegacyTmp(folder: string): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) if (LEGACY_TMP.test(name)) rmSync(join(folder, name), { force: true });
}

/**
 * The staging folder being written, removed by the SIGINT/SIGTERM handler before the signal ends
 * kcid (a handler runs when the event loop turns: between the chunks of a capture file, which the
 * reader yields for, and while a live input (a FIFO, standard input) waits for data).
 */
let activeStaging: string | null = null;

/** SIGINT or SIGTERM during an export: what is staged goes, then the signal ends kcid as it would have (exit status 128 + its number). */
function onSignal(signal: NodeJS.Signals): void {
  if (activeStaging !== null) rmSync(activeStaging, { recursive: true, force: true });
  activeStaging = null;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.kill(process.pid, signal);
}

/** A live input (standard input, a FIFO, a device), read as a stream so that a signal is heard while it waits for data. */
function live(file: string): boolean {
  try {
    // Standard input redirected from a file (`kcid export - < x.pcap`) is read as a file.
    return !(file === '-' ? fstatSync(0) : statSync(file)).isFile();
  } catch {
    return false; // the reader says what is wrong with it
  }
}

/** Writes every capture's tables; returns what was written per capture. */
export async function exportCaptures(files: readonly string[], analyze: AnalyzeOptions, o: ExportOptions): Promise<ExportCounts[]> {
  const names = captureNames(files, o.name);
  prepareExportDir(o.dir);
  const folders = names.map((n) => TABLE_NAMES.map((t) => join(o.dir, t, `capture=${escapePartition(n)}`)));
  if (!o.overwrite) {
    for (const set of folders) {
      const existing = set.find(exported);
      if (existing !== undefined) throw new ExportError(`${existing} exists: that capture was exported before (--overwrite replaces it)`);
    }
  }
  sweepStaging(o.dir);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const done: ExportCounts[] = [];
  try {
    for (const [i, file] of files.entries()) {
      // The signal is never sent: it makes the reader stream a live input (src/analysis/run.ts).
      const opts = live(file) ? { ...analyze, signal: new AbortController().signal } : analyze;
      done.push(await exportOne(file, i, { file, capture: names[i]! }, folders[i]!, opts, o));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return done;
}

/** Makes a folder (and those above it), or says in one line why it cannot. */
function makeFolder(f: string): void {
  try {
    makeDirs(f);
  } catch (e) {
    throw new ExportError(`cannot make ${f}: ${(e as Error).message}`);
  }
}

/** The hidden folder a capture's tables are written into before they are renamed into place. */
function makeStaging(dir: string): string {
  for (let attempt = 0; ; attempt++) {
    const staging = join(dir, `.kcid-staging.${HOST}.${process.pid}.${randomBytes(6).toString('hex')}`);
    try {
      // mkdir makes the folder or fails (EEXIST even for a link planted there): never someone else's.
      mkdirSync(staging, 0o700);
      return staging;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 4) throw new ExportError(`cannot make a staging folder in ${dir}: ${(e as Error).message}`);
    }
  }
}

/**
 * Moves a capture's staged tables into place: `written[k]` says whether table k was written. A
 * new capture folder is the staged folder renamed; an existing one (--overwrite, or leftovers of
 * an interrupted older version) gets its part-0.parquet replaced by a rename, the old file kept
 * as a link in the staging folder until every table is in place. A table not written now
 * (telemetry, when the capture has no pushes any more) loses its old file. If a rename fails,
 * what was moved is moved back and the old files restored.
 */
function commit(staging: string, folders: readonly string[], written: readonly boolean[], overwrite: boolean): void {
  // Checked again now: another export may have put the capture in place while this one read.
  if (!overwrite) {
    const existing = folders.find(exported);
    if (existing !== undefined) throw new ExportError(`${existing} exists: that capture was exported before (--overwrite replaces it)`);
  }
  // The tables' folders first: a failure to make one moves nothing.
  for (const [k, folder] of folders.entries()) if (written[k]) makeFolder(dirname(folder));
  const undo: (() => void)[] = [];
  try {
    for (const [k, folder] of folders.entries()) {
      const staged = join(staging, TABLE_NAMES[k]!);
      if (!written[k]) continue;
      if (!existsSync(folder)) {
        renameSync(staged, folder);
        undo.push(() => renameSync(folder, staged));
        continue;
      }
      const target = join(folder, PART);
      // Without --overwrite, a file put there since the check above is not replaced (link fails on an existing name).
      if (!overwrite) {
        linkSync(join(staged, PART), target);
        undo.push(() => rmSync(target, { force: true }));
        continue;
      }
      const backup = join(staging, `old-${TABLE_NAMES[k]}`);
      if (existsSync(target)) {
        linkSync(target, backup);
        undo.push(() => renameSync(backup, target));
      } else {
        undo.push(() => rmSync(target, { force: true }));
      }
      renameSync(join(staged, PART), target);
    }
  } catch (e) {
    for (const u of undo.reverse()) {
      try {
        u();
      } catch {
        // best effort: the error below says what failed
      }
    }
    throw new ExportError(`cannot move the export into place: ${(e as Error).message}`);
  }
  // In place: what older exports and interrupted runs left goes.
  for (const [k, folder] of folders.entries()) {
    if (!written[k] && existsSync(folder)) {
      rmSync(join(folder, PART), { force: true });
      removeLegacyTmp(folder);
      rmEmpty(folder);
    } else if (written[k]) {
      removeLegacyTmp(folder);
    }
  }
}

async function exportOne(
  file: string,
  input: number,
  origin: Origin,
  folders: string[],
  analyze: AnalyzeOptions,
  o: ExportOptions,
): Promise<ExportCounts> {
  const staging = makeStaging(o.dir);
  activeStaging = staging;
  const written = TABLE_NAMES.map(() => false);
  const writers: ParquetTableWriter<never>[] = [];
  const open = <R>(table: Table<R>, k: number): ParquetTableWriter<R> => {
    const folder = join(staging, TABLE_NAMES[k]!);
    makeFolder(folder);
    const w = new ParquetTableWriter(partitioned(table), join(folder, PART), { ...withTable(o.file, table.name), placement: 'create' });
    writers.push(w as ParquetTableWriter<never>);
    written[k] = true;
    return w;
  };
  try {
    const requests = open(REQUESTS, 0);
    const holder: RequestRecord = { row: null as unknown as RequestRow, us: 0, origin, input };
    const rows = new RequestRows(input, (row, s, us) => {
      // The requests table holds requests: a response whose request was not captured is not one.
      if (!row.requestCaptured) return;
      if (o.keepRow !== undefined && !o.keepRow(row, s, us)) return;
      holder.row = row;
      holder.us = us;
      requests.add(holder);
    }, false, null, false);
    if (o.onCaptureStart !== undefined) rows.captureStart = o.onCaptureStart;
    o.onStart?.(file);
    const result = await analyzeInput(file, input, { ...analyze, decodeTelemetry: true }, () => {}, rows);
    rows.finish();
    let report = buildReport(mergeResults([result]), { severities: o.severities });
    if (o.filterReport !== undefined) report = o.filterReport(report);
    const instanceOf = new Map<object, number>();
    for (const [k, x] of report.instances.entries()) for (const c of x.connections) instanceOf.set(c, k);
    const connections = open(CONNECTIONS, 1);
    const conn: ConnectionRecord = { c: null as never, instance: null, origin, input };
    for (const c of report.connections) {
      conn.c = c;
      conn.instance = instanceOf.get(c) ?? null;
      connections.add(conn);
    }
    const instances = open(INSTANCES, 2);
    const inst: InstanceRecord = { x: null as never, instance: 0, origin, input };
    for (const [k, x] of report.instances.entries()) {
      inst.x = x;
      inst.instance = k;
      instances.add(inst);
    }
    const findings = open(FINDINGS, 3);
    const finding: FindingRecord = { f: null as never, origin, input };
    for (const f of report.findings) {
      finding.f = f;
      findings.add(finding);
    }
    const pushes = telemetryRows(report, o.keepPush);
    if (pushes.length > 0) {
      const telemetry = open(TELEMETRY, 4);
      const push: TelemetryRecord = { p: null as never, intervalMs: null, origin, input };
      for (const p of pushes) {
        push.p = p.p;
        push.intervalMs = p.intervalMs;
        telemetry.add(push);
      }
      const metrics = open(TELEMETRY_METRICS, 5);
      const metric: TelemetryMetricRecord = { p: null as never, m: null as never, origin, input };
      for (const { p } of pushes) {
        metric.p = p;
        for (const m of p.payload?.metrics ?? []) {
          metric.m = m;
          metrics.add(metric);
        }
      }
    }
    const counts: ExportCounts = {
      capture: origin.capture,
      requests: 0,
      connections: report.connections.length,
      instances: report.instances.length,
      findings: report.findings.length,
      telemetry: pushes.length,
    };
    for (const w of writers) w.close();
    commit(staging, folders, written, o.overwrite);
    counts.requests = requests.written;
    o.onCapture?.(file, counts);
    return counts;
  } catch (e) {
    for (const w of writers) w.abort();
    throw e;
  } finally {
    activeStaging = null;
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The capture's pushes in capture order, each with the interval since its conversation's previous push. */
function telemetryRows(report: Report, keep: ((p: TelemetryPushEvent) => boolean) | undefined): { p: TelemetryPushEvent; intervalMs: number | null }[] {
  const out: { p: TelemetryPushEvent; intervalMs: number | null }[] = [];
  for (const c of report.telemetry) {
    for (const [i, x] of c.pushes.entries()) if (keep === undefined || keep(x.push)) out.push({ p: x.push, intervalMs: intervalMs(c, i) });
  }
  return out.sort((a, b) => a.p.frame - b.p.frame);
}

/**
 * A table as its files in the layout hold it: without `capture`, which the path carries (Spark
 * refuses a column that is in both the file and the partition path; DuckDB, Trino and the others
 * take it from the path).
 */
function partitioned<R>(table: Table<R>): Table<R> {
  return { ...table, columns: table.columns.filter((c) => c.name !== 'capture') };
}

function rmEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // not empty (an earlier export's file), or gone
  }
}
