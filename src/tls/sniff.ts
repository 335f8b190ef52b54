/** TLS on a Kafka port: a connection whose client starts with a TLS handshake record is read as TLS. */

/** A TLS record header: content type 22 (handshake), version 3.x (RFC 8446 §5.1). */
export function looksLikeTls(buf: Buffer, off: number, len: number): boolean {
  return len >= 3 && buf[off] === 0x16 && buf[off + 1] === 0x03 && buf[off + 2]! <= 0x04;
}
