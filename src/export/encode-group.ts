/**
 * Encoding an export's row groups into Parquet files: hyparquet-writer makes the pages, which go
 * to each file's descriptor (opened by the main thread) 1 MiB at a time. Runs on the encoder
 * thread (encoder-worker.ts), or on the calling thread (encoder.ts says when).
 */
import { writeSync } from 'node:fs';
import { ByteWriter, ParquetWriter, type ColumnSource } from 'hyparquet-writer';
import type { EncoderMessage, GroupColumn } from './encoder-protocol.js';

/** Bytes buffered before they are written to the file. */
const WRITE_CHUNK = 1024 * 1024;

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

/** Open files by id; a file whose encoding failed is dropped (its later groups are ignored). */
const files = new Map<number, ParquetWriter>();

/** Forgets a file (after a failure). */
export function drop(id: number): void {
  files.delete(id);
}

/** Handles one message; throws what failed (the file is then dropped). */
export function handle(m: EncoderMessage): void {
  if (m.op === 'open') {
    files.set(m.id, new ParquetWriter({ writer: new FileSink(m.fd), schema: m.schema, codec: 'SNAPPY', kvMetadata: m.kvMetadata, createdBy: m.createdBy }));
    return;
  }
  const w = files.get(m.id);
  if (w === undefined) return;
  if (m.op === 'abort') {
    files.delete(m.id);
    return;
  }
  if (m.op === 'finish') {
    files.delete(m.id);
    w.finish();
    return;
  }
  w.write({ columnData: m.columns.map(columnSource), rowGroupSize: m.rows });
}

function columnSource(c: GroupColumn): ColumnSource {
  // No page indexes: the offset index without a column index (which hyparquet-writer leaves out
  // by default) lets no reader skip a page.
  const source: ColumnSource = { name: c.name, data: columnData(c), offsetIndex: false, statistics: c.statistics };
  if (c.plain) source.encoding = 'PLAIN';
  return source;
}

const utf8 = new TextEncoder();

/** A column's values as hyparquet-writer takes them: INT64 as bigint, strings as UTF-8 bytes (each distinct string encoded once). */
function columnData(c: GroupColumn): ColumnSource['data'] {
  const d = c.data;
  const int64 = c.type === 'int64' || c.type === 'timestamp';
  switch (d.kind) {
    case 'numbers': {
      if (!int64) return d.values;
      const out = new BigInt64Array(d.values.length);
      for (let i = 0; i < d.values.length; i++) out[i] = BigInt(Math.trunc(d.values[i]!));
      return out;
    }
    case 'nullable': {
      const out = new Array<number | bigint | null>(d.values.length);
      for (let i = 0; i < d.values.length; i++) out[i] = d.valid[i] === 0 ? null : int64 ? BigInt(Math.trunc(d.values[i]!)) : d.values[i]!;
      return out;
    }
    case 'dictionary': {
      const bytes = d.distinct.map((v) => (typeof v === 'string' ? utf8.encode(v) : v));
      const out = new Array<Uint8Array | null>(d.index.length);
      for (let i = 0; i < d.index.length; i++) {
        const k = d.index[i]!;
        out[i] = k < 0 ? null : bytes[k]!;
      }
      return out;
    }
    case 'values':
      return d.values as ColumnSource['data'];
  }
}

