/**
 * Record protection, one direction: AEAD (TLS 1.3, RFC 8446 §5.2-5.3; TLS 1.2 GCM, RFC 5288, and
 * ChaCha20-Poly1305, RFC 7905) and TLS 1.2 AES-CBC with HMAC (RFC 5246 §6.2.3.2), MAC-then-encrypt
 * or encrypt-then-MAC (RFC 7366). node:crypto does the ciphers and the HMAC.
 */
import { createDecipheriv, createHmac, timingSafeEqual, type CipherGCM, type DecipherGCM } from 'node:crypto';
import { HASH_BYTES, type CipherSuite, type TrafficKeys } from './keys.js';

const TAG_BYTES = 16;
const GCM_EXPLICIT_NONCE = 8;
const CBC_BLOCK = 16;

/** What a record decrypts to: the content type (1.3: the inner one) and the plaintext. */
export interface Opened {
  type: number;
  data: Buffer;
}

export class RecordCipher {
  /** Records decrypted (or tried) so far: the sequence number of the next one. */
  seq = 0;
  private readonly nonce = Buffer.alloc(12);
  private readonly aad: Buffer;

  constructor(
    readonly suite: CipherSuite,
    readonly keys: TrafficKeys,
    /** TLS 1.2 with encrypt_then_mac negotiated (CBC only). */
    private readonly encryptThenMac = false,
  ) {
    this.aad = Buffer.alloc(suite.tls13 ? 5 : 13);
  }

  /** What a record adds to its plaintext when unpadded: header, (1.3) content type, tag, (1.2 GCM) explicit nonce. */
  recordOverhead(): number {
    const s = this.suite;
    if (s.tls13) return 5 + 1 + TAG_BYTES;
    if (s.kind === 'gcm') return 5 + GCM_EXPLICIT_NONCE + TAG_BYTES;
    return 5 + TAG_BYTES;
  }

  /** Plaintext bytes lost with a record of `length` ciphertext bytes (a guess where padding hides it). */
  plaintextLength(length: number): number {
    const s = this.suite;
    if (s.tls13) return Math.max(0, length - TAG_BYTES - 1);
    if (s.kind === 'gcm') return Math.max(0, length - GCM_EXPLICIT_NONCE - TAG_BYTES);
    if (s.kind === 'chacha') return Math.max(0, length - TAG_BYTES);
    return Math.max(0, length - CBC_BLOCK - HASH_BYTES[s.macHash!] - 1);
  }

  /**
   * The record's plaintext, or null when it fails authentication. `header` is the 5-byte record
   * header, `body` the record's payload. The sequence number advances either way: a record that
   * fails is skipped, and the next one still decrypts.
   */
  open(header: Buffer, headerOff: number, body: Buffer, off: number, len: number): Opened | null {
    const seq = this.seq++;
    try {
      if (this.suite.tls13) return this.open13(header, headerOff, body, off, len, seq);
      if (this.suite.kind === 'cbc') return this.openCbc(header[headerOff]!, body, off, len, seq);
      return this.openAead12(header[headerOff]!, body, off, len, seq);
    } catch {
      return null;
    }
  }

  /**
   * The sequence number, from this one to `window` after it, at which the record authenticates,
   * or -1: how kcid finds its place again after a gap took the record boundaries. `seq` is left as it was.
   */
  findSequence(header: Buffer, headerOff: number, body: Buffer, off: number, len: number, window: number): number {
    const from = this.seq;
    for (let s = from; s < from + window; s++) {
      this.seq = s;
      if (this.open(header, headerOff, body, off, len) !== null) {
        this.seq = from;
        return s;
      }
    }
    this.seq = from;
    return -1;
  }

  /** nonce = iv XOR the 64-bit sequence number, left-padded to the IV's length (RFC 8446 §5.3). */
  private xorNonce(seq: number): Buffer {
    const n = this.nonce;
    this.keys.iv.copy(n, 0, 0, 12);
    const hi = Math.floor(seq / 0x1_0000_0000);
    n.writeUInt32BE((n.readUInt32BE(4) ^ hi) >>> 0, 4);
    n.writeUInt32BE((n.readUInt32BE(8) ^ seq) >>> 0, 8);
    return n;
  }

  private decipher(nonce: Buffer): DecipherGCM {
    return createDecipheriv(this.suite.algorithm as 'aes-128-gcm', this.keys.key, nonce, { authTagLength: TAG_BYTES }) as DecipherGCM;
  }

  private open13(header: Buffer, headerOff: number, body: Buffer, off: number, len: number, seq: number): Opened | null {
    if (len < TAG_BYTES + 1) return null;
    const d = this.decipher(this.xorNonce(seq));
    header.copy(this.aad, 0, headerOff, headerOff + 5);
    d.setAAD(this.aad);
    d.setAuthTag(body.subarray(off + len - TAG_BYTES, off + len));
    const plain = d.update(body.subarray(off, off + len - TAG_BYTES));
    d.final();
    // TLSInnerPlaintext: content, the real content type, then zero padding (RFC 8446 §5.2).
    let end = plain.length;
    while (end > 0 && plain[end - 1] === 0) end--;
    if (end === 0) return null;
    return { type: plain[end - 1]!, data: plain.subarray(0, end - 1) };
  }

  /** RFC 5246 §6.2.3.3: additional_data = seq_num + type + version + length. */
  private aad12(seq: number, type: number, length: number): Buffer {
    const a = this.aad;
    a.writeUInt32BE(Math.floor(seq / 0x1_0000_0000), 0);
    a.writeUInt32BE(seq >>> 0, 4);
    a[8] = type;
    a[9] = 3;
    a[10] = 3;
    a.writeUInt16BE(length, 11);
    return a;
  }

  private openAead12(type: number, body: Buffer, off: number, len: number, seq: number): Opened | null {
    let nonce: Buffer;
    let start = off;
    if (this.suite.kind === 'gcm') {
      if (len < GCM_EXPLICIT_NONCE + TAG_BYTES) return null;
      // GCMNonce = salt (4, from the key block) + nonce_explicit (8, in the record) (RFC 5288 §3).
      nonce = this.nonce;
      this.keys.iv.copy(nonce, 0, 0, 4);
      body.copy(nonce, 4, off, off + GCM_EXPLICIT_NONCE);
      start += GCM_EXPLICIT_NONCE;
    } else {
      if (len < TAG_BYTES) return null;
      nonce = this.xorNonce(seq);
    }
    const end = off + len - TAG_BYTES;
    const d = this.decipher(nonce);
    d.setAAD(this.aad12(seq, type, end - start));
    d.setAuthTag(body.subarray(end, off + len));
    const data = d.update(body.subarray(start, end));
    d.final();
    return { type, data };
  }

  private openCbc(type: number, body: Buffer, off: number, len: number, seq: number): Opened | null {
    const macHash = this.suite.macHash!;
    const macBytes = HASH_BYTES[macHash];
    const macKey = this.keys.macKey!;
    let cipherLen = len;
    if (this.encryptThenMac) {
      // RFC 7366 §3: the MAC covers IV and ciphertext, and is checked before decrypting.
      cipherLen = len - macBytes;
      if (cipherLen < 2 * CBC_BLOCK || cipherLen % CBC_BLOCK !== 0) return null;
      const mac = createHmac(macHash, macKey).update(this.aad12(seq, type, cipherLen)).update(body.subarray(off, off + cipherLen)).digest();
      if (!timingSafeEqual(mac, body.subarray(off + cipherLen, off + len))) return null;
    } else if (cipherLen < 2 * CBC_BLOCK || cipherLen % CBC_BLOCK !== 0) {
      return null;
    }
    const iv = body.subarray(off, off + CBC_BLOCK);
    const d = createDecipheriv(this.suite.algorithm, this.keys.key, iv) as unknown as CipherGCM;
    d.setAutoPadding(false);
    const plain = Buffer.concat([d.update(body.subarray(off + CBC_BLOCK, off + cipherLen)), d.final()]);
    const pad = plain[plain.length - 1]!;
    const contentEnd = plain.length - pad - 1 - (this.encryptThenMac ? 0 : macBytes);
    if (contentEnd < 0) return null;
    for (let i = plain.length - 1 - pad; i < plain.length - 1; i++) if (plain[i] !== pad) return null;
    const data = plain.subarray(0, contentEnd);
    if (!this.encryptThenMac) {
      const mac = createHmac(macHash, macKey).update(this.aad12(seq, type, contentEnd)).update(data).digest();
      if (!timingSafeEqual(mac, plain.subarray(contentEnd, contentEnd + macBytes))) return null;
    }
    return { type, data };
  }
}
