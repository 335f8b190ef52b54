/**
 * A Kafka conversation over TLS: the TLS session's plaintext goes into the conversation's own
 * request and response framers, and its notes become the conversation's notes.
 *
 * On a port not known to be Kafka, a connection whose client starts with a TLS handshake is held
 * undecided (the link "pending"): the session reads the handshake and, when the key logs have its
 * client random, decrypts; the first plaintext the client sends is asked the same question as a
 * plaintext connection on an unknown port (does a Kafka request start here?). Kafka: the
 * conversation starts, and what the link held (the plaintext so far, the session's notes) is handed
 * on in order. Not Kafka: the connection is ignored. Without keys, the connection is Kafka when its
 * broker port is one where Kafka was already detected (in plaintext or decrypted) when its keys turn
 * out missing (at the ServerHello), or at its end when the handshake never completed; otherwise it
 * is ignored, like any unknown port's traffic that is not Kafka.
 */
import { TlsSession, type TlsNoteKind, type TlsOutput, type TlsSide } from '../tls/session.js';
import type { KeyLog } from '../tls/keylog.js';
import { IMPLAUSIBLE, PLAUSIBLE } from './framer.js';
import { plausibleRequest, PROBE_BYTES } from './detect.js';
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
  /** Kafka was detected on this connection's broker port (plaintext or decrypted, in this capture so far). */
  readonly brokerPortIsKafka: boolean;
  readonly maxFrameBytes: number;
}

/** Notes a pending link holds at most (a session notes a handful; a hostile stream could note more). */
const MAX_HELD_NOTES = 64;
/** Pieces of plaintext (and gaps) a pending link holds at most, as the plaintext probe does. */
const MAX_HELD_PIECES = 1024;

type Held =
  | { side: TlsSide; bytes: Buffer; frame: number; tsSec: number; tsNsec: number; gap: 0 }
  | { side: TlsSide; bytes: null; frame: number; tsSec: number; tsNsec: number; gap: number };

class Link implements TlsOutput {
  /** Undecided (an unknown port): plaintext and notes are held until the client's plaintext says Kafka or not. */
  private pending: { owner: TlsProbeOwner; held: Held[]; kept: [number, number]; notes: StreamNote[] } | null = null;

  constructor(
    private readonly conn: KafkaConnection & PlaintextSink,
    private readonly listener: KafkaListener,
    owner: TlsProbeOwner | null,
  ) {
    if (owner !== null) this.pending = { owner, held: [], kept: [0, 0], notes: [] };
  }

  /** Not Kafka: whatever the session still hands over is dropped. */
  private dropped = false;

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
    const keep = Math.min(len, PROBE_BYTES - p.kept[side]);
    if (keep > 0) {
      p.held.push({ side, bytes: Buffer.from(buf.subarray(off, off + keep)), frame, tsSec, tsNsec, gap: 0 });
      p.kept[side] += keep;
    }
    if (side === 0) this.judge();
    // Still undecided with a full probe's worth of the server's plaintext: the client never said Kafka.
    if (this.pending !== null && p.kept[1] >= PROBE_BYTES) this.notKafka();
    if (this.pending === null && keep < len) this.plaintext(side, buf, off + keep, len - keep, frame, tsSec, tsNsec);
  }

  plaintextGap(side: TlsSide, bytes: number, frame: number): void {
    if (bytes <= 0 || this.dropped) return;
    const p = this.pending;
    if (p === null) {
      this.conn.plaintextGap(side, bytes, frame);
      return;
    }
    const { tsSec, tsNsec } = this.conn.now;
    p.held.push({ side, bytes: null, frame, tsSec, tsNsec, gap: bytes });
    // Gaps cost no bytes, but each is a piece held: a stream of them must not grow the link without end.
    if (p.held.length >= MAX_HELD_PIECES) this.end();
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
    if (kind === 'tls') {
      if (p.owner.brokerPortIsKafka) this.kafka();
      else this.notKafka();
    }
  }

  /** The connection ended undecided: Kafka if its plaintext or else its port says so (the session's notes are in by now). */
  end(): void {
    if (this.pending === null) return;
    this.judge();
    const p = this.pending;
    if (p === null) return;
    if (p.owner.brokerPortIsKafka) this.kafka();
    else this.notKafka();
  }

  /** Does the client's plaintext so far (up to its first gap) start with a Kafka request? Decides when it can tell. */
  private judge(): void {
    const p = this.pending!;
    const parts: Buffer[] = [];
    for (const h of p.held) {
      if (h.side !== 0) continue;
      if (h.bytes === null) break;
      parts.push(h.bytes);
    }
    if (parts.length === 0) return;
    const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    const v = plausibleRequest(joined, 0, Math.min(joined.length, PROBE_BYTES), true, p.owner.maxFrameBytes);
    if (v === PLAUSIBLE) this.kafka();
    else if (v === IMPLAUSIBLE || joined.length >= PROBE_BYTES) this.notKafka();
  }

  private kafka(): void {
    const p = this.pending;
    if (p === null) return;
    this.pending = null;
    p.owner.tlsIsKafka();
    for (const n of p.notes) this.listener.note(this.conn, n);
    for (const h of p.held) {
      if (h.bytes !== null) this.conn.plaintext(h.side, h.bytes, 0, h.bytes.length, h.frame, h.tsSec, h.tsNsec);
      else this.conn.plaintextGap(h.side, h.gap, h.frame);
    }
  }

  private notKafka(): void {
    const p = this.pending;
    if (p === null) return;
    this.pending = null;
    this.dropped = true;
    p.owner.tlsIsNotKafka();
  }
}

export interface TlsLink {
  readonly session: TlsSession;
  /** Still deciding whether this connection (on a port not known to be Kafka) is Kafka. */
  readonly undecided: boolean;
  /** The connection ended: the session's end, then (still undecided) the port decides. */
  end(): void;
}

/** TLS on a Kafka port (owner null), or on a port Kafka may be detected on (owner: the undecided conversation). */
export function startTls(conn: KafkaConnection & PlaintextSink, listener: KafkaListener, keys: KeyLog | null, owner: TlsProbeOwner | null = null): TlsLink {
  const link = new Link(conn, listener, owner);
  const session = new TlsSession(link, keys);
  let ended = false;
  return {
    session,
    get undecided() {
      return link.undecided;
    },
    end() {
      if (ended) return;
      ended = true;
      session.end();
      link.end();
    },
  };
}
