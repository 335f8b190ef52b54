/**
 * One Parquet file written as rows arrive: a table's columns are data ({@link Column}), rows are
 * buffered column by column and written as a row group when the group is full (by rows or by
 * bytes), so memory holds one row group however large the capture. hyparquet-writer encodes the
 * pages (dictionary or plain, statistics, Snappy); the bytes go to the file 1 MiB at a time.
 *
 * The file is written under a temporary name and renamed when complete: a reader of the folder
 * (an engine listing `requests/`) never sees half a file, and an export that fails leaves none.
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { ByteWriter, ParquetWriter, type ColumnSource, type KeyValue, type SchemaElement } from 'hyparquet-writer';
import { collectIfGrown } from './collect.js';
import { ExportError } from './errors.js';

/**
 * What a column holds. int16 is Parquet INT32 annotated INT_16, as Kafka's int16 fields
 * (API keys, versions, error codes) are; timestamp is INT64 TIMESTAMP(MICROS, UTC); uuid is
 * FIXED_LEN_BYTE_ARRAY(16) annotated UUID; strings is a LIST of strings; tags is a LIST of
 * (tag int32, size int32) structs.
 */
export type ColumnType = 'bool' | 'int16' | 'int32' | 'int64' | 'double' | 'string' | 'timestamp' | 'uuid' | 'strings' | 'tags';

/** A column's value as a getter returns it (null where the column is nullable). */
export type Value = boolean | number | string | Uint8Array | readonly string[] | readonly { tag: number; size: number }[] | null;

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
 * 8,192 231 MB; ndjson 140 MB. Groups of 16,384 requests are about 400 KB of Parquet. What bounds
 * the heap is the collection between groups ({@link collectIfGrown}, src/export/collect.ts).
 */
export const ROW_GROUP_ROWS = 16_384;
export const ROW_GROUP_BYTES = 8 * 1024 * 1024;
/** Bytes buffered before they are written to the file. */
const WRITE_CHUNK = 1024 * 1024;

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
      return [{ name, type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' }, repetition_type }];
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

/** A ByteWriter that hands its bytes to a file descriptor every {@link WRITE_CHUNK} bytes. */
class FileSink extends ByteWriter {
  constructor(private readonly fd: number) {
    super(WRITE_CHUNK * 2);
  }

  override ensure(size: number): void {
    if (this.index > WRITE_CHUNK) this.drain();
    super.ensure(size);
  }

  override finish(): void {
    this.drain();
  }

  private drain(): void {
    const bytes = new Uint8Array(this.buffer, 0, this.index);
    let at = 0;
    while (at < bytes.length) at += writeSync(this.fd, bytes, at);
    this.index = 0;
  }
}


export interface ParquetFileOptions {
  /** Key-value metadata of the file (kcid's version, the table). */
  metadata?: KeyValue[];
  createdBy?: string;
}

/**
 * One column's values of the row group being filled. Numbers that cannot be null go into a typed
 * array made once and reused for every group (no object per value for V8 to promote and later
 * collect); the rest into a plain array, emptied after each group.
 */
type Buffer = Int32Array | Float64Array | BigInt64Array | Value[];

function makeBuffer(c: Column<unknown>): Buffer {
  if (c.nullable) return [];
  if (c.type === 'int16' || c.type === 'int32') return new Int32Array(ROW_GROUP_ROWS);
  if (c.type === 'double') return new Float64Array(ROW_GROUP_ROWS);
  if (c.type === 'int64' || c.type === 'timestamp') return new BigInt64Array(ROW_GROUP_ROWS);
  return [];
}

export class ParquetTableWriter<R> {
  private readonly tmp: string;
  private readonly fd: number;
  private readonly writer: ParquetWriter;
  private readonly buffers: Buffer[];
  private rows = 0;
  private bytes = 0;
  private closed = false;
  /** Rows written to the file so far. */
  written = 0;

  constructor(
    private readonly table: Table<R>,
    private readonly path: string,
    opts: ParquetFileOptions = {},
  ) {
    this.tmp = `${path}.${process.pid}.tmp`;
    try {
      this.fd = openSync(this.tmp, 'w');
    } catch (e) {
      throw new ExportError(`cannot write ${path}: ${describe(e)}`);
    }
    this.buffers = table.columns.map((c) => makeBuffer(c as Column<unknown>));
    this.writer = new ParquetWriter({
      writer: new FileSink(this.fd),
      schema: parquetSchema(table as Table<never>),
      codec: 'SNAPPY',
      kvMetadata: opts.metadata,
      createdBy: opts.createdBy,
    });
  }

  add(row: R): void {
    const columns = this.table.columns;
    const at = this.rows;
    let bytes = 0;
    for (let i = 0; i < columns.length; i++) {
      const v = columns[i]!.get(row);
      const b = this.buffers[i]!;
      if (b instanceof BigInt64Array) {
        b[at] = BigInt(Math.trunc(v as number));
        bytes += 8;
      } else if (Array.isArray(b)) {
        b.push(v);
        bytes += sizeOf(v);
      } else {
        b[at] = v as number;
        bytes += 8;
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
      this.writer.finish();
      closeSync(this.fd);
      this.closed = true;
      renameSync(this.tmp, this.path);
    } catch (e) {
      this.abort();
      throw e instanceof ExportError ? e : new ExportError(`cannot write ${this.path}: ${describe(e)}`);
    }
  }

  /** Gives up: the temporary file is removed, nothing is left under the table's name. */
  abort(): void {
    if (!this.closed) {
      this.closed = true;
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
    }
    rmSync(this.tmp, { force: true });
  }

  private flushGroup(): void {
    const n = this.rows;
    const columnData: ColumnSource[] = this.table.columns.map((c, i) => {
      const b = this.buffers[i]!;
      const data = Array.isArray(b) ? columnArray(c.type, b) : b.subarray(0, n);
      // No page indexes: the offset index without a column index (which hyparquet-writer leaves
      // out by default) lets no reader skip a page.
      const source: ColumnSource = { name: c.name, data, offsetIndex: false, statistics: c.statistics !== false && c.type !== 'strings' && c.type !== 'tags' };
      if (c.distinct === true) source.encoding = 'PLAIN';
      return source;
    });
    try {
      this.writer.write({ columnData, rowGroupSize: n });
    } catch (e) {
      throw new ExportError(`cannot write ${this.path}: ${describe(e)}`);
    }
    this.written += n;
    collectIfGrown();
    for (const b of this.buffers) if (Array.isArray(b)) b.length = 0;
    this.rows = 0;
    this.bytes = 0;
  }
}

const utf8 = new TextEncoder();

/**
 * A column's buffered values as hyparquet-writer takes them: INT64 as bigint, and strings as
 * UTF-8 bytes, each distinct string encoded once per group (hyparquet-writer would make an array
 * per value, and its dictionary encoder hashes a shared array once).
 */
function columnArray(type: ColumnType, values: Value[]): ColumnSource['data'] {
  if (type === 'int64' || type === 'timestamp') return values.map((v) => (v === null ? null : BigInt(Math.trunc(v as number))));
  if (type === 'string') {
    const encoded = new Map<string, Uint8Array>();
    return values.map((v) => {
      if (v === null) return null;
      let bytes = encoded.get(v as string);
      if (bytes === undefined) encoded.set(v as string, (bytes = utf8.encode(v as string)));
      return bytes;
    });
  }
  return values as ColumnSource['data'];
}

function describe(e: unknown): string {
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
