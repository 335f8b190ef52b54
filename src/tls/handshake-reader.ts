/**
 * Handshake messages read from a direction's handshake records (RFC 8446 §4, RFC 5246 §7.4):
 * reassembled across records into one bounded buffer, restarted at a message start after a loss,
 * and acted on: the hellos give the version, cipher suite and keys, the TLS 1.2 Certificate the
 * server's certificate, Finished and KeyUpdate move a TLS 1.3 direction's key stage, and a TLS 1.2
 * renegotiation brings the next keys.
 */
import { parseCertificate, parseClientHello, parseServerHello, TlsDecodeError } from './handshake.js';
import { CIPHER_SUITES, cipherSuiteName, tls12Keys } from './keys.js';
import { RecordCipher } from './record-cipher.js';
import { advanceStage, install13, nextCipher } from './stages.js';
import { MAX_HANDSHAKE_BYTES, type Direction, type TlsSide, type TlsState } from './state.js';
import { versionName } from './types.js';

const HS_HELLO_REQUEST = 0;
const HS_CLIENT_HELLO = 1;
const HS_SERVER_HELLO = 2;
const HS_CERTIFICATE = 11;
const HS_SERVER_HELLO_DONE = 14;
const HS_FINISHED = 20;
const HS_KEY_UPDATE = 24;

/**
 * Handshake message types (RFC 8446 §4 and B.3, RFC 5246 §7.4, RFC 5077 §3.3, RFC 6066 §8,
 * RFC 4680, RFC 8879): after a loss, a record's handshake bytes are read only if they start with
 * messages of these types.
 */
const HS_TYPES = new Set([0, 1, 2, 4, 5, 8, 11, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24, 25, 254]);

/** Whether `buf[off, end)` is a run of handshake headers of known types, the last message possibly running on. */
function startsHandshake(buf: Buffer, off: number, end: number): boolean {
  let p = off;
  while (p < end) {
    if (end - p < 4 || !HS_TYPES.has(buf[p]!)) return false;
    p += 4 + buf.readUIntBE(p + 1, 3);
  }
  return true;
}

/** Handshake bytes were lost: a message in progress is dropped, and reading starts again at a message start. */
export function handshakeLost(d: Direction): void {
  d.hs = null;
  d.hsLen = 0;
  d.hsLost = true;
}


export function handshakeBytes(s: TlsState, side: TlsSide, d: Direction, buf: Buffer, off: number, len: number, encrypted: boolean): void {
  if (d.hsBroken) return;
  if (d.hsLost) {
    // After a loss the record may start inside a message: it is read only if it starts with one.
    if (!startsHandshake(buf, off, off + len)) return;
    d.hsLost = false;
  }
  // Messages may span records, and records may carry several messages (RFC 8446 §5.1). The
  // common case, whole messages in one record, is read in place; otherwise the bytes are kept
  // in a buffer that doubles as it fills (one byte per record must not cost a copy of the rest).
  let data = buf;
  let start = off;
  let end = off + len;
  if (d.hsLen > 0) {
    if (d.hs!.length < d.hsLen + len) {
      const grown = Buffer.allocUnsafe(Math.max(2 * d.hs!.length, d.hsLen + len));
      d.hs!.copy(grown, 0, 0, d.hsLen);
      d.hs = grown;
    }
    buf.copy(d.hs!, d.hsLen, off, off + len);
    d.hsLen += len;
    data = d.hs!;
    start = 0;
    end = d.hsLen;
  }
  while (end - start >= 4) {
    const length = data.readUIntBE(start + 1, 3);
    if (length > MAX_HANDSHAKE_BYTES) {
      d.hsBroken = true;
      d.hs = null;
      d.hsLen = 0;
      s.out.note('tls-record', side, s.frame, `a ${length}-byte TLS handshake message from the ${d.name} is larger than kcid reads`);
      return;
    }
    if (end - start < 4 + length) break;
    try {
      handshakeMessage(s, side, d, data[start]!, data, start + 4, start + 4 + length, encrypted);
    } catch (e) {
      if (!(e instanceof TlsDecodeError)) throw e;
      const type = data[start]!;
      if (type === HS_CLIENT_HELLO || type === HS_SERVER_HELLO) {
        // Without the hellos there is nothing to decrypt with: one note for the connection says it.
        d.hsBroken = true;
        d.hs = null;
        d.hsLen = 0;
        s.noteUnreadable(`its ${type === HS_CLIENT_HELLO ? 'ClientHello' : 'ServerHello'} does not parse (${e.message})`);
        return;
      }
      s.out.note('tls-record', side, s.frame, `a TLS handshake message (type ${type}) from the ${d.name} does not parse: ${e.message}`);
    }
    start += 4 + length;
  }
  const left = end - start;
  if (left === 0) {
    d.hs = null;
    d.hsLen = 0;
  } else if (data === d.hs) {
    d.hs.copy(d.hs, 0, start, end);
    d.hsLen = left;
  } else {
    d.hs = Buffer.allocUnsafe(Math.max(left, 256));
    data.copy(d.hs, 0, start, end);
    d.hsLen = left;
  }
}

export function handshakeMessage(s: TlsState, side: TlsSide, d: Direction, type: number, buf: Buffer, off: number, end: number, encrypted: boolean): void {
  const info = s.info;
  if (type === HS_CLIENT_HELLO && side === 0 && encrypted && !s.tls13) {
    // TLS 1.2 renegotiation (RFC 5246 §7.4.1.2): a new handshake under the current keys, with its own client random.
    s.clientRandom = parseClientHello(buf, off, end).random;
    s.renegotiating = true;
  } else if (type === HS_SERVER_HELLO && side === 1 && encrypted && s.renegotiating) {
    const hello = parseServerHello(buf, off, end);
    s.renegotiating = false;
    renegotiated(s, hello.cipher, hello.random, hello.encryptThenMac, hello.version);
  } else if (type === HS_HELLO_REQUEST) {
    // The server asks the client to renegotiate; the ClientHello that may follow says more.
  } else if (type === HS_CLIENT_HELLO && side === 0 && !encrypted) {
    const hello = parseClientHello(buf, off, end);
    s.clientRandom = hello.random;
    s.earlyOffered = hello.earlyData;
    info.clientRandom = hello.random.subarray(0, 8).toString('hex');
    info.offered = hello.offered;
    info.sni = hello.sni;
    if (info.version === null || info.helloRetry) info.alpn = hello.alpn;
  } else if (type === HS_SERVER_HELLO && side === 1 && !encrypted) {
    const hello = parseServerHello(buf, off, end);
    info.cipher = cipherSuiteName(hello.cipher);
    if (hello.helloRetry) {
      info.helloRetry = true;
      return;
    }
    info.version = versionName(hello.version);
    if (hello.alpn !== null) info.alpn = [hello.alpn];
    s.tls13 = hello.version === 0x0304;
    if (s.tls13) {
      info.resumed = hello.psk;
      // Both directions' records are protected from here on (RFC 8446 §2), ChangeCipherSpec aside.
      s.sides[0].protectedFromHere = true;
      s.sides[1].protectedFromHere = true;
    }
    keysFor(s, hello.cipher, hello.random, hello.encryptThenMac, hello.version);
  } else if (type === HS_CERTIFICATE && side === 1 && info.certificate === null) {
    info.certificate = parseCertificate(buf, off, end, s.tls13);
  } else if (type === HS_SERVER_HELLO_DONE && side === 1) {
    s.serverHelloDone = true;
  } else if (type === HS_FINISHED && s.tls13 && encrypted && d.stage.kind === 'handshake') {
    // RFC 8446 §7.1: after its Finished, each side sends with its application traffic secret. A
    // Finished under an application secret is post-handshake authentication's (§4.6.2): it
    // changes no keys.
    if (side === 0) s.clientFinished = true;
    install13(s, side, side === 0 ? 'CLIENT_TRAFFIC_SECRET_0' : 'SERVER_TRAFFIC_SECRET_0');
  } else if (type === HS_KEY_UPDATE && s.tls13 && encrypted && d.stage.kind === 'application' && nextCipher(s, side, d) !== null) {
    // RFC 8446 §4.6.3: the sender's next records use the next generation of its secret (§7.2).
    d.next!.seq = 0;
    advanceStage(s, side, d);
  }
}

/** At the ServerHello: the secrets for this client random, and the keys they give. */
export function keysFor(s: TlsState, code: number, serverRandom: Buffer, encryptThenMac: boolean, version: number): void {
  const suite = CIPHER_SUITES.get(code);
  s.secrets = s.clientRandom === null ? undefined : s.keys?.lookup(s.clientRandom);
  if (version < 0x0303) {
    // RFC 2246 / 4346: a PRF of MD5 and SHA-1, and in TLS 1.0 CBC IVs chained from the previous record.
    s.noteUnreadable(`kcid does not decrypt ${versionName(version)} (only TLS 1.2 and 1.3)`);
    return;
  }
  if (suite === undefined || suite.tls13 !== s.tls13) {
    s.noteUnreadable(`kcid does not decrypt cipher suite ${cipherSuiteName(code)}`);
    return;
  }
  s.suite = suite;
  const secrets = s.secrets;
  if (s.tls13) {
    if (secrets?.has('CLIENT_HANDSHAKE_TRAFFIC_SECRET') !== true || !secrets.has('SERVER_HANDSHAKE_TRAFFIC_SECRET')) return s.noteUnreadable(null);
    install13(s, 0, 'CLIENT_HANDSHAKE_TRAFFIC_SECRET');
    install13(s, 1, 'SERVER_HANDSHAKE_TRAFFIC_SECRET');
    return;
  }
  const master = secrets?.get('CLIENT_RANDOM');
  if (master === undefined || master.length !== 48 || s.clientRandom === null) return s.noteUnreadable(null);
  const [client, server] = tls12Keys(suite, master, s.clientRandom, serverRandom);
  s.pending12 = [new RecordCipher(suite, client, encryptThenMac), new RecordCipher(suite, server, encryptThenMac)];
  s.info.decrypted = true;
  s.noted = true;
}

/** The ServerHello of a TLS 1.2 renegotiation: the keys its ChangeCipherSpecs switch to. */
export function renegotiated(s: TlsState, code: number, serverRandom: Buffer, encryptThenMac: boolean, version: number): void {
  const suite = CIPHER_SUITES.get(code);
  const master = s.clientRandom === null ? undefined : s.keys?.lookup(s.clientRandom)?.get('CLIENT_RANDOM');
  const random = s.clientRandom === null ? '' : ` (client random ${s.clientRandom.subarray(0, 8).toString('hex')})`;
  s.info.cipher = cipherSuiteName(code);
  if (suite === undefined || suite.tls13 || version !== 0x0303 || master?.length !== 48 || s.clientRandom === null) {
    s.pending12 = null;
    const why = suite === undefined || suite.tls13 || version !== 0x0303 ? `kcid does not decrypt ${versionName(version)} ${cipherSuiteName(code)}` : 'the key logs have no CLIENT_RANDOM line for it';
    s.out.note('tls-record', 1, s.frame, `the TLS session was renegotiated${random}: ${why}; the rest of the connection is not read`);
    return;
  }
  const [client, server] = tls12Keys(suite, master, s.clientRandom, serverRandom);
  s.pending12 = [new RecordCipher(suite, client, encryptThenMac), new RecordCipher(suite, server, encryptThenMac)];
}
