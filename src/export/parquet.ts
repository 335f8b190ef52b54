/**
 * One Parquet file written as rows arrive: a table's columns are data ({@link Column}), rows are
 * buffered column by column and written as a row group when the group is full (by rows or by
 * bytes), so memory holds a few row groups however large the capture. hyparquet-writer encodes
 * the pages (dictionary or plain, statistics, Snappy) on the encoder thread (encoder.ts), and the
 * bytes go to the file 1 MiB at a time.
 *
 * A file of `-o` is written under a hidden temporary name next to it and renamed when complete
 * (src/base/safe-write.ts): a reader of the folder never sees half a file, and a write that fails
 * leaves none; an existing FIFO or character device there is written to as it is, never replaced.
 * An export's files are created exclusively in its staging folder, which is renamed as a whole
 * (export.ts).
 */
import { closeSync, rmSync } from 'node:fs';
import { createExclusive, createTemp, openOutput, outputKind, renameInto } from '../base/safe-write.js';
import type { KeyValue, SchemaElement } from 'hyparquet-writer';
import { collectIfGrown } from './collect.js';
import { encoder, type Encoder } from './encoder.js';
import type { ColumnType, GroupColumn, GroupValues, Value } from './encoder-protocol.js';
import { ExportError } from './errors.js';

// The column types are the encoder protocol's (a leaf module, so encoder and writer import no circle).
export type { ColumnType, Value } from './encoder-protocol.js';

export interface Column<R> {
  name: string;
  type: ColumnType;
  nullable: boolean;
  get(row: R): Value;
  /**
   * Nearly every value differs (frames, times, correlation IDs, latencies): written PLAIN, without
   * the dictionary hyparquet-writer would otherwise sample and then reject for every group.
   */
  distinct?: boolean;
  /**
   * Min/max statistics per row group, which let engines skip groups (`where time between ...`).
   * On by default; off for values nobody filters a range of (correlation IDs, latencies), where
   * they cost time (measured: statistics are a quarter of hyparquet-writer's work on chatty).
   * Lists never have them.
   */
  statistics?: boolean;
}

export interface Table<R> {
  name: string;
  columns: readonly Column<R>[];
}

/**
 * A row group holds at most this many rows, and about ROW_GROUP_BYTES of values (long ClientIds
 * or messages make fewer rows). Measured on chatty's requests (`kcid requests --format parquet`,
 * peak RSS, 2 cores under load): 65,536 rows 269-391 MB, 32,768 323 MB, 16,384 231-237 MB,
 * 8,192 231 MB; ndjson 140 MB (all before the encoder thread). With the encoder thread, 8,192
 * rows keep its heap and the group in flight smaller (peak RSS 10-15 MB lower than 16,384). Groups
 * of 8,192 requests are about 200 KB of Parquet; engines skip groups by their statistics.
 */
export const ROW_GROUP_ROWS = 8_192;
export const ROW_GROUP_BYTES = 8 * 1024 * 1024;

function leafSchema(c: Column<unknown>): SchemaElement[] {
  const repetition_type = c.nullable ? 'OPTIONAL' : 'REQUIRED';
  const name = c.name;
  switch (c.type) {
    case 'bool':
      return [{ name, type: 'BOOLEAN', repetition_type }];
    case 'int16':
      // The converted type alone: hyparquet-writer 0.17.0 writes the INTEGER logical type's
      // bitWidth as a thrift i32 where the format has an i8, and readers reject the footer.
      // INT_16 means the same to every reader (DuckDB SMALLINT, Spark ShortType, Trino smallint).
      return [{ name, type: 'INT32', converted_type: 'INT_16', repetition_type }];
    case 'int32':
      return [{ name, type: 'INT32', repetition_type }];
    case 'int64':
      return [{ name, type: 'INT64', repetition_type }];
    case 'double':
      return [{ name, type: 'DOUBLE', repetition_type }];
    case 'string':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type }];
    case 'timestamp':
      return [{ name, type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' }, repetition_type }];
    case 'uuid':
      // Binary, the one bytes type every engine reads (Spark BinaryType, Trino and Athena varbinary, BigQuery BYTES).
      return [{ name, type: 'BYTE_ARRAY', repetition_type }];
    case 'strings':
      return [
        { name, converted_type: 'LIST', logical_type: { type: 'LIST' }, repetition_type, num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'REQUIRED' },
      ];
    case 'tags':
      return [
        { name, converted_type: 'LIST', logical_type: { type: 'LIST' }, repetition_type, num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
        { name: 'tag', type: 'INT32', repetition_type: 'REQUIRED' },
        { name: 'size', type: 'INT32', repetition_type: 'REQUIRED' },
      ];
  }
}

/** The Parquet schema of a table: a root, then each column's elements. */
export function parquetSchema(table: Table<never>): SchemaElement[] {
  const root: SchemaElement = { name: 'schema', num_children: table.columns.length };
  return [root, ...table.columns.flatMap((c) => leafSchema(c as Column<unknown>))];
}

/** Bytes a value adds to a row group, roughly (what bounds a group besides its row count). */
function sizeOf(v: Value): number {
  if (v === null || typeof v === 'boolean' || typeof v === 'number') return 8;
  if (typeof v === 'string') return 4 + v.length;
  if (v instanceof Uint8Array) return 16;
  let n = 4;
  for (const e of v) n += typeof e === 'string' ? 4 + e.length : 8;
  return n;
}

export interface ParquetFileOptions {
  /** Key-value metadata of the file (kcid's version, the table). */
  metadata?: KeyValue[];
  createdBy?: string;
  /**
   * 'output' (the default, `-o`): a regular file written under a temporary name and renamed, or an
   * existing FIFO or character device written as it is. 'create': a new file made exclusively at
   * the path (in a folder kcid made), removed if the write fails.
   */
  placement?: 'output' | 'create';
}

/**
 * One column's values of the row group being filled, kept so that a group leaves little behind
 * for V8 to promote and later collect: numbers in typed arrays made once per file (with a
 * validity mask when they can be null; int64s and times as doubles, exact for µs and frame
 * numbers), strings and UUIDs as an index into the group's distinct values (a capture's rows
 * repeat a few addresses, API names, ClientIds and IDs: the values a group keeps are those few,
 * not one string per row), and booleans and lists as values.
 */
type Buffer =
  | { kind: 'numbers'; values: Int32Array | Float64Array }
  | { kind: 'nullable'; values: Float64Array; valid: Uint8Array }
  | { kind: 'dictionary'; index: Int32Array; ids: Map<string | Uint8Array, number>; distinct: (string | Uint8Array)[] }
  | { kind: 'values'; values: Value[] };

function makeBuffer(c: Column<unknown>): Buffer {
  switch (c.type) {
    case 'int16':
    case 'int32':
      return c.nullable ? { kind: 'nullable', values: new Float64Array(ROW_GROUP_ROWS), valid: new Uint8Array(ROW_GROUP_ROWS) } : { kind: 'numbers', values: new Int32Array(ROW_GROUP_ROWS) };
    case 'int64':
    case 'timestamp':
    case 'double':
      return c.nullable ? { kind: 'nullable', values: new Float64Array(ROW_GROUP_ROWS), valid: new Uint8Array(ROW_GROUP_ROWS) } : { kind: 'numbers', values: new Float64Array(ROW_GROUP_ROWS) };
    case 'string':
    case 'uuid':
      return { kind: 'dictionary', index: new Int32Array(ROW_GROUP_ROWS), ids: new Map(), distinct: [] };
    default:
      return { kind: 'values', values: [] };
  }
}

/** The group's values of a buffer, to hand over (typed arrays copied, so the buffer is reused), and the buffer emptied. */
function takeGroup(b: Buffer, n: number, transfer: ArrayBuffer[]): GroupValues {
  switch (b.kind) {
    case 'numbers': {
      const values = b.values.slice(0, n);
      transfer.push(values.buffer as ArrayBuffer);
      return { kind: 'numbers', values };
    }
    case 'nullable': {
      const values = b.values.slice(0, n);
      const valid = b.valid.slice(0, n);
      transfer.push(values.buffer as ArrayBuffer, valid.buffer as ArrayBuffer);
      return { kind: 'nullable', values, valid };
    }
    case 'dictionary': {
      const index = b.index.slice(0, n);
      transfer.push(index.buffer as ArrayBuffer);
      const distinct = b.distinct;
      b.distinct = [];
      b.ids.clear();
      return { kind: 'dictionary', index, distinct };
    }
    case 'values': {
      const values = b.values;
      b.values = [];
      return { kind: 'values', values };
    }
  }
}

/**
 * A Parquet file written as rows arrive: rows are buffered column by column here, and each full
 * row group is encoded (hyparquet-writer) and appended to the file by the encoder thread
 * (encoder.ts), while the capture is read on.
 */
export class ParquetTableWriter<R> {
  /** Where the bytes go until the file is complete (removed if it is not); null for a FIFO or device. */
  private readonly tmp: string | null;
  /** The temporary file is renamed to the path at the end. */
  private readonly rename: boolean;
  private readonly fd: number;
  /** The encoder this file's groups go to (a later file may get a new one if this one's thread dies). */
  private readonly enc: Encoder;
  private readonly file: number;
  private readonly buffers: Buffer[];
  private rows = 0;
  private bytes = 0;
  private closed = false;
  /** Rows handed to the encoder in full row groups so far. */
  written = 0;

  constructor(
    private readonly table: Table<R>,
    private readonly path: string,
    opts: ParquetFileOptions = {},
  ) {
    try {
      if (opts.placement === 'create') {
        this.fd = createExclusive(path);
        this.tmp = path;
        this.rename = false;
      } else if (outputKind(path) === 'stream') {
        this.fd = openOutput(path);
        this.tmp = null;
        this.rename = false;
      } else {
        const t = createTemp(path);
        this.fd = t.fd;
        this.tmp = t.tmp;
        this.rename = true;
      }
    } catch (e) {
      throw new ExportError(`cannot write ${path}: ${describe(e)}`);
    }
    this.buffers = table.columns.map((c) => makeBuffer(c as Column<unknown>));
    this.enc = encoder();
    try {
      this.file = this.enc.open(this.fd, parquetSchema(table as Table<never>), opts.metadata, opts.createdBy);
    } catch (e) {
      closeSync(this.fd);
      if (this.tmp !== null) rmSync(this.tmp, { force: true });
      throw e;
    }
  }

  add(row: R): void {
    const columns = this.table.columns;
    const at = this.rows;
    let bytes = 0;
    for (let i = 0; i < columns.length; i++) {
      const v = columns[i]!.get(row);
      const b = this.buffers[i]!;
      switch (b.kind) {
        case 'numbers':
          b.values[at] = v as number;
          bytes += 8;
          break;
        case 'nullable':
          if (v === null) {
            b.valid[at] = 0;
          } else {
            b.valid[at] = 1;
            b.values[at] = v as number;
          }
          bytes += 8;
          break;
        case 'dictionary': {
          // Counted per row, as the encoder will write them (a group of long values is cut short).
          bytes += sizeOf(v);
          if (v === null) {
            b.index[at] = -1;
            break;
          }
          const key = v as string | Uint8Array;
          let k = b.ids.get(key);
          if (k === undefined) {
            k = b.distinct.length;
            b.ids.set(key, k);
            b.distinct.push(key);
          }
          b.index[at] = k;
          break;
        }
        case 'values':
          b.values.push(v);
          bytes += sizeOf(v);
          break;
      }
    }
    this.rows++;
    this.bytes += bytes;
    if (this.rows >= ROW_GROUP_ROWS || this.bytes >= ROW_GROUP_BYTES) this.flushGroup();
  }

  /** Writes the last row group and the footer, then gives the file its name. */
  close(): void {
    if (this.closed) return;
    try {
      if (this.rows > 0) this.flushGroup();
      this.enc.finish(this.file);
      closeSync(this.fd);
      this.closed = true;
      if (this.rename) renameInto(this.tmp!, this.path);
    } catch (e) {
      this.abort();
      throw this.failure(e);
    }
  }

  /** Gives up: the temporary file is removed, nothing is left under the table's name. */
  abort(): void {
    if (!this.closed) {
      this.closed = true;
      // The encoder stops writing to the descriptor before it is closed (and perhaps reused).
      try {
        this.enc.abort(this.file);
      } catch {
        // the encoder thread is gone: nothing writes to the file any more
      }
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
    }
    if (this.tmp !== null) rmSync(this.tmp, { force: true });
  }

  /** An error as one line naming the file (the encoder's own errors, a dead thread's cause included, get the name too). */
  private failure(e: unknown): ExportError {
    return e instanceof ExportError && e.message.startsWith('cannot write ') ? e : new ExportError(`cannot write ${this.path}: ${describe(e)}`);
  }

  private flushGroup(): void {
    const n = this.rows;
    const transfer: ArrayBuffer[] = [];
    const columns: GroupColumn[] = this.table.columns.map((c, i) => ({
      name: c.name,
      type: c.type,
      data: takeGroup(this.buffers[i]!, n, transfer),
      statistics: c.statistics !== false && c.type !== 'strings' && c.type !== 'tags',
      plain: c.distinct === true,
    }));
    this.rows = 0;
    this.bytes = 0;
    this.written += n;
    // This thread's heap holds the capture's analysis; what the rows of a group leave behind is
    // collected when it has grown HEAP_BUDGET (a few times per capture: see collect.ts).
    collectIfGrown();
    try {
      this.enc.group(this.file, n, columns, transfer);
    } catch (e) {
      throw this.failure(e);
    }
  }
}

function describe(e: unknown): string {
  if (e instanceof ExportError) return e.message;
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC') return 'no space left on the device';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOENT') return 'no such folder';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'ENOTDIR') return 'a part of the path is not a folder';
  return (e as Error).message;
}

/** The options with the table's name added to the file's metadata. */
export function withTable(opts: ParquetFileOptions | undefined, table: string): ParquetFileOptions {
  return { ...opts, metadata: [...(opts?.metadata ?? []), { key: 'kcid.table', value: table }] };
}
