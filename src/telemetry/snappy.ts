/**
 * A bounded decoder of a raw snappy block (format_description.txt of google/snappy): a varint of
 * the uncompressed length, then literals and copies. Why not snappyjs, used before: it runs a
 * block to the end of its input whatever it declared, writing past its buffer (writes a typed
 * array drops, each slow in V8): fuzzing found 20-byte changes of a real frame costing 2-20 s.
 * Here a block may produce only what it declares (at most the limit), every copy is checked
 * against that and against what was produced before it is made, and output grows with what was
 * produced: the work is linear in input plus output.
 */
import { Output, PayloadError } from './payload-error.js';

const bad = (why: string) => new PayloadError('invalid', `snappy: ${why}`);

/** One raw block's content, at most `limit` bytes; throws PayloadError. */
export function snappyBlock(src: Uint8Array, limit: number): Uint8Array {
  let at = 0;
  let declared = 0;
  for (let shift = 0; ; shift += 7) {
    if (at >= src.length) throw bad('uncompressed length cut');
    if (shift > 28) throw bad('uncompressed length longer than 32 bits');
    const b = src[at++]!;
    declared += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  if (declared > 0xffffffff) throw bad('uncompressed length longer than 32 bits');
  const out = new Output(limit, 'snappy output', declared);
  if (declared > limit) out.room(declared); // throws too-large
  while (at < src.length) {
    const tag = src[at++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let len = (tag >> 2) + 1;
      if (len > 60) {
        const extra = len - 60;
        if (at + extra > src.length) throw bad('literal length cut');
        len = 0;
        for (let i = 0; i < extra; i++) len += src[at + i]! * 2 ** (8 * i);
        len += 1;
        at += extra;
      }
      if (at + len > src.length) throw bad('literal passes the end of the block');
      if (out.n + len > declared) throw bad(`the block produces more than the ${declared} bytes it declares`);
      out.room(len);
      out.buf.set(src.subarray(at, at + len), out.n);
      out.n += len;
      at += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (kind === 1) {
      if (at >= src.length) throw bad('copy cut');
      len = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | src[at++]!;
    } else if (kind === 2) {
      if (at + 2 > src.length) throw bad('copy cut');
      len = (tag >> 2) + 1;
      offset = src[at]! | (src[at + 1]! << 8);
      at += 2;
    } else {
      if (at + 4 > src.length) throw bad('copy cut');
      len = (tag >> 2) + 1;
      offset = (src[at]! | (src[at + 1]! << 8) | (src[at + 2]! << 16) | (src[at + 3]! << 24)) >>> 0;
      at += 4;
    }
    if (offset === 0 || offset > out.n) throw bad(`copy offset ${offset} reaches before the block's start`);
    if (out.n + len > declared) throw bad(`the block produces more than the ${declared} bytes it declares`);
    out.room(len);
    out.match(offset, len);
  }
  if (out.n !== declared) throw bad(`the block declares ${declared} bytes and holds ${out.n}`);
  return out.bytes();
}
