/**
 * `kcid export <capture...> --to DIR`: each capture becomes one Parquet file per table in a
 * Hive-style layout,
 *
 *     DIR/requests/capture=NAME/part-0.parquet
 *     DIR/connections/capture=NAME/part-0.parquet
 *     DIR/instances/capture=NAME/part-0.parquet
 *     DIR/findings/capture=NAME/part-0.parquet
 *
 * so a day's captures add folders and never rewrite old ones, and any engine that reads Hive
 * partitions (DuckDB, Spark, Trino, Athena, BigQuery) sees `capture` as a column. A capture's
 * files depend on that capture alone: its instances are grouped, and its cross-connection rules
 * run, within it; across captures the same questions are SQL over `connections` (README).
 *
 * Requests are written while the capture is read (row groups as they fill); the other tables,
 * made from the capture's summary, when it ends. All four get their names only when all are
 * complete: a folder holds a whole capture or nothing of it.
 */
import { accessSync, constants, existsSync, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildReport, type Report, type SeveritySetting } from '../analysis/report.js';
import { mergeResults } from '../analysis/parallel.js';
import { analyzeInput, type AnalyzeOptions } from '../analysis/run.js';
import type { ConnState } from '../analysis/connection-state.js';
import { RequestRows, type RequestRow } from '../report/requests.js';
import { ExportError } from './errors.js';
import { ParquetTableWriter, withTable, type ParquetFileOptions, type Table } from './parquet.js';
import { captureName, escapePartition } from './names.js';
import {
  CONNECTIONS,
  FINDINGS,
  INSTANCES,
  REQUESTS,
  type ConnectionRecord,
  type FindingRecord,
  type InstanceRecord,
  type Origin,
  type RequestRecord,
} from './tables.js';

/**
 * The tables of an export, in the order they are written.
 *
 * Telemetry hook (issue 15): kcid does not decode PushTelemetry's metrics yet. When it does, a
 * `telemetry` table (one row per push: the capture columns, time, addresses, client instance ID
 * as text and UUID, subscription ID, the metrics) is one more Table in tables.ts, one more name
 * here, and one more writer in exportOne, fed as the requests table is.
 */
export const TABLE_NAMES = ['requests', 'connections', 'instances', 'findings'] as const;

/** Checks (and makes) the --to folder: one clear line if it cannot be used. */
export function prepareExportDir(dir: string): void {
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new ExportError(`--to ${dir}: is a file, not a folder`);
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
        ? 'not writable'
        : code === 'ENOTDIR' || code === 'EEXIST'
          ? 'a part of the path is a file'
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

/** Writes every capture's tables; returns what was written per capture. */
export async function exportCaptures(files: readonly string[], analyze: AnalyzeOptions, o: ExportOptions): Promise<ExportCounts[]> {
  const names = captureNames(files, o.name);
  prepareExportDir(o.dir);
  const folders = names.map((n) => TABLE_NAMES.map((t) => join(o.dir, t, `capture=${escapePartition(n)}`)));
  if (!o.overwrite) {
    for (const set of folders) {
      const existing = set.find((f) => existsSync(f));
      if (existing !== undefined) throw new ExportError(`${existing} exists: that capture was exported before (--overwrite replaces it)`);
    }
  }
  const done: ExportCounts[] = [];
  for (const [i, file] of files.entries()) done.push(await exportOne(file, i, { file, capture: names[i]! }, folders[i]!, analyze, o));
  return done;
}

async function exportOne(file: string, input: number, origin: Origin, folders: string[], analyze: AnalyzeOptions, o: ExportOptions): Promise<ExportCounts> {
  for (const f of folders) {
    try {
      mkdirSync(f, { recursive: true });
    } catch (e) {
      throw new ExportError(`cannot make ${f}: ${(e as Error).message}`);
    }
  }
  const part = (k: number) => join(folders[k]!, 'part-0.parquet');
  const writers: ParquetTableWriter<never>[] = [];
  const open = <R>(table: Table<R>, k: number): ParquetTableWriter<R> => {
    const w = new ParquetTableWriter(partitioned(table), part(k), withTable(o.file, table.name));
    writers.push(w as ParquetTableWriter<never>);
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
    });
    if (o.onCaptureStart !== undefined) rows.captureStart = o.onCaptureStart;
    o.onStart?.(file);
    const result = await analyzeInput(file, input, analyze, () => {}, rows);
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
    const counts: ExportCounts = {
      capture: origin.capture,
      requests: 0,
      connections: report.connections.length,
      instances: report.instances.length,
      findings: report.findings.length,
    };
    for (const w of writers) w.close();
    counts.requests = requests.written;
    o.onCapture?.(file, counts);
    return counts;
  } catch (e) {
    for (const w of writers) w.abort();
    // Folders this run made for the capture and left empty go too.
    for (const f of folders) rmEmpty(f);
    throw e;
  }
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
