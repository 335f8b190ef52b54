/**
 * One TLS connection, both directions: TLS records reassembled from the TCP byte stream (a record
 * may span segments, a segment may carry several records), the handshake read in the clear
 * (ClientHello, ServerHello, HelloRetryRequest, the TLS 1.2 Certificate), and, with keys from a
 * key log, records decrypted and their application data handed on in order. Memory per direction
 * is one record in progress (at most 2^14 + 256 bytes of ciphertext in TLS 1.3, RFC 8446 §5.2;
 * 2^14 + 2048 in TLS 1.2, RFC 5246 §6.2.3) and one handshake message (bounded); records kcid cannot
 * decrypt are skipped by their length, not kept.
 *
 * Capture gaps. A gap inside a record costs that record (its plaintext is reported as a gap of its
 * length to the consumer). A gap over a record header costs the record boundaries: AEAD streams are
 * searched for the next record that authenticates at one of the next sequence numbers, and when one
 * does, the consumer is told of a gap of exactly the plaintext the lost records held (the ciphertext
 * bytes lost, less each lost record's header, content type and tag: exact when the lost records held
 * application data without padding), so a Kafka framer stays in step instead of gluing frames. A
 * further gap while searching is added to the count.
 *
 * TLS 1.3 key stages (RFC 8446 §7.1-7.2): each direction is under its handshake traffic secret, then
 * its application traffic secret of generation N. Finished moves the handshake stage to generation 0,
 * KeyUpdate moves generation N to N+1; a record that fails under the current stage is tried under the
 * next one (one step ahead, at its first sequence numbers), so a lost Finished or KeyUpdate does not
 * cost the rest of the direction.
 */
import { alertName, parseCertificate, parseClientHello, parseServerHello, TlsDecodeError } from './handshake.js';
import { CIPHER_SUITES, cipherSuiteName, nextTrafficSecret, tls12Keys, tls13Keys, type CipherSuite } from './keys.js';
import type { KeyLog } from './keylog.js';
import { RecordCipher } from './record-cipher.js';
import { newTlsInfo, versionName, type TlsInfo } from './types.js';

/** 0 for the client's bytes, 1 for the server's. */
export type TlsSide = 0 | 1;

export type TlsNoteKind = 'tls' | 'tls-auth' | 'tls-record' | 'tls-alert';

export interface TlsOutput {
  /** Decrypted application data, in order, dated by the packet that completed its record. */
  plaintext(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void;
  /** Application data lost with a record (a gap, a failed record): about this many bytes. */
  plaintextGap(side: TlsSide, bytes: number, frame: number): void;
  note(kind: TlsNoteKind, side: TlsSide, frame: number, message: string): void;
}

/** RFC 8446 §5.2: a TLS 1.3 TLSCiphertext.length must not exceed 2^14 + 256. */
export const MAX_RECORD_BYTES = 16384 + 256;
/** RFC 5246 §6.2.3: a TLS 1.2 TLSCiphertext.length must not exceed 2^14 + 2048 (CBC's MAC and padding). */
export const MAX_RECORD_BYTES_12 = 16384 + 2048;
/** Largest handshake message kcid keeps to read (a certificate chain is a few KB; RFC 8446 allows 2^24). */
export const MAX_HANDSHAKE_BYTES = 256 * 1024;

const CHANGE_CIPHER_SPEC = 20;
const ALERT = 21;
const HANDSHAKE = 22;
const APPLICATION_DATA = 23;

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
/** Sequence numbers tried under the next key stage: its first, and one per record lost since the last that decrypted (capped). */
const MAX_NEXT_STAGE_WINDOW = 8;

/**
 * Which secret protects a direction's records (TLS 1.3, RFC 8446 §7.1): none yet (the clear
 * hellos, or TLS 1.2, whose ChangeCipherSpec is explicit), the handshake traffic secret, or the
 * application traffic secret of generation N (0 after Finished, N+1 after a KeyUpdate, §4.6.3).
 */
export type KeyStage = { readonly kind: 'none' } | { readonly kind: 'handshake' } | { readonly kind: 'application'; readonly generation: number };

const NO_STAGE: KeyStage = { kind: 'none' };
const HANDSHAKE_STAGE: KeyStage = { kind: 'handshake' };

class Direction {
  /** Header of the record in progress, and how much of it is in. */
  readonly header = Buffer.alloc(5);
  headerLen = 0;
  /** Body of the record in progress (allocated at its length when its header is in), and how much of it is in. */
  body: Buffer | null = null;
  bodyLen = 0;
  /** Bytes of a record being skipped (not decryptable, oversize, or damaged by a gap). */
  skip = 0;
  /** The stream lost its record boundaries (a gap over a header, bytes that are not TLS). */
  lost = false;
  /** Records from here on are protected (TLS 1.2: after ChangeCipherSpec; TLS 1.3: after ServerHello). */
  protectedFromHere = false;
  cipher: RecordCipher | null = null;
  /** TLS 1.3: this side's current traffic secret (for KeyUpdate). */
  secret: Buffer | null = null;
  /** TLS 1.3: the key stage `cipher` belongs to. */
  stage: KeyStage = NO_STAGE;
  /** TLS 1.3: the next stage's cipher (its secret beside it), made when a record first fails under the current one. */
  next: RecordCipher | null = null;
  nextSecret: Buffer | null = null;
  /** Records lost (gaps, oversize) since the last that decrypted: how far into the next stage to look. */
  lostRecords = 0;
  /**
   * While the record boundaries are lost: the bytes of the stream since the end of the last record
   * accounted for (the record in progress, the gap, bytes searched), and the sequence number the
   * first lost record had. At the record kcid resumes at, the difference of sequence numbers is
   * the number of records lost, and the bytes less their overhead the plaintext lost.
   */
  lostBytes = 0;
  lostSeq = 0;
  /** The search after a gap found its record under the next key stage. */
  stageChanged = false;
  /** A handshake record was (or may have been) lost: the next handshake bytes are read only from a message start. */
  hsLost = false;
  /** A handshake message in progress. */
  hs: Buffer | null = null;
  hsLen = 0;
  /** Handshake messages are no longer followed (one was lost or too large). */
  hsBroken = false;
  authFailures = 0;
  /**
   * After a gap took the record boundaries of an AEAD stream: bytes kept while kcid looks for a
   * record that decrypts at one of the next sequence numbers (RESYNC_BYTES at most).
   */
  resync: Buffer | null = null;
  resyncLen = 0;
  /** Positions of resync before this one hold no record. */
  scanFrom = 0;
  /** Sequence numbers tried after the last known one. */
  seqWindow = 0;
  /** Decryptions tried since the gap (bounded: junk that looks like record headers must not cost without end). */
  trials = 0;
  /** Frame of the packet that began the record in progress. */
  recordFrame = 0;
  constructor(readonly name: 'client' | 'broker') {}
}

/** Whether `buf[off, end)` is a run of handshake headers of known types, the last message possibly running on. */
function startsHandshake(buf: Buffer, off: number, end: number): boolean {
  let p = off;
  while (p < end) {
    if (end - p < 4 || !HS_TYPES.has(buf[p]!)) return false;
    p += 4 + buf.readUIntBE(p + 1, 3);
  }
  return true;
}

export class TlsSession {
  readonly info: TlsInfo = newTlsInfo();
  private readonly sides = [new Direction('client'), new Direction('broker')] as const;
  private clientRandom: Buffer | null = null;
  private suite: CipherSuite | null = null;
  private tls13 = false;
  private serverHelloDone = false;
  private secrets: ReadonlyMap<string, Buffer> | undefined;
  /** TLS 1.2 keys, installed at each side's ChangeCipherSpec. */
  private pending12: [RecordCipher, RecordCipher] | null = null;
  private noted = false;
  /** TLS 1.3: the ClientHello offered 0-RTT early data; records of it seen (not decrypted) and their bytes. */
  private earlyOffered = false;
  private earlyRecords = 0;
  private earlyBytes = 0;
  /** TLS 1.3: the client's Finished was read (its records after it are under its application secret). */
  private clientFinished = false;
  /** TLS 1.2: a renegotiation's ClientHello was read; its ServerHello brings the next keys. */
  private renegotiating = false;
  private frame = 0;
  private tsSec = 0;
  private tsNsec = 0;

  constructor(
    private readonly out: TlsOutput,
    /** Key logs given (or embedded in the capture); null when there are none at all. */
    private readonly keys: KeyLog | null,
  ) {}

  data(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    const d = this.sides[side];
    this.frame = frame;
    this.tsSec = tsSec;
    this.tsNsec = tsNsec;
    const end = off + len;
    if (d.resync !== null) {
      off = this.resyncData(side, d, buf, off, end);
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
        const length = this.checkHeader(side, d, buf, off);
        if (length === LOST) return;
        if (length === SKIPPED) {
          off += 5;
          continue;
        }
        if (!this.wanted(d, buf[off]!)) {
          this.skipRecord(d, length);
          off += 5;
          continue;
        }
        if (end - off >= 5 + length) {
          this.record(side, d, buf, off, buf, off + 5, length);
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
        const length = this.checkHeader(side, d, d.header, 0);
        if (length === LOST) return;
        if (length === SKIPPED) {
          d.headerLen = 0;
          continue;
        }
        if (!this.wanted(d, d.header[0]!)) {
          d.headerLen = 0;
          this.skipRecord(d, length);
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
        this.record(side, d, d.header, 0, body, 0, body.length);
      }
    }
  }

  /**
   * `bytes` of this side's stream are missing. A record whose header was read loses its body and
   * is skipped; decryption carries on with the next record, one sequence number on. A gap over a
   * record header loses the record boundaries.
   */
  gap(side: TlsSide, bytes: number, frame: number): void {
    const d = this.sides[side];
    if (d.resync !== null) {
      this.gapInResync(side, d, bytes, frame);
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
      this.loseSync(side, d, frame, bytes, past);
      return;
    }
    if (d.headerLen === 5) {
      const left = d.body!.length - d.bodyLen;
      const type = d.header[0]!;
      if (bytes > left) {
        this.loseSync(side, d, frame, bytes, 5 + d.bodyLen + bytes);
        return;
      }
      d.headerLen = 0;
      d.body = null;
      d.skip = left - bytes;
      this.lostRecord(side, d, type, d.header.readUInt16BE(3), frame, `a TLS record from the ${d.name} lost ${bytes} bytes to a capture gap and was skipped`);
      return;
    }
    this.loseSync(side, d, frame, bytes, d.headerLen + bytes);
  }

  /**
   * A further gap while kcid looks for a record after an earlier one: records already whole in
   * the bytes kept are tried first (one that decrypts ends the search, and this gap is then read as
   * any other); otherwise what was kept, and the gap, are added to the bytes lost, and the search
   * goes on past the gap with a window of sequence numbers that covers both.
   */
  private gapInResync(side: TlsSide, d: Direction, bytes: number, frame: number): void {
    for (let at = this.findRecord(side, d, true); at >= 0; at = d.resync === null ? -1 : this.findRecord(side, d, true)) {
      this.resumeAt(side, d, at);
    }
    if (d.resync === null) {
      this.gap(side, bytes, frame);
      return;
    }
    d.lostBytes += d.resyncLen + bytes;
    d.resyncLen = 0;
    d.scanFrom = 0;
    d.seqWindow = Math.min(MAX_SEQ_WINDOW, Math.ceil(d.lostBytes / MIN_PROTECTED_RECORD) + 1);
  }

  /** The connection ended: a record cut off, and failures not yet reported, are noted. */
  end(): void {
    for (const side of [0, 1] as const) {
      const d = this.sides[side];
      // Still looking for a record after a gap: candidates that wanted bytes past the end were not records.
      for (let at = d.resync === null ? -1 : this.findRecord(side, d, true); at >= 0; at = d.resync === null ? -1 : this.findRecord(side, d, true)) {
        this.resumeAt(side, d, at);
      }
      if (d.resync !== null) this.giveUpResync(side, d, null);
      // A connection kcid cannot decrypt already has its one note; a record cut short there loses nothing more.
      if (d.headerLen > 0 && !d.lost && this.info.decrypted) {
        const what = d.headerLen < 5 ? `${d.headerLen} bytes of a record header` : `${5 + d.bodyLen} of its ${5 + d.body!.length} bytes`;
        this.out.note('tls-record', side, this.frame, `a TLS record from the ${d.name} is incomplete when the connection ends: ${what} were seen`);
      }
      if (d.authFailures > 1) {
        this.out.note('tls-auth', side, this.frame, `${d.authFailures - 1} more TLS records from the ${d.name} failed authentication`);
      }
    }
    if (this.earlyRecords > 0 && this.info.decrypted) {
      const n = this.earlyRecords;
      this.out.note(
        'tls-record',
        0,
        this.frame,
        `the client sent ${n} TLS 1.3 0-RTT early data record${n === 1 ? '' : 's'} (${this.earlyBytes.toLocaleString('en-US')} bytes): kcid does not decrypt early data (CLIENT_EARLY_TRAFFIC_SECRET), so requests in it are not seen`,
      );
    }
    if (!this.noted) this.noteUnreadable(this.info.version === null ? 'the handshake is not complete in the capture' : null);
  }

  // ---- records --------------------------------------------------------------------------------

  /** The record's length from its header; LOST when the header is not TLS, SKIPPED for an oversize record. */
  private checkHeader(side: TlsSide, d: Direction, buf: Buffer, off: number): number {
    const type = buf[off]!;
    const length = buf.readUInt16BE(off + 3);
    if (type < CHANGE_CIPHER_SPEC || type > 24 || buf[off + 1] !== 3 || buf[off + 2]! > 4) {
      d.lost = true;
      this.out.note(
        'tls-record',
        side,
        this.frame,
        `bytes from the ${d.name} are not a TLS record (starting ${buf.subarray(off, off + 5).toString('hex')}): the rest of this direction is not read`,
      );
      return LOST;
    }
    const limit = this.tls13 ? MAX_RECORD_BYTES : MAX_RECORD_BYTES_12;
    if (length > limit) {
      this.out.note(
        'tls-record',
        side,
        this.frame,
        `a TLS record from the ${d.name} is ${length} bytes, more than the ${limit.toLocaleString('en-US')} ${this.tls13 ? 'TLS 1.3' : this.info.version === null ? 'TLS' : 'TLS 1.2'} allows: skipped`,
      );
      if (d.cipher !== null && d.protectedFromHere) {
        d.cipher.seq++;
        d.lostRecords++;
        this.out.plaintextGap(side, d.cipher.plaintextLength(length), this.frame);
      }
      this.handshakeLost(d);
      d.skip = length;
      return SKIPPED;
    }
    return length;
  }

  /** Whether a record of this type needs its body: protected records without a cipher are skipped by length. */
  private wanted(d: Direction, type: number): boolean {
    if (!d.protectedFromHere) return true;
    if (this.tls13 && type !== APPLICATION_DATA) return type !== CHANGE_CIPHER_SPEC;
    return d.cipher !== null;
  }

  /** A record kcid does not read: a TLS 1.3 ChangeCipherSpec (no sequence number), or one it has no keys for. */
  private skipRecord(d: Direction, length: number): void {
    d.skip = length;
  }

  private record(side: TlsSide, d: Direction, header: Buffer, hoff: number, body: Buffer, off: number, len: number): void {
    let type = header[hoff]!;
    if (type === CHANGE_CIPHER_SPEC) {
      // TLS 1.3's compatibility ChangeCipherSpec (RFC 8446 D.4) means nothing, also after a HelloRetryRequest.
      if (!this.tls13 && this.info.version !== null) this.changeCipherSpec(side, d);
      return;
    }
    let data = body;
    let start = off;
    let length = len;
    const encrypted = d.protectedFromHere && (!this.tls13 || type === APPLICATION_DATA);
    if (encrypted) {
      const cipher = d.cipher;
      if (cipher === null) return;
      let opened = cipher.open(header, hoff, body, off, len);
      if (opened === null && this.tls13) {
        // A lost Finished or KeyUpdate: the record may be under the next key stage (RFC 8446 §4.4.4, §4.6.3).
        const next = this.nextCipher(side, d);
        if (next !== null) {
          const seq = next.findSequence(header, hoff, body, off, len, 1 + Math.min(d.lostRecords, MAX_NEXT_STAGE_WINDOW - 1));
          if (seq >= 0) {
            next.seq = seq;
            opened = next.open(header, hoff, body, off, len);
            this.advanceStage(side, d);
          }
        }
      }
      if (opened !== null) d.lostRecords = 0;
      if (opened === null && side === 0 && this.tls13 && this.earlyOffered && !this.clientFinished) {
        // Before its Finished, a client that offered 0-RTT may still send early data (and
        // EndOfEarlyData) under its early traffic secret, not the handshake secret (RFC 8446 §4.5):
        // such a record takes no sequence number of the handshake secret's.
        cipher.seq--;
        this.earlyData(len);
        return;
      }
      if (opened === null) {
        this.lostRecord(
          side,
          d,
          type,
          len,
          d.recordFrame,
          `a TLS record from the ${d.name} failed authentication (frame ${this.frame}): wrong key, or the capture is damaged; skipped`,
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
      if (encrypted && length > 0) this.out.plaintext(side, data, start, length, this.frame, this.tsSec, this.tsNsec);
      // Application data from the client before the ServerHello: TLS 1.3 0-RTT early data (RFC 8446 §2.3).
      else if (!encrypted && side === 0 && this.earlyOffered) this.earlyData(len);
    } else if (type === HANDSHAKE) {
      this.handshakeBytes(side, d, data, start, length, encrypted);
    } else if (type === ALERT) {
      this.alert(side, d, data, start, length, encrypted);
    }
  }

  /** A record of 0-RTT early data: its plaintext is lost to the Kafka stream, and counted for the note at the end. */
  private earlyData(len: number): void {
    this.earlyRecords++;
    this.earlyBytes += len;
    this.out.plaintextGap(0, Math.max(0, len - 17), this.frame);
  }

  /** A record that could not be read: noted (failures once per direction, then counted), and its plaintext given up. */
  private lostRecord(side: TlsSide, d: Direction, type: number, length: number, frame: number, message: string, auth = false): void {
    const cipher = d.cipher;
    if (cipher !== null && d.protectedFromHere && (!this.tls13 || type === APPLICATION_DATA)) {
      if (!auth) {
        cipher.seq++;
        d.lostRecords++;
      }
      this.out.plaintextGap(side, cipher.plaintextLength(length), frame);
    }
    // A handshake message this record carried part of is not rebuilt around the hole.
    this.handshakeLost(d);
    if (auth) {
      if (d.authFailures++ > 0) return;
      this.out.note('tls-auth', side, frame, message);
      return;
    }
    this.out.note('tls-record', side, frame, message);
  }

  /**
   * A gap of `bytes` took the record boundaries; `lost` is how many bytes of the stream since the
   * last record accounted for are gone with it (the record in progress, partly read, included).
   */
  private loseSync(side: TlsSide, d: Direction, frame: number, bytes: number, lost: number): void {
    d.lost = true;
    d.headerLen = 0;
    d.body = null;
    d.skip = 0;
    this.handshakeLost(d);
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
      this.out.note('tls-record', side, frame, `a capture gap of ${bytes} bytes took TLS record boundaries from the ${d.name}: kcid resumes at the next record that decrypts`);
      return;
    }
    if (d.cipher !== null || !d.protectedFromHere) {
      this.out.note('tls-record', side, frame, `a capture gap of ${bytes} bytes took TLS record boundaries from the ${d.name}: the rest of this direction is not read`);
    }
  }

  /** Bytes after a gap, while looking for the next record; returns where normal reading resumes in `buf`. */
  private resyncData(side: TlsSide, d: Direction, buf: Buffer, off: number, end: number): number {
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
      const at = this.findRecord(side, d, false);
      if (d.resync === null) return end; // given up
      if (at >= 0) {
        this.resumeAt(side, d, at);
        return off;
      }
      if (off >= end) return end;
    }
  }

  /**
   * The record at `at` of the resync buffer decrypts (the cipher is at its sequence number): the
   * loss is reported, then the record and what follows it are read as usual.
   */
  private resumeAt(side: TlsSide, d: Direction, at: number): void {
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
    if (plain > 0) this.out.plaintextGap(side, plain, this.frame);
    this.out.note(
      'tls-record',
      side,
      this.frame,
      `kcid found the ${d.name}'s TLS records again after the capture gap: ${records} record${records === 1 ? '' : 's'} (${lostBytes.toLocaleString('en-US')} bytes, ${plain.toLocaleString('en-US')} of plaintext) lost`,
    );
    this.record(side, d, r, at, r, at + 5, length);
    const rest = r.subarray(at + 5 + length, d.resyncLen);
    if (rest.length > 0) this.data(side, rest, 0, rest.length, this.frame, this.tsSec, this.tsNsec);
  }

  /** A whole record in the resync buffer that decrypts at one of the next sequence numbers (its cipher set to it), or -1. */
  private findRecord(side: TlsSide, d: Direction, final: boolean): number {
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
      const next = this.tls13 ? this.nextCipher(side, d) : null;
      if (next !== null) {
        const nseq = next.findSequence(r, p, r, p + 5, length, d.seqWindow);
        d.trials += d.seqWindow;
        if (nseq >= 0) {
          next.seq = nseq;
          this.advanceStage(side, d);
          d.stageChanged = true;
          return p;
        }
      }
      if (d.trials > MAX_RESYNC_TRIALS) {
        this.giveUpResync(side, d, `no TLS record from the ${d.name} decrypted after the capture gap: the rest of this direction is not read`);
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
  private giveUpResync(side: TlsSide, d: Direction, message: string | null): void {
    const cipher = d.cipher!;
    const plain = Math.max(1, d.lostBytes + d.resyncLen - cipher.recordOverhead());
    d.resync = null;
    d.lostBytes = 0;
    this.out.plaintextGap(side, plain, this.frame);
    if (message !== null) this.out.note('tls-record', side, this.frame, message);
  }

  /** Handshake bytes were lost: a message in progress is dropped, and reading starts again at a message start. */
  private handshakeLost(d: Direction): void {
    d.hs = null;
    d.hsLen = 0;
    d.hsLost = true;
  }

  /** TLS 1.3: the cipher of the stage after the current one (RFC 8446 §7.1-7.2), made once; null when there is none. */
  private nextCipher(side: TlsSide, d: Direction): RecordCipher | null {
    if (d.next !== null) return d.next;
    const suite = this.suite;
    if (suite === null) return null;
    let secret: Buffer | undefined;
    if (d.stage.kind === 'handshake') secret = this.secrets?.get(side === 0 ? 'CLIENT_TRAFFIC_SECRET_0' : 'SERVER_TRAFFIC_SECRET_0');
    else if (d.stage.kind === 'application' && d.secret !== null) secret = nextTrafficSecret(suite, d.secret);
    if (secret === undefined) return null;
    d.nextSecret = secret;
    d.next = new RecordCipher(suite, tls13Keys(suite, secret));
    return d.next;
  }

  /** The direction moves to the next key stage, whose cipher (made by nextCipher) is at its sequence number. */
  private advanceStage(side: TlsSide, d: Direction): void {
    const stage = d.stage;
    d.stage = stage.kind === 'application' ? { kind: 'application', generation: stage.generation + 1 } : { kind: 'application', generation: 0 };
    d.cipher = d.next;
    d.secret = d.nextSecret;
    d.next = null;
    d.nextSecret = null;
    if (side === 0) this.clientFinished = true;
  }

  private changeCipherSpec(side: TlsSide, d: Direction): void {
    d.protectedFromHere = true;
    d.cipher = this.pending12 === null ? null : this.pending12[side];
    // An abbreviated handshake (RFC 5246 §7.3): the server's ChangeCipherSpec follows its ServerHello at once.
    if (side === 1 && !this.serverHelloDone) this.info.resumed = true;
  }

  private alert(side: TlsSide, d: Direction, data: Buffer, off: number, len: number, encrypted: boolean): void {
    if (len < 2) return;
    const level = data[off]!;
    const description = data[off + 1]!;
    if (description === 0) return; // close_notify: the normal end
    const how = level === 2 ? 'fatal' : level === 1 ? 'warning' : `level ${level}`;
    this.out.note('tls-alert', side, this.frame, `TLS alert from the ${d.name}: ${how} ${alertName(description)} (${description})${encrypted ? '' : ', in the clear'}`);
  }

  // ---- handshake ------------------------------------------------------------------------------

  private handshakeBytes(side: TlsSide, d: Direction, buf: Buffer, off: number, len: number, encrypted: boolean): void {
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
        this.out.note('tls-record', side, this.frame, `a ${length}-byte TLS handshake message from the ${d.name} is larger than kcid reads`);
        return;
      }
      if (end - start < 4 + length) break;
      try {
        this.handshakeMessage(side, d, data[start]!, data, start + 4, start + 4 + length, encrypted);
      } catch (e) {
        if (!(e instanceof TlsDecodeError)) throw e;
        const type = data[start]!;
        if (type === HS_CLIENT_HELLO || type === HS_SERVER_HELLO) {
          // Without the hellos there is nothing to decrypt with: one note for the connection says it.
          d.hsBroken = true;
          d.hs = null;
          d.hsLen = 0;
          this.noteUnreadable(`its ${type === HS_CLIENT_HELLO ? 'ClientHello' : 'ServerHello'} does not parse (${e.message})`);
          return;
        }
        this.out.note('tls-record', side, this.frame, `a TLS handshake message (type ${type}) from the ${d.name} does not parse: ${e.message}`);
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

  private handshakeMessage(side: TlsSide, d: Direction, type: number, buf: Buffer, off: number, end: number, encrypted: boolean): void {
    const info = this.info;
    if (type === HS_CLIENT_HELLO && side === 0 && encrypted && !this.tls13) {
      // TLS 1.2 renegotiation (RFC 5246 §7.4.1.2): a new handshake under the current keys, with its own client random.
      this.clientRandom = parseClientHello(buf, off, end).random;
      this.renegotiating = true;
    } else if (type === HS_SERVER_HELLO && side === 1 && encrypted && this.renegotiating) {
      const hello = parseServerHello(buf, off, end);
      this.renegotiating = false;
      this.renegotiated(hello.cipher, hello.random, hello.encryptThenMac, hello.version);
    } else if (type === HS_HELLO_REQUEST) {
      // The server asks the client to renegotiate; the ClientHello that may follow says more.
    } else if (type === HS_CLIENT_HELLO && side === 0 && !encrypted) {
      const hello = parseClientHello(buf, off, end);
      this.clientRandom = hello.random;
      this.earlyOffered = hello.earlyData;
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
      this.tls13 = hello.version === 0x0304;
      if (this.tls13) {
        info.resumed = hello.psk;
        // Both directions' records are protected from here on (RFC 8446 §2), ChangeCipherSpec aside.
        this.sides[0].protectedFromHere = true;
        this.sides[1].protectedFromHere = true;
      }
      this.keysFor(hello.cipher, hello.random, hello.encryptThenMac, hello.version);
    } else if (type === HS_CERTIFICATE && side === 1 && info.certificate === null) {
      info.certificate = parseCertificate(buf, off, end, this.tls13);
    } else if (type === HS_SERVER_HELLO_DONE && side === 1) {
      this.serverHelloDone = true;
    } else if (type === HS_FINISHED && this.tls13 && encrypted && d.stage.kind === 'handshake') {
      // RFC 8446 §7.1: after its Finished, each side sends with its application traffic secret. A
      // Finished under an application secret is post-handshake authentication's (§4.6.2): it
      // changes no keys.
      if (side === 0) this.clientFinished = true;
      this.install13(side, side === 0 ? 'CLIENT_TRAFFIC_SECRET_0' : 'SERVER_TRAFFIC_SECRET_0');
    } else if (type === HS_KEY_UPDATE && this.tls13 && encrypted && d.stage.kind === 'application' && this.nextCipher(side, d) !== null) {
      // RFC 8446 §4.6.3: the sender's next records use the next generation of its secret (§7.2).
      d.next!.seq = 0;
      this.advanceStage(side, d);
    }
  }

  /** At the ServerHello: the secrets for this client random, and the keys they give. */
  private keysFor(code: number, serverRandom: Buffer, encryptThenMac: boolean, version: number): void {
    const suite = CIPHER_SUITES.get(code);
    this.secrets = this.clientRandom === null ? undefined : this.keys?.lookup(this.clientRandom);
    if (version < 0x0303) {
      // RFC 2246 / 4346: a PRF of MD5 and SHA-1, and in TLS 1.0 CBC IVs chained from the previous record.
      this.noteUnreadable(`kcid does not decrypt ${versionName(version)} (only TLS 1.2 and 1.3)`);
      return;
    }
    if (suite === undefined || suite.tls13 !== this.tls13) {
      this.noteUnreadable(`kcid does not decrypt cipher suite ${cipherSuiteName(code)}`);
      return;
    }
    this.suite = suite;
    const s = this.secrets;
    if (this.tls13) {
      if (s?.has('CLIENT_HANDSHAKE_TRAFFIC_SECRET') !== true || !s.has('SERVER_HANDSHAKE_TRAFFIC_SECRET')) return this.noteUnreadable(null);
      this.install13(0, 'CLIENT_HANDSHAKE_TRAFFIC_SECRET');
      this.install13(1, 'SERVER_HANDSHAKE_TRAFFIC_SECRET');
      return;
    }
    const master = s?.get('CLIENT_RANDOM');
    if (master === undefined || master.length !== 48 || this.clientRandom === null) return this.noteUnreadable(null);
    const [client, server] = tls12Keys(suite, master, this.clientRandom, serverRandom);
    this.pending12 = [new RecordCipher(suite, client, encryptThenMac), new RecordCipher(suite, server, encryptThenMac)];
    this.info.decrypted = true;
    this.noted = true;
  }

  /** The ServerHello of a TLS 1.2 renegotiation: the keys its ChangeCipherSpecs switch to. */
  private renegotiated(code: number, serverRandom: Buffer, encryptThenMac: boolean, version: number): void {
    const suite = CIPHER_SUITES.get(code);
    const master = this.clientRandom === null ? undefined : this.keys?.lookup(this.clientRandom)?.get('CLIENT_RANDOM');
    const random = this.clientRandom === null ? '' : ` (client random ${this.clientRandom.subarray(0, 8).toString('hex')})`;
    this.info.cipher = cipherSuiteName(code);
    if (suite === undefined || suite.tls13 || version !== 0x0303 || master?.length !== 48 || this.clientRandom === null) {
      this.pending12 = null;
      const why = suite === undefined || suite.tls13 || version !== 0x0303 ? `kcid does not decrypt ${versionName(version)} ${cipherSuiteName(code)}` : 'the key logs have no CLIENT_RANDOM line for it';
      this.out.note('tls-record', 1, this.frame, `the TLS session was renegotiated${random}: ${why}; the rest of the connection is not read`);
      return;
    }
    const [client, server] = tls12Keys(suite, master, this.clientRandom, serverRandom);
    this.pending12 = [new RecordCipher(suite, client, encryptThenMac), new RecordCipher(suite, server, encryptThenMac)];
  }

  private install13(side: TlsSide, label: string): void {
    const d = this.sides[side];
    const secret = this.secrets?.get(label);
    if (secret === undefined || this.suite === null) {
      d.cipher = null;
      if (this.secrets !== undefined && d.secret !== null) {
        this.out.note('tls', side, this.frame, `the key logs have no ${label} for client random ${this.info.clientRandom}: the rest of the ${d.name}'s traffic is not read`);
      }
      this.info.decrypted = false;
      d.secret = null;
      d.stage = NO_STAGE;
      d.next = null;
      return;
    }
    d.secret = secret;
    d.stage = label.endsWith('_0') ? { kind: 'application', generation: 0 } : HANDSHAKE_STAGE;
    d.next = null;
    d.nextSecret = null;
    d.cipher = new RecordCipher(this.suite, tls13Keys(this.suite, secret));
    if (side === 1 && label === 'SERVER_HANDSHAKE_TRAFFIC_SECRET') {
      this.info.decrypted = true;
      this.noted = true;
    }
  }

  /** The one note of a connection kcid cannot decrypt, naming the key log line it lacks. */
  private noteUnreadable(why: string | null): void {
    if (this.noted) return;
    this.noted = true;
    const info = this.info;
    const what = [info.version ?? 'TLS', info.cipher].filter((x) => x !== null).join(' ');
    const random = info.clientRandom === null ? '' : `, client random ${info.clientRandom}`;
    const reason = why ?? (this.keys === null || this.keys.sources.length === 0 ? 'no key log given (--tls-keylog)' : 'no key for it in the key logs');
    this.out.note('tls', 0, this.frame, `${what} connection${random}: ${reason}; its Kafka contents cannot be analysed`);
  }
}
