/**
 * One whole record of a direction: a ChangeCipherSpec switches TLS 1.2 keys, a protected record
 * is opened under the direction's key stage (or the next one, RFC 8446 §4.4.4 and §4.6.3), and its
 * content goes on: application data to the consumer, handshake bytes to the handshake reader,
 * alerts to a note. A record that cannot be read costs its plaintext, reported as a gap.
 */
import { alertName } from './handshake.js';
import { handshakeBytes, handshakeLost } from './handshake-reader.js';
import { advanceStage, nextCipher } from './stages.js';
import { ALERT, APPLICATION_DATA, CHANGE_CIPHER_SPEC, HANDSHAKE, type Direction, type TlsSide, type TlsState } from './state.js';

/**
 * Sequence numbers tried under the next key stage: its first, and one per record lost since the last
 * that decrypted (kcid counts those exactly: a lost Finished or KeyUpdate was one of them, so the
 * record at hand is at most that many numbers into the next stage). Capped as the search after a gap
 * is, so a record that fails costs a bounded number of trials.
 */
const MAX_NEXT_STAGE_WINDOW = 256;

/** Whether a record of this type needs its body: protected records without a cipher are skipped by length. */
export function wanted(s: TlsState, d: Direction, type: number): boolean {
  if (!d.protectedFromHere) return true;
  if (s.tls13 && type !== APPLICATION_DATA) return type !== CHANGE_CIPHER_SPEC;
  return d.cipher !== null;
}

/** A record kcid does not read: a TLS 1.3 ChangeCipherSpec (no sequence number), or one it has no keys for. */
export function skipRecord(d: Direction, length: number): void {
  d.skip = length;
}

export function record(s: TlsState, side: TlsSide, d: Direction, header: Buffer, hoff: number, body: Buffer, off: number, len: number): void {
  let type = header[hoff]!;
  if (type === CHANGE_CIPHER_SPEC) {
    // TLS 1.3's compatibility ChangeCipherSpec (RFC 8446 D.4) means nothing, also after a HelloRetryRequest.
    if (!s.tls13 && s.info.version !== null) changeCipherSpec(s, side, d);
    return;
  }
  let data = body;
  let start = off;
  let length = len;
  const encrypted = d.protectedFromHere && (!s.tls13 || type === APPLICATION_DATA);
  if (encrypted) {
    const cipher = d.cipher;
    if (cipher === null) return;
    let opened = cipher.open(header, hoff, body, off, len);
    if (opened === null && s.tls13) {
      // A lost Finished or KeyUpdate: the record may be under the next key stage (RFC 8446 §4.4.4, §4.6.3).
      const next = nextCipher(s, side, d);
      if (next !== null) {
        const seq = next.findSequence(header, hoff, body, off, len, Math.min(1 + d.lostRecords, MAX_NEXT_STAGE_WINDOW));
        if (seq >= 0) {
          next.seq = seq;
          opened = next.open(header, hoff, body, off, len);
          advanceStage(s, side, d);
        }
      }
    }
    if (opened !== null) d.lostRecords = 0;
    if (opened === null && side === 0 && s.tls13 && s.earlyOffered && !s.clientFinished) {
      // Before its Finished, a client that offered 0-RTT may still send early data (and
      // EndOfEarlyData) under its early traffic secret, not the handshake secret (RFC 8446 §4.5):
      // such a record takes no sequence number of the handshake secret's.
      cipher.seq--;
      earlyData(s, len);
      return;
    }
    if (opened === null) {
      lostRecord(s, 
        side,
        d,
        type,
        len,
        d.recordFrame,
        `a TLS record from the ${d.name} failed authentication (frame ${s.frame}): wrong key, or the capture is damaged; skipped`,
        true,
      );
      return;
    }
    type = opened.type;
    data = opened.data;
    start = 0;
    length = data.length;
  }
  if (type === APPLICATION_DATA) {
    if (encrypted && length > 0) s.out.plaintext(side, data, start, length, s.frame, s.tsSec, s.tsNsec);
    // Application data from the client before the ServerHello: TLS 1.3 0-RTT early data (RFC 8446 §2.3).
    else if (!encrypted && side === 0 && s.earlyOffered) earlyData(s, len);
  } else if (type === HANDSHAKE) {
    handshakeBytes(s, side, d, data, start, length, encrypted);
  } else if (type === ALERT) {
    alert(s, side, d, data, start, length, encrypted);
  }
}

/** A record of 0-RTT early data: its plaintext is lost to the Kafka stream, and counted for the note at the end. */
export function earlyData(s: TlsState, len: number): void {
  s.earlyRecords++;
  s.earlyBytes += len;
  s.out.plaintextGap(0, Math.max(0, len - 17), s.frame);
}

/** A record that could not be read: noted (failures once per direction, then counted), and its plaintext given up. */
export function lostRecord(s: TlsState, side: TlsSide, d: Direction, type: number, length: number, frame: number, message: string, auth = false): void {
  const cipher = d.cipher;
  if (cipher !== null && d.protectedFromHere && (!s.tls13 || type === APPLICATION_DATA)) {
    if (!auth) {
      cipher.seq++;
      d.lostRecords++;
    }
    s.out.plaintextGap(side, cipher.plaintextLength(length), frame);
  }
  // A handshake message this record carried part of is not rebuilt around the hole.
  handshakeLost(d);
  if (auth) {
    if (d.authFailures++ > 0) return;
    s.out.note('tls-auth', side, frame, message);
    return;
  }
  s.out.note('tls-record', side, frame, message);
}


export function changeCipherSpec(s: TlsState, side: TlsSide, d: Direction): void {
  d.protectedFromHere = true;
  d.cipher = s.pending12 === null ? null : s.pending12[side];
  // An abbreviated handshake (RFC 5246 §7.3): the server's ChangeCipherSpec follows its ServerHello at once.
  if (side === 1 && !s.serverHelloDone) s.info.resumed = true;
}

export function alert(s: TlsState, side: TlsSide, d: Direction, data: Buffer, off: number, len: number, encrypted: boolean): void {
  if (len < 2) return;
  const level = data[off]!;
  const description = data[off + 1]!;
  if (description === 0) return; // close_notify: the normal end
  const how = level === 2 ? 'fatal' : level === 1 ? 'warning' : `level ${level}`;
  s.out.note('tls-alert', side, s.frame, `TLS alert from the ${d.name}: ${how} ${alertName(description)} (${description})${encrypted ? '' : ', in the clear'}`);
}
