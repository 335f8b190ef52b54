/**
 * A Kafka conversation over TLS: the TLS session's plaintext goes into the conversation's own
 * request and response framers, and its notes become the conversation's notes.
 *
 * On a port not known to be Kafka, a connection whose client starts with a TLS handshake is held
 * undecided (the link "pending"): the session reads the handshake and, when the key logs have its
 * client random, decrypts; its plaintext goes to the same detector as a plaintext connection's bytes
 * on an unknown port (detect.ts KafkaDetector: does a Kafka request start here?). Kafka: the
 * conversation starts, and what the link held (the plaintext so far, the session's notes) is handed
 * on in order. Not Kafka: the connection is ignored. When the plaintext cannot tell (no keys, or a
 * gap at its start), the connection is Kafka when its broker port is one where Kafka was already
 * detected (in plaintext or decrypted): at once when its keys turn out missing (at the ServerHello),
 * when the detector is full, or at its end; otherwise it is ignored, like any unknown port's traffic
 * that is not Kafka.
 */
import { TlsSession, type TlsNoteKind, type TlsOutput, type TlsSide } from '../tls/session.js';
import type { KeyLog } from '../tls/keylog.js';
import type { DetectorReplay, KafkaDetector, Verdict } from './detect.js';
import type { KafkaConnection, KafkaListener, StreamNote } from './events.js';

/** What the conversation offers the TLS session: its framers, one per direction. */
export interface PlaintextSink {
  plaintext(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void;
  plaintextGap(side: TlsSide, bytes: number, frame: number): void;
  /** The time of the packet being processed. */
  readonly now: { tsSec: number; tsNsec: number };
}

/** What a pending link asks of its conversation. */
export interface TlsProbeOwner {
  /** The connection is Kafka: start the conversation (roles: the TLS client is the client). */
  tlsIsKafka(): void;
  /** The connection is not Kafka (or cannot be told): ignore it. */
  tlsIsNotKafka(): void;
}

/** Notes a pending link holds at most (a session notes a handful; a hostile stream could note more). */
const MAX_HELD_NOTES = 64;

class Link implements TlsOutput, DetectorReplay {
  /** Undecided (an unknown port): plaintext and notes are held until the detector says Kafka or not. */
  private pending: { owner: TlsProbeOwner; detector: KafkaDetector; notes: StreamNote[] } | null = null;
  /** Not Kafka: whatever the session still hands over is dropped. */
  private dropped = false;

  constructor(
    private readonly conn: KafkaConnection & PlaintextSink,
    private readonly listener: KafkaListener,
    owner: TlsProbeOwner | null,
    detector: KafkaDetector | null,
  ) {
    if (owner !== null && detector !== null) this.pending = { owner, detector, notes: [] };
  }

  get undecided(): boolean {
    return this.pending !== null;
  }

  plaintext(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    if (this.dropped) return;
    const p = this.pending;
    if (p === null) {
      this.conn.plaintext(side, buf, off, len, frame, tsSec, tsNsec);
      return;
    }
    const kept = p.detector.data(side, buf, off, len, frame, tsSec, tsNsec);
    this.act(p.detector.verdict());
    if (this.pending === null && kept < len) this.plaintext(side, buf, off + kept, len - kept, frame, tsSec, tsNsec);
  }

  plaintextGap(side: TlsSide, bytes: number, frame: number): void {
    if (bytes <= 0 || this.dropped) return;
    const p = this.pending;
    if (p === null) {
      this.conn.plaintextGap(side, bytes, frame);
      return;
    }
    const { tsSec, tsNsec } = this.conn.now;
    p.detector.gap(side, bytes, frame, tsSec, tsNsec);
    this.act(p.detector.verdict());
  }

  note(kind: TlsNoteKind, side: TlsSide, frame: number, message: string): void {
    if (this.dropped) return;
    const { tsSec, tsNsec } = this.conn.now;
    const n: StreamNote = { kind, frame, tsSec, tsNsec, from: side === 0 ? 'client' : 'broker', bytes: 0, message };
    const p = this.pending;
    if (p === null) {
      this.listener.note(this.conn, n);
      return;
    }
    if (p.notes.length < MAX_HELD_NOTES) p.notes.push(n);
    // The session cannot decrypt this connection: only its port can say it is Kafka, and says it now
    // (waiting for the end would keep reassembling every undecryptable TLS connection of the capture).
    if (kind === 'tls') this.act(p.detector.byPort());
  }

  /** A note of the connection's own (a capture gap): held with the session's while undecided. */
  hold(n: StreamNote): void {
    const p = this.pending;
    if (p === null) {
      if (!this.dropped) this.listener.note(this.conn, n);
    } else if (p.notes.length < MAX_HELD_NOTES) p.notes.push(n);
  }

  /** The connection ended undecided: Kafka if its plaintext or else its port says so (the session's notes are in by now). */
  end(): void {
    if (this.pending !== null) this.act(this.pending.detector.settle());
  }

  private act(v: Verdict): void {
    const p = this.pending;
    if (p === null || v === 'undecided') return;
    this.pending = null;
    if (v === 'not-kafka') {
      this.dropped = true;
      p.owner.tlsIsNotKafka();
      return;
    }
    p.owner.tlsIsKafka();
    for (const n of p.notes) this.listener.note(this.conn, n);
    p.detector.replay(this, v.client);
  }

  replayData(side: TlsSide, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    this.conn.plaintext(side, buf, off, len, frame, tsSec, tsNsec);
  }

  replayGap(side: TlsSide, bytes: number, frame: number): void {
    this.conn.plaintextGap(side, bytes, frame);
  }
}

export interface TlsLink {
  readonly session: TlsSession;
  /** Still deciding whether this connection (on a port not known to be Kafka) is Kafka. */
  readonly undecided: boolean;
  /** The connection ended: the session's end, then (still undecided) the port decides. */
  end(): void;
  /** A note of the connection's own (a capture gap), held with the session's while undecided. */
  note(n: StreamNote): void;
}

/**
 * TLS on a Kafka port (owner null), or on a port Kafka may be detected on (owner: the undecided
 * conversation, which hands over its detector, still empty, for the session's plaintext).
 */
export function startTls(conn: KafkaConnection & PlaintextSink, listener: KafkaListener, keys: KeyLog | null, owner: TlsProbeOwner | null = null, detector: KafkaDetector | null = null): TlsLink {
  const link = new Link(conn, listener, owner, detector);
  const session = new TlsSession(link, keys);
  let ended = false;
  return {
    session,
    get undecided() {
      return link.undecided;
    },
    note(n) {
      link.hold(n);
    },
    end() {
      if (ended) return;
      ended = true;
      session.end();
      link.end();
    },
  };
}
