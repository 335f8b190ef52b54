/**
 * A bounded decoder of the LZ4 frame format (lz4_Frame_format.md, v1.6.x) and its block format
 * (lz4_Block_format.md), for PushTelemetry's Metrics.
 *
 * Why not lz4js: its decompressBound reads the 64-bit content size as a signed number (a top bit
 * set gives -2147483647, and a RangeError from `new Uint8Array`), and its block loop runs to the
 * block's declared size whatever the data holds (a block declaring 2 GiB of 10 real bytes spins
 * for two billion steps). Here every step consumes input or produces output, and output stops at
 * the limit, so the work is linear in input plus output, and the output buffer grows with what
 * was produced, never from a size the frame declares.
 */
import { Output, pastSkippable, PayloadError, tooLarge } from './payload-error.js';

const MAGIC = 0x184d2204;
const BLOCK_MAX = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

const bad = (why: string) => new PayloadError('invalid', `lz4: ${why}`);

/** The frames' content, at most `limit` bytes; throws PayloadError. */
export function unlz4(blob: Uint8Array, limit: number): Uint8Array {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  if (blob.length < 7 || view.getUint32(0, true) !== MAGIC) {
    throw new PayloadError('invalid', `not an LZ4 frame (starts with ${hex(blob)})`);
  }
  const out = new Output(limit, 'lz4 output');
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length) throw bad(`frame header cut at byte ${at}`);
    const magic = view.getUint32(at, true);
    const skipped = pastSkippable(view, at, bad);
    if (skipped >= 0) {
      at = skipped;
      continue;
    }
    if (magic !== MAGIC) throw bad(`bytes after a frame at byte ${at} are not a frame`);
    at = frame(blob, view, at + 4, out);
  }
  return out.bytes();
}

function frame(blob: Uint8Array, view: DataView, at: number, out: Output): number {
  if (at + 3 > blob.length) throw bad('frame header cut');
  const flg = blob[at]!;
  const bd = blob[at + 1]!;
  at += 2;
  if (flg >> 6 !== 1) throw bad(`frame version ${flg >> 6} (only 1 is defined)`);
  if (flg & 0x02 || bd & 0x8f) throw bad('reserved bit set in the frame descriptor');
  const blockMax = BLOCK_MAX[(bd >> 4) & 7]!;
  if (blockMax === 0) throw bad(`block maximum size ${(bd >> 4) & 7} (4-7 are defined)`);
  const blockChecksum = (flg & 0x10) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  let contentSize = -1;
  if (flg & 0x08) {
    if (at + 8 > blob.length) throw bad('frame header cut');
    // Unsigned 64-bit, read as two halves: a top bit set is a large number, never a negative one.
    const low = view.getUint32(at, true);
    const high = view.getUint32(at + 4, true);
    contentSize = low + high * 2 ** 32;
    at += 8;
    if (contentSize > out.limit - out.n) throw tooLarge(`an LZ4 frame declaring ${(BigInt(high) << 32n) | BigInt(low)} bytes`, out.limit);
  }
  if (flg & 0x01) at += 4; // dictionary ID: kcid has no dictionary, and a block that needs one fails its offsets
  at += 1; // header checksum
  if (at > blob.length) throw bad('frame header cut');
  const start = out.n;
  for (;;) {
    if (at + 4 > blob.length) throw bad(`block size cut at byte ${at}`);
    const word = view.getUint32(at, true);
    at += 4;
    if (word === 0) break;
    const size = word & 0x7fffffff;
    if (size > blockMax) throw bad(`a block of ${size} bytes is larger than the frame's maximum (${blockMax})`);
    if (at + size > blob.length) throw bad(`block of ${size} bytes at byte ${at - 4} passes the end of the data (${blob.length} bytes)`);
    if (word & 0x80000000) {
      out.room(size);
      out.buf.set(blob.subarray(at, at + size), out.n);
      out.n += size;
    } else {
      block(blob, at, at + size, out, blockMax, start);
    }
    at += size + (blockChecksum ? 4 : 0);
  }
  if (contentChecksum) at += 4;
  if (at > blob.length) throw bad('checksum cut');
  if (contentSize >= 0 && out.n - start !== contentSize) throw bad(`the frame declares ${contentSize} bytes and holds ${out.n - start}`);
  return at;
}

/** One compressed block of blob[at, end) appended to out; matches may reach back to the frame's start. */
function block(src: Uint8Array, at: number, end: number, out: Output, blockMax: number, frameStart: number): void {
  const blockEnd = out.n + blockMax;
  for (;;) {
    if (at >= end) throw bad('block cut inside a sequence');
    const token = src[at++]!;
    let lit = token >> 4;
    if (lit === 15) {
      for (let b = 255; b === 255; ) {
        if (at >= end) throw bad('literal length cut');
        b = src[at++]!;
        lit += b;
      }
    }
    if (at + lit > end) throw bad('literals pass the end of the block');
    if (out.n + lit > blockEnd) throw bad(`a block decompresses past the frame's block size (${blockMax})`);
    out.room(lit);
    out.buf.set(src.subarray(at, at + lit), out.n);
    out.n += lit;
    at += lit;
    if (at === end) return; // the last sequence has literals only
    if (at + 2 > end) throw bad('match offset cut');
    const offset = src[at]! | (src[at + 1]! << 8);
    at += 2;
    if (offset === 0 || offset > out.n - frameStart) throw bad(`match offset ${offset} reaches before the frame's start`);
    let len = token & 15;
    if (len === 15) {
      for (let b = 255; b === 255; ) {
        if (at >= end) throw bad('match length cut');
        b = src[at++]!;
        len += b;
      }
    }
    len += 4;
    if (out.n + len > blockEnd) throw bad(`a block decompresses past the frame's block size (${blockMax})`);
    out.room(len);
    out.match(offset, len);
  }
}

function hex(b: Uint8Array): string {
  return Array.from(b.subarray(0, 4), (x) => x.toString(16).padStart(2, '0')).join(' ');
}
