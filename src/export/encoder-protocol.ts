/**
 * Messages between the export's main thread (encoder.ts) and its encoder thread (encoder-worker.ts),
 * and the column types they carry. A leaf: it imports no module of export/.
 */
import type { KeyValue, SchemaElement } from 'hyparquet-writer';

/**
 * What a column holds. int16 is Parquet INT32 annotated INT_16, as Kafka's int16 fields
 * (API keys, versions, error codes) are; timestamp is INT64 TIMESTAMP(MICROS, UTC); uuid is the
 * 16 bytes as a BYTE_ARRAY without annotation (plain binary: FIXED_LEN_BYTE_ARRAY annotated UUID
 * is refused by Spark's reader, and unannotated FIXED_LEN_BYTE_ARRAY by Spark before 4 and by
 * Athena's Iceberg tables; test/data/parquet-engine-types.json); strings is a LIST of strings;
 * tags is a LIST of (tag int32, size int32) structs.
 */
export type ColumnType = 'bool' | 'int16' | 'int32' | 'int64' | 'double' | 'string' | 'timestamp' | 'uuid' | 'strings' | 'tags';

/** A column's value as a getter returns it (null where the column is nullable). */
export type Value = boolean | number | string | Uint8Array | readonly string[] | readonly { tag: number; size: number }[] | null;

/** Index in the shared state of the count of messages the encoder thread has handled. */
export const DONE = 0;

/**
 * One column of a row group, as the main thread buffered it: numbers in typed arrays (with a
 * validity mask when they can be null), strings and UUIDs as indexes into the group's distinct
 * values (-1 for null), the rest (booleans, lists) as values.
 */
export type GroupValues =
  | { kind: 'numbers'; values: Int32Array | Float64Array }
  | { kind: 'nullable'; values: Float64Array; valid: Uint8Array }
  | { kind: 'dictionary'; index: Int32Array; distinct: (string | Uint8Array)[] }
  | { kind: 'values'; values: Value[] };

export interface GroupColumn {
  name: string;
  type: ColumnType;
  data: GroupValues;
  statistics: boolean;
  /** Written PLAIN, not dictionary-encoded. */
  plain: boolean;
}

export type EncoderMessage =
  | { op: 'open'; id: number; fd: number; schema: SchemaElement[]; kvMetadata: KeyValue[] | undefined; createdBy: string | undefined }
  | { op: 'group'; id: number; rows: number; columns: GroupColumn[] }
  | { op: 'finish'; id: number }
  | { op: 'abort'; id: number };

/** Posted on the reply port when a message failed; the file it names is given up. */
export interface EncoderFailure {
  id: number;
  message: string;
  code: string | null;
}
