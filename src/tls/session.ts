/**
 * One TLS connection, both directions: TLS records reassembled from the TCP byte stream (a record
 * may span segments, a segment may carry several records), the handshake read in the clear
 * (ClientHello, ServerHello, HelloRetryRequest, the TLS 1.2 Certificate), and, with keys from a
 * key log, records decrypted and their application data handed on in order. Memory per direction
 * is one record in progress (at most 2^14 + 256 bytes of ciphertext in TLS 1.3, RFC 8446 §5.2;
 * 2^14 + 2048 in TLS 1.2, RFC 5246 §6.2.3) and one handshake message (bounded); records kcid cannot
 * decrypt are skipped by their length, not kept.
 *
 * The jobs are in their own modules: framing.ts (records from the byte stream, capture gaps and the
 * search after one), records.ts (one record opened and handed on), stages.ts (TLS 1.3 key stages),
 * handshake-reader.ts (handshake messages); state.ts holds what they share.
 *
 * TLS 1.3 key stages (RFC 8446 §7.1-7.2): each direction is under its handshake traffic secret, then
 * its application traffic secret of generation N. Finished moves the handshake stage to generation 0,
 * KeyUpdate moves generation N to N+1; a record that fails under the current stage is tried under the
 * next one (one step ahead, at its first sequence numbers), so a lost Finished or KeyUpdate does not
 * cost the rest of the direction.
 */
import { endOfStream, gap, readRecords } from './framing.js';
import type { KeyLog } from './keylog.js';
import { TlsState, type TlsOutput, type TlsSide } from './state.js';
import type { TlsInfo } from './types.js';
import { groupDigits } from '../base/digits.js';

export { MAX_HANDSHAKE_BYTES, MAX_RECORD_BYTES, MAX_RECORD_BYTES_12, type KeyStage, type TlsNoteKind, type TlsOutput, type TlsSide } from './state.js';

export class TlsSession {
  readonly info: TlsInfo;
  private readonly s: TlsState;

  constructor(out: TlsOutput, /** Key logs given (or embedded in the capture); null when there are none at all. */ keys: KeyLog | null) {
    this.s = new TlsState(out, keys);
    this.info = this.s.info;
  }

  data(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    readRecords(this.s, side, buf, off, len, frame, tsSec, tsNsec);
  }

  /**
   * `bytes` of this side's stream are missing. A record whose header was read loses its body and
   * is skipped; decryption carries on with the next record, one sequence number on. A gap over a
   * record header loses the record boundaries.
   */
  gap(side: TlsSide, bytes: number, frame: number): void {
    gap(this.s, side, bytes, frame);
  }

  /** The connection ended: a record cut off, and failures not yet reported, are noted. */
  end(): void {
    const s = this.s;
    for (const side of [0, 1] as const) {
      const d = s.sides[side];
      endOfStream(s, side, d);
      if (d.authFailures > 1) {
        s.out.note('tls-auth', side, s.frame, `${d.authFailures - 1} more TLS records from the ${d.name} failed authentication`);
      }
    }
    if (s.earlyRecords > 0 && s.info.decrypted) {
      const n = s.earlyRecords;
      s.out.note(
        'tls-record',
        0,
        s.frame,
        `the client sent ${n} TLS 1.3 0-RTT early data record${n === 1 ? '' : 's'} (${groupDigits(s.earlyBytes)} bytes): kcid does not decrypt early data (CLIENT_EARLY_TRAFFIC_SECRET), so requests in it are not seen`,
      );
    }
    if (!s.noted) s.noteUnreadable(s.info.version === null ? 'the handshake is not complete in the capture' : null);
  }
}
