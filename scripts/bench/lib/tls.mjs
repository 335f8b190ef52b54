/**
 * TLS 1.3 for benchmark inputs: wraps a TcpFlow so that every frame a scenario sends goes out in
 * TLS records (TLS_AES_128_GCM_SHA256, at most 16 KiB of plaintext each, one run of records per
 * frame as OpenSSL writes them), after a ClientHello / ServerHello / Finished exchange, and writes
 * each connection's secrets to an NSS key log. Secrets and randoms come from a hash of the
 * connection number, not from the scenario's random stream, so the Kafka traffic is byte for byte
 * the plaintext scenario's.
 */
import { createCipheriv, createHash, createHmac } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';

const RECORD = 16384;

function hkdfExpandLabel(secret, label, length) {
  const full = Buffer.from(`tls13 ${label}`);
  const info = Buffer.concat([Buffer.from([length >> 8, length & 0xff, full.length]), full, Buffer.from([0])]);
  return createHmac('sha256', secret).update(info).update(Buffer.from([1])).digest().subarray(0, length);
}

class Sealer {
  constructor(secret) {
    this.key = hkdfExpandLabel(secret, 'key', 16);
    this.iv = hkdfExpandLabel(secret, 'iv', 12);
    this.seq = 0;
  }
  /** TLSCiphertext records for `type` content `buf[off, off + len)`. */
  seal(type, buf, off, len) {
    const parts = [];
    for (let at = off; at < off + len || (len === 0 && at === off); ) {
      const n = Math.min(RECORD, off + len - at);
      const nonce = Buffer.from(this.iv);
      nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ this.seq++) >>> 0, 8);
      const header = Buffer.from([23, 3, 3, (n + 17) >> 8, (n + 17) & 0xff]);
      const c = createCipheriv('aes-128-gcm', this.key, nonce);
      c.setAAD(header);
      parts.push(header, c.update(buf.subarray(at, at + n)), c.update(Buffer.from([type])), c.final(), c.getAuthTag());
      at += n;
      if (len === 0) break;
    }
    return Buffer.concat(parts);
  }
}

const u16 = (n) => Buffer.from([n >> 8, n & 0xff]);
const handshake = (type, body) => Buffer.concat([Buffer.from([type, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff]), body]);
const record = (type, body) => Buffer.concat([Buffer.from([type, 3, 3]), u16(body.length), body]);

export class TlsKeyLog {
  constructor(path) {
    this.path = path;
    this.connections = 0;
    writeFileSync(path, '');
  }
}

/** A TcpFlow seen through TLS 1.3: same interface (handshake, send, close). */
export class TlsFlow {
  constructor(flow, keylog) {
    this.flow = flow;
    const n = keylog.connections++;
    const h = (what) => createHash('sha256').update(`kcid-bench ${what} ${n}`).digest();
    this.clientRandom = h('client random');
    this.serverRandom = h('server random');
    this.secrets = {
      CLIENT_HANDSHAKE_TRAFFIC_SECRET: h('chts'),
      SERVER_HANDSHAKE_TRAFFIC_SECRET: h('shts'),
      CLIENT_TRAFFIC_SECRET_0: h('cats'),
      SERVER_TRAFFIC_SECRET_0: h('sats'),
    };
    const r = this.clientRandom.toString('hex');
    appendFileSync(keylog.path, Object.entries(this.secrets).map(([label, s]) => `${label} ${r} ${s.toString('hex')}\n`).join(''));
    this.client = new Sealer(this.secrets.CLIENT_TRAFFIC_SECRET_0);
    this.server = new Sealer(this.secrets.SERVER_TRAFFIC_SECRET_0);
    /** Ciphertext of the frame being sent, per direction, for sends cut into bursts. */
    this.pending = [null, null];
  }

  handshake() {
    this.flow.handshake();
    const sni = Buffer.from('broker.kafka.bench');
    const exts = Buffer.concat([
      u16(0), u16(sni.length + 5), u16(sni.length + 3), Buffer.from([0]), u16(sni.length), sni,
      u16(43), u16(3), Buffer.from([2, 3, 4]),
    ]);
    const hello = handshake(1, Buffer.concat([u16(0x0303), this.clientRandom, Buffer.from([0]), u16(2), u16(0x1301), Buffer.from([1, 0]), u16(exts.length), exts]));
    const ch = record(22, hello);
    this.flow.send(true, ch, 0, ch.length);
    const shExts = Buffer.concat([u16(43), u16(2), u16(0x0304)]);
    const sh = handshake(2, Buffer.concat([u16(0x0303), this.serverRandom, Buffer.from([0]), u16(0x1301), Buffer.from([0]), u16(shExts.length), shExts]));
    const fin = handshake(20, Buffer.alloc(32, 0xf5));
    const sflight = Buffer.concat([record(22, sh), record(20, Buffer.from([1])), new Sealer(this.secrets.SERVER_HANDSHAKE_TRAFFIC_SECRET).seal(22, fin, 0, fin.length)]);
    this.flow.send(false, sflight, 0, sflight.length);
    const cflight = Buffer.concat([record(20, Buffer.from([1])), new Sealer(this.secrets.CLIENT_HANDSHAKE_TRAFFIC_SECRET).seal(22, fin, 0, fin.length)]);
    this.flow.send(true, cflight, 0, cflight.length);
  }

  /** As TcpFlow.send: returns the plaintext bytes sent, so a burst-by-burst caller sees the frame advance. */
  send(fromClient, buf, off, len, maxSegments = Infinity) {
    const side = fromClient ? 0 : 1;
    let p = this.pending[side];
    if (p === null) {
      p = { cipher: (fromClient ? this.client : this.server).seal(23, buf, off, len), sent: 0, plain: len, returned: 0 };
      this.pending[side] = p;
    }
    p.sent += this.flow.send(fromClient, p.cipher, p.sent, p.cipher.length - p.sent, maxSegments);
    let ret;
    if (p.sent === p.cipher.length) {
      ret = p.plain - p.returned;
      this.pending[side] = null;
    } else {
      ret = Math.min(p.plain - p.returned - 1, Math.floor((p.sent / p.cipher.length) * p.plain) - p.returned);
      ret = Math.max(0, ret);
    }
    p.returned += ret;
    return ret;
  }

  close() {
    this.flow.close();
  }
}
