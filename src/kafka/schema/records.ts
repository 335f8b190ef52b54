/**
 * Summaries of a `records` field (Produce, Fetch, ShareFetch, ...) read from the record batch headers
 * only, never decompressed (https://kafka.apache.org/documentation/#recordbatch):
 *
 *   baseOffset int64, batchLength int32, partitionLeaderEpoch int32, magic int8, crc uint32,
 *   attributes int16, lastOffsetDelta int32, baseTimestamp int64, maxTimestamp int64,
 *   producerId int64, producerEpoch int16, baseSequence int32, recordCount int32   (61 bytes)
 *
 * attributes: bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd), bit 3 timestamp type
 * (0 CreateTime, 1 LogAppendTime), bit 4 transactional, bit 5 control. The old message sets (magic 0
 * and 1: offset int64, size int32, crc, magic, attributes, ...) are counted with their sizes. A batch
 * cut short at the end is counted as truncated bytes: a Fetch response may end with a partial batch.
 */

export type Compression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd' | 'unknown';

const CODECS: readonly Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

export interface BatchSummary {
  readonly baseOffset: bigint;
  /** The whole batch on the wire, its 12 bytes of offset and length included. */
  readonly size: number;
  readonly magic: number;
  /** Magic 2 only (null for message sets of magic 0 and 1). */
  readonly partitionLeaderEpoch: number | null;
  readonly crc: number;
  readonly compression: Compression;
  readonly timestampType: 'CreateTime' | 'LogAppendTime';
  readonly transactional: boolean;
  readonly control: boolean;
  readonly lastOffsetDelta: number | null;
  readonly baseTimestamp: bigint | null;
  readonly maxTimestamp: bigint | null;
  readonly producerId: bigint | null;
  readonly producerEpoch: number | null;
  readonly baseSequence: number | null;
  /** Records of a magic 2 batch; 1 for a magic 0/1 message (a compressed wrapper counts as one). */
  readonly recordCount: number;
}

export interface RecordsSummary {
  readonly size: number;
  /** Every batch (message, for magic 0/1), up to {@link MAX_BATCHES_LISTED}. */
  readonly batches: readonly BatchSummary[];
  readonly batchCount: number;
  readonly recordCount: number;
  /** Bytes at the end that do not hold a whole batch. */
  readonly truncatedBytes: number;
}

export const MAX_BATCHES_LISTED = 1000;

const V2_HEADER = 61;

export function summariseRecords(buf: Uint8Array, start: number, end: number): RecordsSummary {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const batches: BatchSummary[] = [];
  let batchCount = 0;
  let recordCount = 0;
  let p = start;
  while (end - p >= 17) {
    const length = dv.getInt32(p + 8);
    const magic = dv.getInt8(p + 16);
    const size = 12 + length;
    if (length < 0 || size > end - p) break;
    let b: BatchSummary;
    if (magic === 2) {
      if (size < V2_HEADER) break;
      const attributes = dv.getInt16(p + 21);
      b = {
        baseOffset: dv.getBigInt64(p),
        size,
        magic,
        partitionLeaderEpoch: dv.getInt32(p + 12),
        crc: dv.getUint32(p + 17),
        compression: CODECS[attributes & 7] ?? 'unknown',
        timestampType: attributes & 8 ? 'LogAppendTime' : 'CreateTime',
        transactional: (attributes & 16) !== 0,
        control: (attributes & 32) !== 0,
        lastOffsetDelta: dv.getInt32(p + 23),
        baseTimestamp: dv.getBigInt64(p + 27),
        maxTimestamp: dv.getBigInt64(p + 35),
        producerId: dv.getBigInt64(p + 43),
        producerEpoch: dv.getInt16(p + 51),
        baseSequence: dv.getInt32(p + 53),
        recordCount: dv.getInt32(p + 57),
      };
    } else if (magic === 0 || magic === 1) {
      // offset int64, size int32, crc uint32, magic int8, attributes int8, [timestamp int64], key, value
      if (size < (magic === 0 ? 26 : 34)) break;
      const attributes = buf[p + 17]!;
      b = {
        baseOffset: dv.getBigInt64(p),
        size,
        magic,
        partitionLeaderEpoch: null,
        crc: dv.getUint32(p + 12),
        compression: CODECS[attributes & 7] ?? 'unknown',
        timestampType: magic === 1 && attributes & 8 ? 'LogAppendTime' : 'CreateTime',
        transactional: false,
        control: false,
        lastOffsetDelta: null,
        baseTimestamp: magic === 1 ? dv.getBigInt64(p + 18) : null,
        maxTimestamp: null,
        producerId: null,
        producerEpoch: null,
        baseSequence: null,
        recordCount: 1,
      };
    } else {
      break;
    }
    batchCount++;
    recordCount += Math.max(0, b.recordCount);
    if (batches.length < MAX_BATCHES_LISTED) batches.push(b);
    p += size;
  }
  return { size: end - start, batches, batchCount, recordCount, truncatedBytes: end - p };
}
