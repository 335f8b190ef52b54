/**
 * TLS records for tests, written from RFC 8446 and RFC 5246: handshake messages kcid reads in the
 * clear (ClientHello, ServerHello), and a TLS 1.3 sender that protects records with a traffic secret
 * of the test's choosing (so KeyUpdate, damaged records and alerts can be made at will). The real
 * OpenSSL traffic of test/tls/record.ts checks the same code against another implementation.
 */
import { createCipheriv, createHmac, type CipherGCM } from 'node:crypto';

/**
 * HKDF-Expand-Label (RFC 8446 §7.1) over RFC 5869 §2.3's HKDF-Expand, written here from the RFCs
 * with node:crypto's HMAC so that the test keys do not come from the code under test
 * (src/tls/keys.ts). Checked against RFC 8448 §3's vectors in test/tls-stages.test.ts.
 */
export function hkdfExpandLabel(hash: 'sha256' | 'sha384', secret: Buffer, label: string, context: Buffer, length: number): Buffer {
  const full = Buffer.from(`tls13 ${label}`, 'latin1');
  const info = Buffer.concat([u16(length), u8(full.length), full, u8(context.length), context]);
  const blocks: Buffer[] = [];
  let t = Buffer.alloc(0);
  for (let i = 1; Buffer.concat(blocks).length < length; i++) {
    t = createHmac(hash, secret).update(Buffer.concat([t, info, u8(i)])).digest();
    blocks.push(t);
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** RFC 5246 §5: PRF(secret, label, seed) = P_SHA256(secret, label + seed), from node:crypto's HMAC. */
export function prf12(secret: Buffer, label: string, seed: Buffer, length: number): Buffer {
  const labelSeed = Buffer.concat([Buffer.from(label, 'latin1'), seed]);
  const out: Buffer[] = [];
  let a = labelSeed;
  while (Buffer.concat(out).length < length) {
    a = createHmac('sha256', secret).update(a).digest();
    out.push(createHmac('sha256', secret).update(Buffer.concat([a, labelSeed])).digest());
  }
  return Buffer.concat(out).subarray(0, length);
}

export function u8(n: number): Buffer {
  return Buffer.of(n);
}
export function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}
export function u24(n: number): Buffer {
  const b = Buffer.alloc(3);
  b.writeUIntBE(n, 0, 3);
  return b;
}
/** A vector with a length prefix of `width` bytes (RFC 8446 §3.4). */
export function vec(width: 1 | 2 | 3, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([width === 1 ? u8(body.length) : width === 2 ? u16(body.length) : u24(body.length), body]);
}
export function extension(type: number, body: Buffer): Buffer {
  return Buffer.concat([u16(type), vec(2, body)]);
}
/** Handshake message: msg_type, uint24 length, body (RFC 8446 §4). */
export function handshake(type: number, body: Buffer): Buffer {
  return Buffer.concat([u8(type), u24(body.length), body]);
}
/** A record in the clear: content type, legacy version 0x0303, uint16 length (RFC 8446 §5.1). */
export function record(type: number, body: Buffer, version = 0x0303): Buffer {
  return Buffer.concat([u8(type), u16(version), u16(body.length), body]);
}

export const CONTENT = { CHANGE_CIPHER_SPEC: 20, ALERT: 21, HANDSHAKE: 22, APPLICATION_DATA: 23 } as const;

export function clientHello(o: { random: Buffer; sni?: string; alpn?: string[]; versions?: number[]; earlyData?: boolean }): Buffer {
  const exts: Buffer[] = [];
  // early_data (RFC 8446 §4.2.10): empty in a ClientHello; a client sends it with a PSK to send 0-RTT data.
  if (o.earlyData === true) exts.push(extension(42, Buffer.alloc(0)));
  if (o.sni !== undefined) exts.push(extension(0, vec(2, u8(0), vec(2, Buffer.from(o.sni)))));
  if (o.alpn !== undefined) exts.push(extension(16, vec(2, ...o.alpn.map((p) => vec(1, Buffer.from(p))))));
  exts.push(extension(43, vec(1, ...(o.versions ?? [0x0304, 0x0303]).map(u16))));
  return handshake(
    1,
    Buffer.concat([u16(0x0303), o.random, vec(1), vec(2, u16(0x1301), u16(0x1302), u16(0x1303), u16(0xc02f)), vec(1, u8(0)), vec(2, ...exts)]),
  );
}

export function serverHello(o: { random: Buffer; cipher: number; version: number; psk?: boolean; alpn?: string }): Buffer {
  const exts: Buffer[] = [];
  if (o.version === 0x0304) exts.push(extension(43, u16(0x0304)));
  if (o.psk === true) exts.push(extension(41, u16(0)));
  if (o.alpn !== undefined) exts.push(extension(16, vec(2, vec(1, Buffer.from(o.alpn)))));
  return handshake(2, Buffer.concat([u16(0x0303), o.random, vec(1), u16(o.cipher), u8(0), vec(2, ...exts)]));
}

/** HKDF-Expand-Label with SHA-256 and an empty context: every key the hand-built TLS 1.3 sessions here derive. */
export function expandLabel(secret: Buffer, label: string, length: number): Buffer {
  return hkdfExpandLabel('sha256', secret, label, Buffer.alloc(0), length);
}

/** A TLS 1.3 sender with TLS_AES_128_GCM_SHA256 (RFC 8446 §5.2-5.3, §7.3). */
export class Tls13Sender {
  private key!: Buffer;
  private iv!: Buffer;
  private seq = 0;
  constructor(private secret: Buffer) {
    this.keys();
  }
  private keys(): void {
    this.key = expandLabel(this.secret, 'key', 16);
    this.iv = expandLabel(this.secret, 'iv', 12);
    this.seq = 0;
  }
  /** A protected record: TLSInnerPlaintext (content, type, `padding` zeros) sealed with the next sequence number. */
  seal(type: number, content: Buffer, padding = 0): Buffer {
    const inner = Buffer.concat([content, u8(type), Buffer.alloc(padding)]);
    const nonce = Buffer.from(this.iv);
    nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ this.seq++) >>> 0, 8);
    const header = Buffer.concat([u8(CONTENT.APPLICATION_DATA), u16(0x0303), u16(inner.length + 16)]);
    const c = createCipheriv('aes-128-gcm', this.key, nonce) as CipherGCM;
    c.setAAD(header);
    const body = Buffer.concat([c.update(inner), c.final(), c.getAuthTag()]);
    return Buffer.concat([header, body]);
  }
  /** Sends KeyUpdate under the current keys, then moves to the next traffic secret (RFC 8446 §4.6.3, §7.2). */
  keyUpdate(): Buffer {
    const r = this.seal(CONTENT.HANDSHAKE, handshake(24, u8(0)));
    this.secret = expandLabel(this.secret, 'traffic upd', 32);
    this.keys();
    return r;
  }
}

/**
 * A whole TLS 1.3 session of made-up secrets: ClientHello and ServerHello in the clear, both
 * Finished messages under the handshake secrets, then application data under the traffic secrets.
 * `keylog` is the NSS key log a client would have written for it.
 */
export class Tls13Session {
  readonly clientRandom = Buffer.alloc(32, 0xc1);
  readonly serverRandom = Buffer.alloc(32, 0x5e);
  readonly secrets = {
    CLIENT_HANDSHAKE_TRAFFIC_SECRET: Buffer.alloc(32, 0x11),
    SERVER_HANDSHAKE_TRAFFIC_SECRET: Buffer.alloc(32, 0x22),
    CLIENT_TRAFFIC_SECRET_0: Buffer.alloc(32, 0x33),
    SERVER_TRAFFIC_SECRET_0: Buffer.alloc(32, 0x44),
  };
  readonly client = new Tls13Sender(this.secrets.CLIENT_TRAFFIC_SECRET_0);
  readonly server = new Tls13Sender(this.secrets.SERVER_TRAFFIC_SECRET_0);

  constructor(readonly o: { sni?: string; alpn?: string[]; psk?: boolean; earlyData?: boolean } = {}) {
    this.clientRandom.writeUInt32BE(0x01234567, 0);
    this.clientRandom.writeUInt32BE(0x89abcdef, 4);
  }

  get keylog(): string {
    const r = this.clientRandom.toString('hex');
    return Object.entries(this.secrets)
      .map(([label, secret]) => `${label} ${r} ${secret.toString('hex')}\n`)
      .join('');
  }

  /** The client's first flight: ClientHello. */
  clientFirst(): Buffer {
    return record(
      CONTENT.HANDSHAKE,
      clientHello({ random: this.clientRandom, sni: this.o.sni ?? 'broker1.kafka.test', alpn: this.o.alpn ?? ['kafka'], earlyData: this.o.earlyData === true }),
      0x0301,
    );
  }

  /** The server's flight: ServerHello, a compatibility ChangeCipherSpec, Finished under the handshake secret. */
  serverFlight(): Buffer {
    const hs = new Tls13Sender(this.secrets.SERVER_HANDSHAKE_TRAFFIC_SECRET);
    return Buffer.concat([
      record(CONTENT.HANDSHAKE, serverHello({ random: this.serverRandom, cipher: 0x1301, version: 0x0304, psk: this.o.psk === true, alpn: 'kafka' })),
      record(CONTENT.CHANGE_CIPHER_SPEC, u8(1)),
      hs.seal(CONTENT.HANDSHAKE, handshake(20, Buffer.alloc(32, 0xf5))),
    ]);
  }

  /** The client's Finished under its handshake secret. */
  clientFinished(): Buffer {
    const hs = new Tls13Sender(this.secrets.CLIENT_HANDSHAKE_TRAFFIC_SECRET);
    return Buffer.concat([record(CONTENT.CHANGE_CIPHER_SPEC, u8(1)), hs.seal(CONTENT.HANDSHAKE, handshake(20, Buffer.alloc(32, 0xf6)))]);
  }
}
