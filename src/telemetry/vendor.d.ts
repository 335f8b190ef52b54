/** Declarations for the pure-JavaScript decompressors, which ship none: only what kcid calls. */
declare module 'snappyjs' {
  /** Decompresses a raw snappy block; throws when its declared length exceeds maxLength. */
  export function uncompress(compressed: Uint8Array, maxLength?: number): Uint8Array;
  export function compress(uncompressed: Uint8Array): Uint8Array;
  const snappy: { uncompress: typeof uncompress; compress: typeof compress };
  export default snappy;
}

declare module 'lz4js' {
  /** Upper bound of an LZ4 frame's decompressed size: its content size, or its blocks times the block size. */
  export function decompressBound(src: Uint8Array): number;
  /** Decompresses an LZ4 frame into dst; returns the bytes produced (writes past dst's end are lost). */
  export function decompressFrame(src: Uint8Array, dst: Uint8Array): number;
  export function compress(src: Uint8Array, maxSize?: number): Uint8Array;
  export function decompress(src: Uint8Array, maxSize?: number): Uint8Array;
  const lz4: { decompressBound: typeof decompressBound; decompressFrame: typeof decompressFrame; compress: typeof compress; decompress: typeof decompress };
  export default lz4;
}
