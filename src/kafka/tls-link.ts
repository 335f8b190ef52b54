/**
 * A Kafka conversation over TLS: the TLS session's plaintext goes into the conversation's own
 * request and response framers, and its notes become the conversation's notes.
 */
import { TlsSession, type TlsNoteKind, type TlsOutput, type TlsSide } from '../tls/session.js';
import type { KeyLog } from '../tls/keylog.js';
import type { KafkaConnection, KafkaListener } from './events.js';

/** What the conversation offers the TLS session: its framers, one per direction. */
export interface PlaintextSink {
  plaintext(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void;
  plaintextGap(side: TlsSide, bytes: number, frame: number): void;
  /** The time of the packet being processed. */
  readonly now: { tsSec: number; tsNsec: number };
}

class Link implements TlsOutput {
  constructor(
    private readonly conn: KafkaConnection & PlaintextSink,
    private readonly listener: KafkaListener,
  ) {}
  plaintext(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    this.conn.plaintext(side, buf, off, len, frame, tsSec, tsNsec);
  }
  plaintextGap(side: TlsSide, bytes: number, frame: number): void {
    if (bytes > 0) this.conn.plaintextGap(side, bytes, frame);
  }
  note(kind: TlsNoteKind, side: TlsSide, frame: number, message: string): void {
    const { tsSec, tsNsec } = this.conn.now;
    this.listener.note(this.conn, { kind, frame, tsSec, tsNsec, from: side === 0 ? 'client' : 'broker', bytes: 0, message });
  }
}

export function startTls(conn: KafkaConnection & PlaintextSink, listener: KafkaListener, keys: KeyLog | null): TlsSession {
  return new TlsSession(new Link(conn, listener), keys);
}
