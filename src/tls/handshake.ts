/**
 * The handshake messages kcid reads (RFC 8446 §4, RFC 5246 §7.4): ClientHello, ServerHello (and
 * HelloRetryRequest), Certificate. Every length is checked against its enclosing vector; a message
 * that does not parse throws TlsDecodeError.
 */
import { X509Certificate } from 'node:crypto';
import { versionName } from './types.js';

export class TlsDecodeError extends Error {}

class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}
  private need(n: number): void {
    if (this.pos + n > this.end) throw new TlsDecodeError('message cut short');
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  u24(): number {
    this.need(3);
    const v = this.buf.readUIntBE(this.pos, 3);
    this.pos += 3;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  /** A vector with a length prefix of `width` bytes, as a reader over its content. */
  vector(width: 1 | 2 | 3): Reader {
    const n = width === 1 ? this.u8() : width === 2 ? this.u16() : this.u24();
    this.need(n);
    const r = new Reader(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }
  get left(): number {
    return this.end - this.pos;
  }
}

const EXT_SERVER_NAME = 0;
const EXT_ALPN = 16;
const EXT_ENCRYPT_THEN_MAC = 22;
const EXT_PRE_SHARED_KEY = 41;
const EXT_EARLY_DATA = 42;
const EXT_SUPPORTED_VERSIONS = 43;

/** RFC 8446 §4.1.3: a ServerHello with this random is a HelloRetryRequest. */
const HRR_RANDOM = Buffer.from('cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c', 'hex');

/** GREASE values (RFC 8701) are offered to keep servers honest and mean nothing. */
const isGrease = (v: number): boolean => (v & 0x0f0f) === 0x0a0a && v >> 8 === (v & 0xff);

export interface ClientHello {
  random: Buffer;
  sessionId: Buffer;
  /** The highest version offered. */
  offered: string;
  sni: string | null;
  alpn: string[];
  /** TLS 1.3: the client offers 0-RTT early data (the early_data extension, RFC 8446 §4.2.10). */
  earlyData: boolean;
}

export function parseClientHello(buf: Buffer, off: number, end: number): ClientHello {
  const r = new Reader(buf, off, end);
  const legacy = r.u16();
  const random = Buffer.from(r.bytes(32));
  const sessionId = Buffer.from(r.vector(1).bytes(0));
  r.vector(2); // cipher_suites
  r.vector(1); // legacy_compression_methods
  let offered = legacy;
  let sni: string | null = null;
  const alpn: string[] = [];
  let earlyData = false;
  if (r.left > 0) {
    const exts = r.vector(2);
    while (exts.left > 0) {
      const type = exts.u16();
      const e = exts.vector(2);
      if (type === EXT_SERVER_NAME) {
        const list = e.vector(2);
        while (list.left > 0) {
          const nameType = list.u8();
          const name = list.vector(2);
          if (nameType === 0 && sni === null) sni = name.bytes(name.left).toString('latin1');
        }
      } else if (type === EXT_ALPN) {
        const list = e.vector(2);
        while (list.left > 0 && alpn.length < 16) {
          const p = list.vector(1);
          alpn.push(p.bytes(p.left).toString('latin1'));
        }
      } else if (type === EXT_SUPPORTED_VERSIONS) {
        const list = e.vector(1);
        while (list.left >= 2) {
          const v = list.u16();
          if (!isGrease(v) && v > offered && v <= 0x0304) offered = v;
        }
      } else if (type === EXT_EARLY_DATA) {
        earlyData = true;
      }
    }
  }
  return { random, sessionId, offered: versionName(offered), sni, alpn, earlyData };
}

export interface ServerHello {
  random: Buffer;
  helloRetry: boolean;
  sessionId: Buffer;
  /** The negotiated version number (supported_versions, else legacy_version). */
  version: number;
  cipher: number;
  alpn: string | null;
  /** TLS 1.3: the server accepted a pre-shared key. */
  psk: boolean;
  encryptThenMac: boolean;
}

export function parseServerHello(buf: Buffer, off: number, end: number): ServerHello {
  const r = new Reader(buf, off, end);
  let version = r.u16();
  const random = Buffer.from(r.bytes(32));
  const sessionId = Buffer.from(r.vector(1).bytes(0));
  const cipher = r.u16();
  r.u8(); // compression
  let alpn: string | null = null;
  let psk = false;
  let encryptThenMac = false;
  if (r.left > 0) {
    const exts = r.vector(2);
    while (exts.left > 0) {
      const type = exts.u16();
      const e = exts.vector(2);
      if (type === EXT_SUPPORTED_VERSIONS && e.left >= 2) version = e.u16();
      else if (type === EXT_PRE_SHARED_KEY) psk = true;
      else if (type === EXT_ENCRYPT_THEN_MAC) encryptThenMac = true;
      else if (type === EXT_ALPN) {
        const list = e.vector(2);
        const p = list.vector(1);
        alpn = p.bytes(p.left).toString('latin1');
      }
    }
  }
  return { random, helloRetry: random.equals(HRR_RANDOM), sessionId, version, cipher, alpn, psk, encryptThenMac };
}

export interface CertificateInfo {
  subject: string;
  notBefore: string | null;
  notAfter: string | null;
}

/** The first (leaf) certificate of a Certificate message, TLS 1.2 or (decrypted) 1.3 layout. */
export function parseCertificate(buf: Buffer, off: number, end: number, tls13: boolean): CertificateInfo | null {
  const r = new Reader(buf, off, end);
  if (tls13) r.vector(1); // certificate_request_context
  const list = r.vector(3);
  if (list.left === 0) return null;
  const der = list.vector(3);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(der.bytes(der.left));
  } catch {
    throw new TlsDecodeError('certificate is not valid DER');
  }
  return { subject: cert.subject.split('\n').join(', '), notBefore: isoDate(cert.validFrom), notAfter: isoDate(cert.validTo) };
}

function isoDate(text: string): string | null {
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : new Date(t).toISOString().replace('.000Z', 'Z');
}

const ALERTS = new Map<number, string>([
  [0, 'close_notify'],
  [10, 'unexpected_message'],
  [20, 'bad_record_mac'],
  [22, 'record_overflow'],
  [40, 'handshake_failure'],
  [42, 'bad_certificate'],
  [43, 'unsupported_certificate'],
  [44, 'certificate_revoked'],
  [45, 'certificate_expired'],
  [46, 'certificate_unknown'],
  [47, 'illegal_parameter'],
  [48, 'unknown_ca'],
  [49, 'access_denied'],
  [50, 'decode_error'],
  [51, 'decrypt_error'],
  [70, 'protocol_version'],
  [71, 'insufficient_security'],
  [80, 'internal_error'],
  [86, 'inappropriate_fallback'],
  [90, 'user_canceled'],
  [109, 'missing_extension'],
  [110, 'unsupported_extension'],
  [112, 'unrecognized_name'],
  [113, 'bad_certificate_status_response'],
  [115, 'unknown_psk_identity'],
  [116, 'certificate_required'],
  [120, 'no_application_protocol'],
]);

export function alertName(description: number): string {
  return ALERTS.get(description) ?? `alert ${description}`;
}
