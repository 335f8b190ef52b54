/**
 * PushTelemetry's Metrics blob is compressed with the request's CompressionType, framed as Kafka
 * frames record batches (KIP-714): 0 none, 1 gzip (a gzip stream), 2 snappy (Kafka's xerial
 * framing, or a raw snappy block), 3 lz4 (the LZ4 frame format), 4 zstd (a zstd frame).
 *
 * The blob is untrusted: every codec is bounded by `limit` decompressed bytes before it allocates
 * them, so a compression bomb is refused by what its headers declare (zstd, lz4, raw snappy) or
 * stopped where its output passes the limit (gzip), never decompressed whole.
 *
 * Decoders (README, Telemetry, says why and what was measured): node:zlib for gzip, fzstd for zstd
 * (Node 20's zlib has none), snappyjs, lz4js. All are pure JavaScript or Node's own.
 */
import { gunzipSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import snappy from 'snappyjs';
import lz4 from 'lz4js';

export { COMPRESSION_NAMES, compressionName } from './names.js';

/** Why a blob could not be decompressed: 'too-large' past the limit, 'invalid' bytes the codec refuses, 'unknown-codec'. */
export class PayloadError extends Error {
  override readonly name = 'PayloadError';
  constructor(
    readonly kind: 'too-large' | 'invalid' | 'unknown-codec',
    message: string,
  ) {
    super(message);
  }
}

const tooLarge = (what: string, limit: number) => new PayloadError('too-large', `${what} exceeds --max-telemetry-bytes (${limit} bytes)`);

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

function snappyBlock(block: Uint8Array, limit: number): Uint8Array {
  try {
    // snappyjs reads the block's declared length first and refuses one above maxLength before allocating.
    return snappy.uncompress(block, limit);
  } catch (e) {
    const message = (e as Error).message;
    if (/too big/.test(message)) throw tooLarge('snappy output', limit);
    throw new PayloadError('invalid', `snappy: ${message}`);
  }
}

function unlz4(blob: Uint8Array, limit: number): Uint8Array {
  if (blob.length < 7 || blob[0] !== 0x04 || blob[1] !== 0x22 || blob[2] !== 0x4d || blob[3] !== 0x18) {
    throw new PayloadError('invalid', `not an LZ4 frame (starts with ${hex(blob)})`);
  }
  let bound: number;
  try {
    // The frame's content size, or its blocks times the frame's block size: walked, not decompressed.
    bound = lz4.decompressBound(blob);
  } catch (e) {
    throw new PayloadError('invalid', `lz4: ${(e as Error).message}`);
  }
  if (!(bound <= limit)) throw tooLarge(`an LZ4 frame declaring up to ${bound} bytes`, limit);
  // One byte of room past the bound: a block that emits more than it may is caught, not dropped.
  const out = new Uint8Array(bound + 1);
  let n: number;
  try {
    n = lz4.decompressFrame(blob, out);
  } catch (e) {
    throw new PayloadError('invalid', `lz4: ${(e as Error).message}`);
  }
  if (!Number.isInteger(n) || n < 0 || n > bound) throw new PayloadError('invalid', 'lz4: a block decompresses past its declared size');
  return out.subarray(0, n);
}

/**
 * zstd (RFC 8878). fzstd allocates each frame's window (or its declared content size) before it
 * decodes: every frame header is read first, and the blocks walked, so the window and the most
 * the frames can produce (raw and RLE blocks their size, compressed blocks at most 128 KiB or the
 * window) are known before anything is allocated.
 */
function unzstd(blob: Uint8Array, limit: number): Uint8Array {
  const bound = zstdBound(blob, limit);
  if (bound > limit) throw tooLarge(`zstd frames producing up to ${bound} bytes`, limit);
  try {
    return zstdDecompress(blob);
  } catch (e) {
    throw new PayloadError('invalid', `zstd: ${(e as Error).message}`);
  }
}

const ZSTD_MAGIC = 0xfd2fb528;
const ZSTD_MAX_BLOCK = 128 * 1024;

/** Upper bound of the decompressed size of `blob`'s zstd frames; throws PayloadError for a malformed header or a window above `limit`. */
export function zstdBound(blob: Uint8Array, limit: number): number {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const bad = (why: string) => new PayloadError('invalid', `zstd: ${why}`);
  let at = 0;
  let bound = 0;
  if (blob.length < 4 || view.getUint32(0, true) !== ZSTD_MAGIC) throw bad(`not a zstd frame (starts with ${hex(blob)})`);
  while (at < blob.length) {
    if (at + 4 > blob.length) throw bad(`frame header cut at byte ${at}`);
    const magic = view.getUint32(at, true);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // A skippable frame: magic, int32 size, data.
      if (at + 8 > blob.length) throw bad(`skippable frame cut at byte ${at}`);
      at += 8 + view.getUint32(at + 4, true);
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw bad(`bytes after a frame at byte ${at} are not a frame`);
    at += 4;
    if (at >= blob.length) throw bad('frame header cut');
    const fhd = blob[at++]!;
    const singleSegment = (fhd >> 5) & 1;
    const dictBytes = [0, 1, 2, 4][fhd & 3]!;
    const fcsFlag = fhd >> 6;
    const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
    if (fhd & 8) throw bad('reserved bit set in the frame header');
    let window = 0;
    if (!singleSegment) {
      if (at >= blob.length) throw bad('frame header cut');
      const wd = blob[at++]!;
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    }
    at += dictBytes;
    if (at + fcsBytes > blob.length) throw bad('frame header cut');
    let contentSize = -1;
    if (fcsBytes === 1) contentSize = blob[at]!;
    else if (fcsBytes === 2) contentSize = view.getUint16(at, true) + 256;
    else if (fcsBytes === 4) contentSize = view.getUint32(at, true);
    else if (fcsBytes === 8) contentSize = view.getUint32(at, true) + view.getUint32(at + 4, true) * 2 ** 32;
    at += fcsBytes;
    if (singleSegment) window = contentSize;
    if (window > limit || contentSize > limit) throw tooLarge(`a zstd frame with a ${Math.max(window, contentSize)}-byte window or content`, limit);
    const maxBlock = Math.min(window, ZSTD_MAX_BLOCK);
    let frameBound = 0;
    for (let last = 0; !last; ) {
      if (at + 3 > blob.length) throw bad(`block header cut at byte ${at}`);
      const bh = blob[at]! | (blob[at + 1]! << 8) | (blob[at + 2]! << 16);
      at += 3;
      last = bh & 1;
      const type = (bh >> 1) & 3;
      const size = bh >>> 3;
      if (type === 3) throw bad(`reserved block type at byte ${at - 3}`);
      if (type === 0) {
        frameBound += size;
        at += size;
      } else if (type === 1) {
        frameBound += size;
        at += 1;
      } else {
        frameBound += maxBlock;
        at += size;
      }
      if (at > blob.length) throw bad(`block passes the end of the data (${blob.length} bytes)`);
    }
    if (fhd & 4) at += 4; // content checksum
    bound += contentSize >= 0 ? Math.min(contentSize, frameBound) : frameBound;
  }
  return bound;
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
