/**
 * What the parts of a TLS session share: the consumer's interface, the record limits, one
 * direction's reading state (record in progress, gap search, key stage, handshake message in
 * progress) and the connection's state both directions read (the hellos' results, the secrets).
 * Plain data: the jobs are in framing.ts (records from the byte stream, gaps), records.ts (one
 * record), stages.ts (TLS 1.3 key stages) and handshake-reader.ts (handshake messages).
 */
import type { CipherSuite } from './keys.js';
import type { KeyLog } from './keylog.js';
import type { RecordCipher } from './record-cipher.js';
import { newTlsInfo, type TlsInfo } from './types.js';

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

export const CHANGE_CIPHER_SPEC = 20;
export const ALERT = 21;
export const HANDSHAKE = 22;
export const APPLICATION_DATA = 23;

/**
 * Which secret protects a direction's records (TLS 1.3, RFC 8446 §7.1): none yet (the clear
 * hellos, or TLS 1.2, whose ChangeCipherSpec is explicit), the handshake traffic secret, or the
 * application traffic secret of generation N (0 after Finished, N+1 after a KeyUpdate, §4.6.3).
 */
export type KeyStage = { readonly kind: 'none' } | { readonly kind: 'handshake' } | { readonly kind: 'application'; readonly generation: number };

export const NO_STAGE: KeyStage = { kind: 'none' };
export const HANDSHAKE_STAGE: KeyStage = { kind: 'handshake' };

export class Direction {
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

/** The connection's state: what the hellos said, the secrets for it, and the packet being read. */
export class TlsState {
  readonly info: TlsInfo = newTlsInfo();
  readonly sides = [new Direction('client'), new Direction('broker')] as const;
  clientRandom: Buffer | null = null;
  suite: CipherSuite | null = null;
  tls13 = false;
  serverHelloDone = false;
  secrets: ReadonlyMap<string, Buffer> | undefined;
  /** TLS 1.2 keys, installed at each side's ChangeCipherSpec. */
  pending12: [RecordCipher, RecordCipher] | null = null;
  noted = false;
  /** TLS 1.3: the ClientHello offered 0-RTT early data; records of it seen (not decrypted) and their bytes. */
  earlyOffered = false;
  earlyRecords = 0;
  earlyBytes = 0;
  /** TLS 1.3: the client's Finished was read (its records after it are under its application secret). */
  clientFinished = false;
  /** TLS 1.2: a renegotiation's ClientHello was read; its ServerHello brings the next keys. */
  renegotiating = false;
  frame = 0;
  tsSec = 0;
  tsNsec = 0;

  constructor(
    readonly out: TlsOutput,
    /** Key logs given (or embedded in the capture); null when there are none at all. */
    readonly keys: KeyLog | null,
  ) {}

  /** The one note of a connection kcid cannot decrypt, naming the key log line it lacks. */
  noteUnreadable(why: string | null): void {
    if (this.noted) return;
    this.noted = true;
    const info = this.info;
    const what = [info.version ?? 'TLS', info.cipher].filter((x) => x !== null).join(' ');
    const random = info.clientRandom === null ? '' : `, client random ${info.clientRandom}`;
    const reason = why ?? (this.keys === null || this.keys.sources.length === 0 ? 'no key log given (--tls-keylog)' : 'no key for it in the key logs');
    this.out.note('tls', 0, this.frame, `${what} connection${random}: ${reason}; its Kafka contents cannot be analysed`);
  }
}
