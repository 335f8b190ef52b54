/**
 * PushTelemetry's Metrics blob is compressed with the request's CompressionType, framed as Kafka
 * frames record batches (KIP-714): 0 none, 1 gzip (a gzip stream), 2 snappy (Kafka's xerial
 * framing, or a raw snappy block), 3 lz4 (the LZ4 frame format), 4 zstd (a zstd frame).
 *
 * The blob is untrusted: every codec is bounded in output by `limit` decompressed bytes (a bomb is
 * refused by what its headers declare, or stopped where its output passes the limit, never
 * decompressed whole) and in work: each decoder's steps consume input or produce output, so a
 * blob costs time linear in its size plus the limit (docs/fragments/hostile-decoders.md).
 *
 * Decoders: node:zlib for gzip (its maxOutputLength stops inflating at the limit); zstd.ts, a
 * bounded decoder of kcid's own after fzstd's (Node 20's zlib has no zstd, and fzstd's work was
 * unbounded); lz4.ts, kcid's own (lz4js read sizes as signed numbers and looped on lies);
 * snappy.ts, kcid's own (snappyjs ran a block past what it declared, writing past its buffer).
 */
import { gunzipSync } from 'node:zlib';
import { snappyBlock } from './snappy.js';
import { PayloadError, tooLarge } from './payload-error.js';
import { unlz4 } from './lz4.js';
import { unzstd } from './zstd.js';

export { COMPRESSION_NAMES, compressionName } from './names.js';
export { PayloadError } from './payload-error.js';

/** The decompressed blob, at most `limit` bytes; throws PayloadError. */
export function decompress(type: number, blob: Uint8Array, limit: number): Uint8Array {
  switch (type) {
    case 0:
      if (blob.length > limit) throw tooLarge(`uncompressed metrics of ${blob.length} bytes`, limit);
      return blob;
    case 1:
      return gunzip(blob, limit);
    case 2:
      return unsnappy(blob, limit);
    case 3:
      return unlz4(blob, limit);
    case 4:
      return unzstd(blob, limit);
    default:
      throw new PayloadError('unknown-codec', `CompressionType ${type} is not one Kafka defines (0-4)`);
  }
}

function gunzip(blob: Uint8Array, limit: number): Uint8Array {
  if (blob.length < 2 || blob[0] !== 0x1f || blob[1] !== 0x8b) throw new PayloadError('invalid', `not a gzip stream (starts with ${hex(blob)})`);
  try {
    // zlib stops once its output would pass maxOutputLength.
    return gunzipSync(blob, { maxOutputLength: limit });
  } catch (e) {
    if (e instanceof RangeError) throw tooLarge('gzip output', limit);
    throw new PayloadError('invalid', `gzip: ${(e as Error).message}`);
  }
}

/** Kafka's snappy framing (snappy-java's SnappyOutputStream): this magic, int32 version, int32 compatible version, then [int32 length, raw block]*. */
const XERIAL_MAGIC = [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00];
const XERIAL_HEADER = 16;

function isXerial(blob: Uint8Array): boolean {
  if (blob.length < XERIAL_HEADER) return false;
  for (let i = 0; i < XERIAL_MAGIC.length; i++) if (blob[i] !== XERIAL_MAGIC[i]) return false;
  return true;
}

function unsnappy(blob: Uint8Array, limit: number): Uint8Array {
  if (!isXerial(blob)) return snappyBlock(blob, limit);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const blocks: Uint8Array[] = [];
  let total = 0;
  for (let at = XERIAL_HEADER; at < blob.length; ) {
    if (at + 4 > blob.length) throw new PayloadError('invalid', `snappy (xerial): block length cut at byte ${at}`);
    const n = view.getInt32(at);
    at += 4;
    if (n < 0 || at + n > blob.length) throw new PayloadError('invalid', `snappy (xerial): block of ${n} bytes at byte ${at - 4} passes the end (${blob.length})`);
    const block = snappyBlock(blob.subarray(at, at + n), limit - total);
    blocks.push(block);
    total += block.length;
    at += n;
  }
  return concat(blocks, total);
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function hex(b: Uint8Array): string {
  return Array.from(b.subarray(0, 4), (x) => x.toString(16).padStart(2, '0')).join(' ');
}
