/**
 * Where `kcid requests` puts its rows: a table, NDJSON lines or a Parquet file, behind one
 * interface. The command filters and counts; a sink only writes.
 */
import type { ConnState } from '../analysis/connection-state.js';
import type { Clock } from '../report/clock.js';
import { RequestTable, type RequestRow } from '../report/requests.js';
import { writeRequestNdjson } from '../report/requests-ndjson.js';
import type { Out } from './output.js';
import { inputLegend, parquetFileOptions } from './wiring.js';
import { groupDigits } from '../base/digits.js';

export interface RowSink {
  /** A row the filters kept: of input `input` (from 0), at `us`. */
  add(row: RequestRow, s: ConnState, us: number, input: number): void;
  /** Every input read: what ends the output (a table's footer and totals, a Parquet footer). */
  finish(counts: { kept: number; orphans: number }): void;
  /** The run failed: a partial file is removed. */
  abort(): void;
}

/** Rows `kcid requests` on a terminal measures before it prints the header. */
const SAMPLE_ROWS = 200;

export interface TableSinkOptions {
  captures: readonly string[];
  clock: Clock;
  /** --follow: rows must not wait for a sample. */
  follow: boolean;
}

/** The table: on a terminal (not --follow) the first rows decide the column widths. */
export function tableSink(out: Out, o: TableSinkOptions): RowSink {
  const tty = out.isTTY;
  const multiple = o.captures.length > 1;
  const sampling = tty && !o.follow;
  const sample: RequestRow[] = [];
  let table: RequestTable | null = null;
  const layOut = (): RequestTable => {
    const t = new RequestTable({ ...(tty ? { width: out.columns ?? 80 } : {}), ...(sampling ? { sample } : {}), multipleInputs: multiple, clock: o.clock });
    table = t;
    if (multiple) out.write(inputLegend(o.captures));
    out.write(t.header());
    for (const row of sample) out.write(t.row(row));
    sample.length = 0;
    return t;
  };
  if (!sampling) layOut();
  return {
    add(row) {
      if (table !== null) return out.write(table.row(row));
      sample.push(row);
      if (sample.length >= SAMPLE_ROWS) layOut();
    },
    finish({ kept, orphans }) {
      out.write((table ?? layOut()).footer());
      const requests = kept - orphans;
      out.write(`${groupDigits(requests)} ${requests === 1 ? 'request' : 'requests'}${orphans === 0 ? '' : `, ${groupDigits(orphans)} ${orphans === 1 ? 'response' : 'responses'} whose request was not captured`}\n`);
      out.close();
    },
    abort() {},
  };
}

/** One JSON object a line, written as bytes into the output's buffer. */
export function ndjsonSink(out: Out): RowSink {
  return {
    add(row, s) {
      writeRequestNdjson(out.bytes, row, s);
      out.wrote();
    },
    finish() {
      out.close();
    },
    abort() {},
  };
}

/** `kcid requests --format parquet -o FILE`: the export's requests table, every capture in one file. */
export async function parquetSink(captures: readonly string[], output: string): Promise<RowSink> {
  const { openRequestsParquet } = await import('../export/single.js');
  const parquet = openRequestsParquet(captures, output, parquetFileOptions());
  return {
    add(row, _s, us, input) {
      // The Parquet requests table holds requests (a response without its request is not one).
      if (row.requestCaptured) parquet.add(row, us, input);
    },
    finish() {
      parquet.close();
    },
    abort() {
      parquet.abort();
    },
  };
}
