/**
 * A direction's byte stream cut into TLS records (RFC 8446 §5.1, RFC 5246 §6.2.1): a record may
 * span segments, a segment may carry several records; a record whole in one segment is read in
 * place, otherwise its body is kept (one record at most: 2^14 + 256 bytes of ciphertext in TLS 1.3,
 * RFC 8446 §5.2; 2^14 + 2048 in TLS 1.2, RFC 5246 §6.2.3). Records kcid cannot read are skipped by
 * their length.
 *
 * Capture gaps. A gap inside a record costs that record (its plaintext is reported as a gap of its
 * length to the consumer). A gap over a record header costs the record boundaries: AEAD streams are
 * searched for the next record that authenticates at one of the next sequence numbers, and when one
 * does, the consumer is told of a gap of exactly the plaintext the lost records held (the ciphertext
 * bytes lost, less each lost record's header, content type and tag: exact when the lost records held
 * application data without padding), so a Kafka framer stays in step instead of gluing frames. A
 * further gap while searching is added to the count.
 */
import { handshakeLost } from './handshake-reader.js';
import { lostRecord, record, skipRecord, wanted } from './records.js';
import { advanceStage, nextCipher } from './stages.js';
import { APPLICATION_DATA, CHANGE_CIPHER_SPEC, MAX_RECORD_BYTES, MAX_RECORD_BYTES_12, type Direction, type TlsSide, type TlsState } from './state.js';
import { groupDigits } from '../base/digits.js';

/** Bytes kept while looking for the next record after a gap: two records, so one always fits whole. */
const RESYNC_BYTES = 2 * (5 + MAX_RECORD_BYTES_12);
/** Sequence numbers tried for the first record after a gap (records the gap may have held). */
const MAX_SEQ_WINDOW = 256;
/** The smallest protected record: header, one byte of content type, the 16-byte tag. */
const MIN_PROTECTED_RECORD = 5 + 17;
/** Trial decryptions after one gap before kcid gives up on the direction (a few tens of ms of AES-GCM). */
const MAX_RESYNC_TRIALS = 4096;

const LOST = -1;
const SKIPPED = -2;

export function readRecords(s: TlsState, side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
  const d = s.sides[side];
  s.frame = frame;
  s.tsSec = tsSec;
  s.tsNsec = tsNsec;
  const end = off + len;
  if (d.resync !== null) {
    off = resyncData(s, side, d, buf, off, end);
    if (d.resync !== null) return;
  }
  while (off < end && !d.lost) {
    if (d.skip > 0) {
      const n = Math.min(d.skip, end - off);
      d.skip -= n;
      off += n;
      continue;
    }
    if (d.headerLen === 0 && end - off >= 5) {
      // The common case: a whole header in this segment, often the whole record too.
      d.recordFrame = frame;
      const length = checkHeader(s, side, d, buf, off);
      if (length === LOST) return;
      if (length === SKIPPED) {
        off += 5;
        continue;
      }
      if (!wanted(s, d, buf[off]!)) {
        skipRecord(d, length);
        off += 5;
        continue;
      }
      if (end - off >= 5 + length) {
        record(s, side, d, buf, off, buf, off + 5, length);
        off += 5 + length;
        continue;
      }
      buf.copy(d.header, 0, off, off + 5);
      d.headerLen = 5;
      d.body = Buffer.allocUnsafe(length);
      d.bodyLen = 0;
      off += 5;
      continue;
    }
    if (d.headerLen < 5) {
      if (d.headerLen === 0) d.recordFrame = frame;
      const n = Math.min(5 - d.headerLen, end - off);
      buf.copy(d.header, d.headerLen, off, off + n);
      d.headerLen += n;
      off += n;
      if (d.headerLen < 5) return;
      const length = checkHeader(s, side, d, d.header, 0);
      if (length === LOST) return;
      if (length === SKIPPED) {
        d.headerLen = 0;
        continue;
      }
      if (!wanted(s, d, d.header[0]!)) {
        d.headerLen = 0;
        skipRecord(d, length);
        continue;
      }
      d.body = Buffer.allocUnsafe(length);
      d.bodyLen = 0;
      continue;
    }
    const body = d.body!;
    const n = Math.min(body.length - d.bodyLen, end - off);
    buf.copy(body, d.bodyLen, off, off + n);
    d.bodyLen += n;
    off += n;
    if (d.bodyLen === body.length) {
      d.headerLen = 0;
      d.body = null;
      record(s, side, d, d.header, 0, body, 0, body.length);
    }
  }
}

/**
 * `bytes` of this side's stream are missing. A record whose header was read loses its body and
 * is skipped; decryption carries on with the next record, one sequence number on. A gap over a
 * record header loses the record boundaries.
 */
export function gap(s: TlsState, side: TlsSide, bytes: number, frame: number): void {
  const d = s.sides[side];
  if (d.resync !== null) {
    gapInResync(s, side, d, bytes, frame);
    return;
  }
  if (d.lost) return;
  if (d.skip > 0) {
    if (bytes <= d.skip) {
      d.skip -= bytes;
      return;
    }
    // The record being skipped is accounted for already; the gap's bytes past its end are lost.
    const past = bytes - d.skip;
    d.skip = 0;
    loseSync(s, side, d, frame, bytes, past);
    return;
  }
  if (d.headerLen === 5) {
    const left = d.body!.length - d.bodyLen;
    const type = d.header[0]!;
    if (bytes > left) {
      loseSync(s, side, d, frame, bytes, 5 + d.bodyLen + bytes);
      return;
    }
    d.headerLen = 0;
    d.body = null;
    d.skip = left - bytes;
    lostRecord(s, side, d, type, d.header.readUInt16BE(3), frame, `a TLS record from the ${d.name} lost ${bytes} bytes to a capture gap and was skipped`);
    return;
  }
  loseSync(s, side, d, frame, bytes, d.headerLen + bytes);
}

/**
 * A further gap while kcid looks for a record after an earlier one: records already whole in
 * the bytes kept are tried first (one that decrypts ends the search, and this gap is then read as
 * any other); otherwise what was kept, and the gap, are added to the bytes lost, and the search
 * goes on past the gap with a window of sequence numbers that covers both.
 */
export function gapInResync(s: TlsState, side: TlsSide, d: Direction, bytes: number, frame: number): void {
  for (let at = findRecord(s, side, d, true); at >= 0; at = d.resync === null ? -1 : findRecord(s, side, d, true)) {
    resumeAt(s, side, d, at);
  }
  if (d.resync === null) {
    gap(s, side, bytes, frame);
    return;
  }
  d.lostBytes += d.resyncLen + bytes;
  d.resyncLen = 0;
  d.scanFrom = 0;
  d.seqWindow = Math.min(MAX_SEQ_WINDOW, Math.ceil(d.lostBytes / MIN_PROTECTED_RECORD) + 1);
}

/** The stream ended: a search after a gap ends (at a record whole in what was kept, or not), and a record cut off is noted. */
export function endOfStream(s: TlsState, side: TlsSide, d: Direction): void {
  // Still looking for a record after a gap: candidates that wanted bytes past the end were not records.
  for (let at = d.resync === null ? -1 : findRecord(s, side, d, true); at >= 0; at = d.resync === null ? -1 : findRecord(s, side, d, true)) {
    resumeAt(s, side, d, at);
  }
  if (d.resync !== null) giveUpResync(s, side, d, null);
  // A connection kcid cannot decrypt already has its one note; a record cut short there loses nothing more.
  if (d.headerLen > 0 && !d.lost && s.info.decrypted) {
    const what = d.headerLen < 5 ? `${d.headerLen} bytes of a record header` : `${5 + d.bodyLen} of its ${5 + d.body!.length} bytes`;
    s.out.note('tls-record', side, s.frame, `a TLS record from the ${d.name} is incomplete when the connection ends: ${what} were seen`);
  }
}

/** The record's length from its header; LOST when the header is not TLS, SKIPPED for an oversize record. */
export function checkHeader(s: TlsState, side: TlsSide, d: Direction, buf: Buffer, off: number): number {
  const type = buf[off]!;
  const length = buf.readUInt16BE(off + 3);
  if (type < CHANGE_CIPHER_SPEC || type > 24 || buf[off + 1] !== 3 || buf[off + 2]! > 4) {
    d.lost = true;
    s.out.note(
      'tls-record',
      side,
      s.frame,
      `bytes from the ${d.name} are not a TLS record (starting ${buf.subarray(off, off + 5).toString('hex')}): the rest of this direction is not read`,
    );
    return LOST;
  }
  const limit = s.tls13 ? MAX_RECORD_BYTES : MAX_RECORD_BYTES_12;
  if (length > limit) {
    s.out.note(
      'tls-record',
      side,
      s.frame,
      `a TLS record from the ${d.name} is ${length} bytes, more than the ${groupDigits(limit)} ${s.tls13 ? 'TLS 1.3' : s.info.version === null ? 'TLS' : 'TLS 1.2'} allows: skipped`,
    );
    if (d.cipher !== null && d.protectedFromHere) {
      d.cipher.seq++;
      d.lostRecords++;
      s.out.plaintextGap(side, d.cipher.plaintextLength(length), s.frame);
    }
    handshakeLost(d);
    d.skip = length;
    return SKIPPED;
  }
  return length;
}

/**
 * A gap of `bytes` took the record boundaries; `lost` is how many bytes of the stream since the
 * last record accounted for are gone with it (the record in progress, partly read, included).
 */export function loseSync(s: TlsState, side: TlsSide, d: Direction, frame: number, bytes: number, lost: number): void {
  d.lost = true;
  d.headerLen = 0;
  d.body = null;
  d.skip = 0;
  handshakeLost(d);
  const cipher = d.cipher;
  if (cipher !== null && d.protectedFromHere && cipher.suite.kind !== 'cbc') {
    // AEAD records carry no sequence number, but the next one decrypts only at its own: kcid
    // looks for a record header whose record authenticates at one of the next few numbers
    // (RFC 8446 §5.3, RFC 5246 §6.2.3.3). The plaintext lost is reported when it is found.
    d.resync = Buffer.allocUnsafe(RESYNC_BYTES);
    d.resyncLen = 0;
    d.scanFrom = 0;
    d.lostBytes = lost;
    d.lostSeq = cipher.seq;
    d.seqWindow = Math.min(MAX_SEQ_WINDOW, Math.ceil(lost / MIN_PROTECTED_RECORD) + 1);
    d.trials = 0;
    s.out.note('tls-record', side, frame, `a capture gap of ${bytes} bytes took TLS record boundaries from the ${d.name}: kcid resumes at the next record that decrypts`);
    return;
  }
  if (d.cipher !== null || !d.protectedFromHere) {
    s.out.note('tls-record', side, frame, `a capture gap of ${bytes} bytes took TLS record boundaries from the ${d.name}: the rest of this direction is not read`);
  }
}

/** Bytes after a gap, while looking for the next record; returns where normal reading resumes in `buf`. */
export function resyncData(s: TlsState, side: TlsSide, d: Direction, buf: Buffer, off: number, end: number): number {
  for (;;) {
    const r = d.resync!;
    if (off < end) {
      if (d.resyncLen === r.length) {
        // Full: drop what was scanned (a record starting at scanFrom then always fits).
        d.lostBytes += d.scanFrom;
        r.copy(r, 0, d.scanFrom, d.resyncLen);
        d.resyncLen -= d.scanFrom;
        d.scanFrom = 0;
      }
      const n = Math.min(r.length - d.resyncLen, end - off);
      buf.copy(r, d.resyncLen, off, off + n);
      d.resyncLen += n;
      off += n;
    }
    const at = findRecord(s, side, d, false);
    if (d.resync === null) return end; // given up
    if (at >= 0) {
      resumeAt(s, side, d, at);
      return off;
    }
    if (off >= end) return end;
  }
}

/**
 * The record at `at` of the resync buffer decrypts (the cipher is at its sequence number): the
 * loss is reported, then the record and what follows it are read as usual.
 */
export function resumeAt(s: TlsState, side: TlsSide, d: Direction, at: number): void {
  const r = d.resync!;
  const length = r.readUInt16BE(at + 3);
  const cipher = d.cipher!;
  const lostBytes = d.lostBytes + at;
  // Records lost: those between the first lost one's sequence number and this one's (under a new
  // key stage, at least those of the new stage and the Finished or KeyUpdate before them).
  const records = Math.max(1, d.stageChanged ? cipher.seq + 1 : cipher.seq - d.lostSeq);
  const plain = Math.max(0, lostBytes - records * cipher.recordOverhead());
  d.stageChanged = false;
  d.resync = null;
  d.lost = false;
  d.lostBytes = 0;
  if (plain > 0) s.out.plaintextGap(side, plain, s.frame);
  s.out.note(
    'tls-record',
    side,
    s.frame,
    `kcid found the ${d.name}'s TLS records again after the capture gap: ${records} record${records === 1 ? '' : 's'} (${groupDigits(lostBytes)} bytes, ${groupDigits(plain)} of plaintext) lost`,
  );
  record(s, side, d, r, at, r, at + 5, length);
  const rest = r.subarray(at + 5 + length, d.resyncLen);
  if (rest.length > 0) readRecords(s, side, rest, 0, rest.length, s.frame, s.tsSec, s.tsNsec);
}

/** A whole record in the resync buffer that decrypts at one of the next sequence numbers (its cipher set to it), or -1. */
export function findRecord(s: TlsState, side: TlsSide, d: Direction, final: boolean): number {
  const r = d.resync!;
  const cipher = d.cipher!;
  for (let p = d.scanFrom; p + 5 <= d.resyncLen; p++) {
    if (r[p] !== APPLICATION_DATA || r[p + 1] !== 3 || r[p + 2] !== 3) continue;
    const length = r.readUInt16BE(p + 3);
    if (length < MIN_PROTECTED_RECORD - 5 || length > MAX_RECORD_BYTES) continue;
    if (p + 5 + length > d.resyncLen) {
      if (final) continue; // no more bytes are coming: this one was not a record
      d.scanFrom = p;
      return -1; // wait for the rest of this candidate
    }
    const seq = cipher.findSequence(r, p, r, p + 5, length, d.seqWindow);
    if (seq >= 0) {
      cipher.seq = seq;
      return p;
    }
    d.trials += d.seqWindow;
    // The gap may have held a Finished or KeyUpdate: the next key stage, from its first record.
    const next = s.tls13 ? nextCipher(s, side, d) : null;
    if (next !== null) {
      const nseq = next.findSequence(r, p, r, p + 5, length, d.seqWindow);
      d.trials += d.seqWindow;
      if (nseq >= 0) {
        next.seq = nseq;
        advanceStage(s, side, d);
        d.stageChanged = true;
        return p;
      }
    }
    if (d.trials > MAX_RESYNC_TRIALS) {
      giveUpResync(s, side, d, `no TLS record from the ${d.name} decrypted after the capture gap: the rest of this direction is not read`);
      return -1;
    }
  }
  d.scanFrom = Math.max(d.scanFrom, d.resyncLen - 4);
  return -1;
}

/**
 * The search after a gap ends without a record: the plaintext lost is not known (it is at least
 * what the bytes lost and kept would hold as one record), and the consumer is told of that much.
 */
export function giveUpResync(s: TlsState, side: TlsSide, d: Direction, message: string | null): void {
  const cipher = d.cipher!;
  const plain = Math.max(1, d.lostBytes + d.resyncLen - cipher.recordOverhead());
  d.resync = null;
  d.lostBytes = 0;
  s.out.plaintextGap(side, plain, s.frame);
  if (message !== null) s.out.note('tls-record', side, s.frame, message);
}
