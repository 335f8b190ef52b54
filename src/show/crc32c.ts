/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Kafka's record batches
 * (magic 2: DefaultRecordBatch computes it with java.util.zip.CRC32C over the bytes from the attributes
 * to the batch's end). Node 20's zlib has no crc32c, so it is computed here, a table of 256 words.
 * Check value (RFC 3720 B.4): "123456789" -> 0xE3069283.
 */
const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
