/**
 * TLS secrets: HKDF-Expand-Label (RFC 8446 §7.1), the TLS 1.2 PRF (RFC 5246 §5), both built from
 * node:crypto's HMAC, and the key material of each cipher suite kcid decrypts.
 */
import { createHmac } from 'node:crypto';

export type HashName = 'sha1' | 'sha256' | 'sha384';

export const HASH_BYTES: Record<HashName, number> = { sha1: 20, sha256: 32, sha384: 48 };

/** RFC 5869 §2.3 HKDF-Expand. */
export function hkdfExpand(hash: HashName, prk: Buffer, info: Buffer, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let previous = Buffer.alloc(0);
  for (let done = 0, i = 1; done < length; i++) {
    previous = createHmac(hash, prk).update(previous).update(info).update(Buffer.of(i)).digest();
    done += previous.copy(out, done);
  }
  return out;
}

/** RFC 8446 §7.1: HKDF-Expand(Secret, HkdfLabel, Length), the label prefixed "tls13 ". */
export function hkdfExpandLabel(hash: HashName, secret: Buffer, label: string, context: Buffer, length: number): Buffer {
  const full = Buffer.from(`tls13 ${label}`, 'latin1');
  const info = Buffer.allocUnsafe(2 + 1 + full.length + 1 + context.length);
  info.writeUInt16BE(length, 0);
  info[2] = full.length;
  full.copy(info, 3);
  info[3 + full.length] = context.length;
  context.copy(info, 4 + full.length);
  return hkdfExpand(hash, secret, info, length);
}

/** RFC 5246 §5: PRF(secret, label, seed) = P_hash(secret, label + seed). */
export function prf12(hash: HashName, secret: Buffer, label: string, seed: Buffer, length: number): Buffer {
  const labelSeed = Buffer.concat([Buffer.from(label, 'latin1'), seed]);
  const out = Buffer.allocUnsafe(length);
  let a = labelSeed;
  for (let done = 0; done < length; ) {
    a = createHmac(hash, secret).update(a).digest();
    done += createHmac(hash, secret).update(a).update(labelSeed).digest().copy(out, done);
  }
  return out;
}

export type CipherKind = 'gcm' | 'chacha' | 'cbc';

export interface CipherSuite {
  code: number;
  /** IANA name, as Wireshark and OpenSSL's -stdname print it. */
  name: string;
  /** TLS 1.3 suites name no key exchange. */
  tls13: boolean;
  kind: CipherKind;
  /** node:crypto cipher name. */
  algorithm: string;
  keyBytes: number;
  /** The PRF's (1.2) or HKDF's (1.3) hash. */
  prfHash: HashName;
  /** CBC's record MAC. */
  macHash: HashName | null;
}

function suite(code: number, name: string, kind: CipherKind, keyBytes: number, prfHash: HashName, macHash: HashName | null = null): CipherSuite {
  const algorithm = kind === 'chacha' ? 'chacha20-poly1305' : `aes-${keyBytes * 8}-${kind}`;
  return { code, name, tls13: code >> 8 === 0x13, kind, algorithm, keyBytes, prfHash, macHash };
}

/** The suites kcid decrypts (RFC 8446 B.4; RFC 5288, 5289, 7905, 5246 and 4492 for TLS 1.2). */
export const CIPHER_SUITES: ReadonlyMap<number, CipherSuite> = new Map(
  [
    suite(0x1301, 'TLS_AES_128_GCM_SHA256', 'gcm', 16, 'sha256'),
    suite(0x1302, 'TLS_AES_256_GCM_SHA384', 'gcm', 32, 'sha384'),
    suite(0x1303, 'TLS_CHACHA20_POLY1305_SHA256', 'chacha', 32, 'sha256'),
    suite(0x009c, 'TLS_RSA_WITH_AES_128_GCM_SHA256', 'gcm', 16, 'sha256'),
    suite(0x009d, 'TLS_RSA_WITH_AES_256_GCM_SHA384', 'gcm', 32, 'sha384'),
    suite(0x009e, 'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'gcm', 16, 'sha256'),
    suite(0x009f, 'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'gcm', 32, 'sha384'),
    suite(0xc02b, 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'gcm', 16, 'sha256'),
    suite(0xc02c, 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'gcm', 32, 'sha384'),
    suite(0xc02f, 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'gcm', 16, 'sha256'),
    suite(0xc030, 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'gcm', 32, 'sha384'),
    suite(0xcca8, 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'chacha', 32, 'sha256'),
    suite(0xcca9, 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'chacha', 32, 'sha256'),
    suite(0xccaa, 'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'chacha', 32, 'sha256'),
    suite(0x002f, 'TLS_RSA_WITH_AES_128_CBC_SHA', 'cbc', 16, 'sha256', 'sha1'),
    suite(0x0035, 'TLS_RSA_WITH_AES_256_CBC_SHA', 'cbc', 32, 'sha256', 'sha1'),
    suite(0x003c, 'TLS_RSA_WITH_AES_128_CBC_SHA256', 'cbc', 16, 'sha256', 'sha256'),
    suite(0x003d, 'TLS_RSA_WITH_AES_256_CBC_SHA256', 'cbc', 32, 'sha256', 'sha256'),
    suite(0x0033, 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'cbc', 16, 'sha256', 'sha1'),
    suite(0x0039, 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'cbc', 32, 'sha256', 'sha1'),
    suite(0x0067, 'TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'cbc', 16, 'sha256', 'sha256'),
    suite(0x006b, 'TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'cbc', 32, 'sha256', 'sha256'),
    suite(0xc009, 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'cbc', 16, 'sha256', 'sha1'),
    suite(0xc00a, 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'cbc', 32, 'sha256', 'sha1'),
    suite(0xc013, 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'cbc', 16, 'sha256', 'sha1'),
    suite(0xc014, 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'cbc', 32, 'sha256', 'sha1'),
    suite(0xc023, 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'cbc', 16, 'sha256', 'sha256'),
    suite(0xc024, 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'cbc', 32, 'sha384', 'sha384'),
    suite(0xc027, 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'cbc', 16, 'sha256', 'sha256'),
    suite(0xc028, 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'cbc', 32, 'sha384', 'sha384'),
  ].map((s) => [s.code, s]),
);

export function cipherSuiteName(code: number): string {
  return CIPHER_SUITES.get(code)?.name ?? `0x${code.toString(16).padStart(4, '0')}`;
}

/** One direction's record protection: key, IV (1.3 and ChaCha: 12 bytes; 1.2 GCM: the 4-byte salt) and MAC key. */
export interface TrafficKeys {
  key: Buffer;
  iv: Buffer;
  macKey: Buffer | null;
}

/** RFC 8446 §7.3: a traffic secret's write key and IV. */
export function tls13Keys(s: CipherSuite, secret: Buffer): TrafficKeys {
  return {
    key: hkdfExpandLabel(s.prfHash, secret, 'key', Buffer.alloc(0), s.keyBytes),
    iv: hkdfExpandLabel(s.prfHash, secret, 'iv', Buffer.alloc(0), 12),
    macKey: null,
  };
}

/** RFC 8446 §7.2: the next generation of a traffic secret (KeyUpdate). */
export function nextTrafficSecret(s: CipherSuite, secret: Buffer): Buffer {
  return hkdfExpandLabel(s.prfHash, secret, 'traffic upd', Buffer.alloc(0), HASH_BYTES[s.prfHash]);
}

/** RFC 5246 §6.3: the key block, split into the client's and the server's keys. */
export function tls12Keys(s: CipherSuite, masterSecret: Buffer, clientRandom: Buffer, serverRandom: Buffer): [TrafficKeys, TrafficKeys] {
  const macBytes = s.macHash === null ? 0 : HASH_BYTES[s.macHash];
  // AEAD: GCM's fixed IV is a 4-byte salt (RFC 5288 §3); ChaCha's is 12 bytes (RFC 7905 §2). CBC
  // in TLS 1.1 and 1.2 carries an explicit IV in each record.
  const ivBytes = s.kind === 'gcm' ? 4 : s.kind === 'chacha' ? 12 : 0;
  const block = prf12(s.prfHash, masterSecret, 'key expansion', Buffer.concat([serverRandom, clientRandom]), 2 * (macBytes + s.keyBytes + ivBytes));
  let at = 0;
  const take = (n: number): Buffer => block.subarray(at, (at += n));
  const clientMac = take(macBytes);
  const serverMac = take(macBytes);
  const clientKey = take(s.keyBytes);
  const serverKey = take(s.keyBytes);
  const clientIv = take(ivBytes);
  const serverIv = take(ivBytes);
  return [
    { key: clientKey, iv: clientIv, macKey: macBytes === 0 ? null : clientMac },
    { key: serverKey, iv: serverIv, macKey: macBytes === 0 ? null : serverMac },
  ];
}
