/**
 * Hostile compressed frames built byte by byte (every byte explained), for the work-budget tests
 * and the fuzz seeds: what an attacker on the captured network can put in a PushTelemetry.
 */

/**
 * A zstd frame (RFC 8878) of a 128 KiB window: an 8-byte raw block, then `blocks` compressed blocks
 * of `sequences` sequences each, whose three sequence tables are RLE (mode 1): literal length code
 * 0 (no literals), offset code 0 (offset value 1: repeat offset 1, which starts as 4), match length
 * code `matchCode`. Code 31 (34 bytes) reads no bits, so each block is a few bytes whatever its
 * count; code 52 (65,539 + 16 bits) needs 16 bits a sequence, and the bit stream here has none:
 * a decoder that reads past the stream's start gets zeros, 65,539-byte matches. Either way a block
 * asks for far more than the 128 KiB it may produce.
 */
export function zstdSequenceBomb(blocks: number, sequences: number, matchCode = 31): Uint8Array {
  if (sequences < 128 || sequences > 0x7f00 + 0xffff) throw new Error('sequences: 128 to 98,047');
  const out: number[] = [0x28, 0xb5, 0x2f, 0xfd];
  // Frame header: FHD 0 (no content size, no checksum, not single-segment), window descriptor 0x38 (2^17 bytes).
  out.push(0x00, 0x38);
  // Raw block (type 0) of 8 bytes, not last: header (8 << 3) | (0 << 1) | 0.
  out.push(8 << 3, 0, 0, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68);
  // Number of sequences: 2 bytes ((n >> 8) + 128, n & 0xff) below 0x7F00, else 255 and n - 0x7F00 little-endian.
  const count = sequences < 0x7f00 ? [(sequences >> 8) + 128, sequences & 0xff] : [0xff, (sequences - 0x7f00) & 0xff, (sequences - 0x7f00) >> 8];
  const body = [
    0x00, // literals section: raw (type 0), size format 0, 0 literals
    ...count,
    0x54, // compression modes: literal lengths RLE, offsets RLE, match lengths RLE, reserved 0
    0x00, // literal length code 0
    0x00, // offset code 0: offset value 1, a repeat offset
    matchCode,
    0x01, // the sequence bit stream: only its end marker
  ];
  for (let b = 0; b < blocks; b++) {
    const header = (body.length << 3) | (2 << 1) | (b === blocks - 1 ? 1 : 0);
    out.push(header & 0xff, (header >> 8) & 0xff, header >> 16, ...body);
  }
  return Uint8Array.from(out);
}

/** An LZ4 frame (lz4_Frame_format.md) declaring a content size whose top bit is set: 2^63 + 1 bytes, then one empty end mark. */
export function lz4HugeContentSize(): Uint8Array {
  return Uint8Array.from([
    0x04, 0x22, 0x4d, 0x18, // magic 0x184D2204
    0x68, // FLG: version 01, blocks independent, content size present
    0x40, // BD: block maximum 64 KiB
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, // content size 0x8000000000000001, little-endian
    0x00, // header checksum (not verified)
    0x00, 0x00, 0x00, 0x00, // end mark
  ]);
}
