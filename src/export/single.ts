/**
 * One table in one file: `kcid requests --format parquet -o FILE` (the requests of every capture
 * given) and `kcid analyze --format parquet -o FILE` (the findings of the report, after rule
 * settings, baseline and filters). Same columns as the export's tables.
 */
import type { Report } from '../analysis/report.js';
import type { RequestRow } from '../report/requests.js';
import { captureName } from './names.js';
import { ParquetTableWriter, withTable, type ParquetFileOptions } from './parquet.js';
import { FINDINGS, REQUESTS, type FindingRecord, type Origin, type RequestRecord } from './tables.js';

export interface RequestsParquet {
  add(row: RequestRow, us: number, input: number): void;
  close(): void;
  abort(): void;
}

export function openRequestsParquet(files: readonly string[], path: string, opts: ParquetFileOptions): RequestsParquet {
  const origins: Origin[] = files.map((file) => ({ file, capture: captureName(file) }));
  const writer = new ParquetTableWriter(REQUESTS, path, withTable(opts, 'requests'));
  const holder: RequestRecord = { row: null as unknown as RequestRow, us: 0, origin: origins[0]!, input: 0 };
  return {
    add(row, us, input) {
      holder.row = row;
      holder.us = us;
      holder.origin = origins[input]!;
      holder.input = input;
      writer.add(holder);
    },
    close: () => writer.close(),
    abort: () => writer.abort(),
  };
}

export function writeFindingsParquet(report: Report, path: string, opts: ParquetFileOptions): void {
  const writer = new ParquetTableWriter(FINDINGS, path, withTable(opts, 'findings'));
  try {
    const origins: Origin[] = report.inputs.map((i) => ({ file: i.file, capture: captureName(i.file) }));
    const holder: FindingRecord = { f: null as never, origin: origins[0]!, input: 0 };
    for (const f of report.findings) {
      holder.f = f;
      holder.origin = origins[f.input] ?? { file: '', capture: '' };
      holder.input = f.input;
      writer.add(holder);
    }
    writer.close();
  } catch (e) {
    writer.abort();
    throw e;
  }
}
