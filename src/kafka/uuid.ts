/**
 * Kafka UUIDs (org.apache.kafka.common.Uuid): 16 bytes on the wire, most significant long first.
 * Kafka prints them with Uuid.toString(), i.e. Base64.getUrlEncoder().withoutPadding() of those
 * 16 bytes: 22 characters of the URL-safe alphabet ('-' and '_' instead of '+' and '/').
 */

/** The all-zero UUID (Kafka Uuid.ZERO_UUID, "AAAAAAAAAAAAAAAAAAAAAA"). Never mutate it. */
export const ZERO_UUID: Uint8Array = new Uint8Array(16);

const URL_SAFE = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1');
const chars = new Array<number>(22);

/**
 * Kafka's own text form: 22 characters of unpadded URL-safe base64. Encoded here rather than by
 * Buffer#toString: wrapping a small Uint8Array in a Buffer gives it an ArrayBuffer of its own
 * (about 0.5 KB with its bookkeeping), which every live connection's ID would then keep. One
 * fromCharCode call makes a flat string (concatenation would keep a tree of pieces).
 */
export function uuidToBase64(u: Uint8Array): string {
  let c = 0;
  for (let i = 0; i < 15; i += 3) {
    const n = (u[i]! << 16) | (u[i + 1]! << 8) | u[i + 2]!;
    chars[c++] = URL_SAFE[n >>> 18]!;
    chars[c++] = URL_SAFE[(n >>> 12) & 63]!;
    chars[c++] = URL_SAFE[(n >>> 6) & 63]!;
    chars[c++] = URL_SAFE[n & 63]!;
  }
  const last = u[15]!;
  chars[20] = URL_SAFE[last >>> 2]!;
  chars[21] = URL_SAFE[(last & 3) << 4]!;
  return String.fromCharCode.apply(null, chars);
}

/** RFC 4122 text form: lowercase hex, dashed 8-4-4-4-12. */
export function uuidToHex(u: Uint8Array): string {
  const h = Buffer.from(u).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// 16 bytes are 128 bits = 21 six-bit characters + 2 bits, so the 22nd character carries 2 bits and 4 zero
// bits: only A, Q, g and w can end a canonical encoding. Other endings are rejected so that every UUID has
// exactly one base64 spelling (a typo does not silently select another ID).
const BASE64_URL = /^[A-Za-z0-9_-]{21}[AQgw]$/;
const BASE64_STD = /^[A-Za-z0-9+/]{21}[AQgw]$/;
const HEX_32 = /^[0-9a-fA-F]{32}$/;
const HEX_DASHED = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Parses a UUID typed by a user: Kafka's base64url form (22 characters, also with '==' padding), standard
 * base64 with or without padding, 32 hex digits, or dashed hex. Returns null for anything else.
 */
export function parseUuid(text: string): Uint8Array | null {
  const s = text.trim();
  if (HEX_DASHED.test(s)) return new Uint8Array(Buffer.from(s.replace(/-/g, ''), 'hex'));
  if (HEX_32.test(s)) return new Uint8Array(Buffer.from(s, 'hex'));
  const b64 = s.length === 24 && s.endsWith('==') ? s.slice(0, 22) : s;
  if (BASE64_URL.test(b64) || BASE64_STD.test(b64)) return new Uint8Array(Buffer.from(b64, 'base64'));
  return null;
}

export function isZeroUuid(u: Uint8Array): boolean {
  for (let i = 0; i < u.length; i++) if (u[i] !== 0) return false;
  return true;
}

export function uuidEquals(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
