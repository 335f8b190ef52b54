/**
 * TCP reassembly: segments in, per connection two ordered byte streams out (with gaps where
 * the capture lost bytes), connection lifetimes decided from SYN/FIN/RST, idleness and limits.
 */

import { formatAddress } from '../net/address.js';
import { TcpFlag, type TcpSegment } from '../net/types.js';
import { Conn, LinkedList, Tombstone, type EndReason } from './connection.js';
import type { BufferLimits } from './half-stream.js';
import { seqAdd, seqDiff } from './seq.js';
import { ConnTable } from './table.js';
import type { ConnectionFactory, Direction, Endpoint, ReassemblyOptions, ReassemblyStats } from './types.js';

const DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_BUFFERED_SEGMENTS = 4096;
const DEFAULT_MAX_CONNECTIONS = 100_000;
const DEFAULT_IDLE_TIMEOUT_SEC = 600;
const DEFAULT_MAX_RECENTLY_CLOSED = 10_000;
/** IPv4 address texts kept for reuse; the cache starts over beyond this. */
const MAX_ADDRESS_TEXTS = 65_536;

/** Ports from here up are the IANA dynamic range (RFC 6335 §6) that clients' ephemeral ports mostly come from. */
const EPHEMERAL_PORT_MIN = 32768;

const { FIN, SYN, RST, ACK } = TcpFlag;

/**
 * Without a SYN, which side is the client (A)? Not the side on a Kafka port, else not the
 * side on a well-known-looking port, else the first packet's source.
 */
export function sourceIsClient(srcPort: number, dstPort: number, kafkaPorts: ReadonlySet<number>): boolean {
  const srcKafka = kafkaPorts.has(srcPort);
  if (srcKafka !== kafkaPorts.has(dstPort)) return !srcKafka;
  const srcEphemeral = srcPort >= EPHEMERAL_PORT_MIN;
  if (srcEphemeral !== dstPort >= EPHEMERAL_PORT_MIN) return srcEphemeral;
  return true;
}

/**
 * A segment for an idle-retired connection that carries nothing new: no payload, or a keep-alive's one
 * old byte (RFC 9293 §3.8.4), or bytes all below the stream's next sequence number; also any bare
 * FIN or RST. Anything else is the connection going on.
 */
function isOld(tombstone: Tombstone, s: TcpSegment, dir: Direction): boolean {
  const len = s.payloadLen + s.missingLen;
  if (len === 0) return true;
  const next = tombstone.next(dir);
  return next !== null && seqDiff(seqAdd(s.seq, len), next) <= 0;
}

/** RFC 7323 §2.3: the largest shift; assumed when the SYNs were not seen (the widest window). */
const MAX_WINDOW_SHIFT = 14;

/**
 * Would the receiver accept a RST that `dir`'s side sent with sequence number `seq`? RFC 9293
 * §3.10.7.4: only one in its receive window, [RCV.NXT, RCV.NXT + RCV.WND) (with a zero window only
 * RCV.NXT itself). kcid knows RCV.NXT from the receiver's acknowledgements (else from the bytes it
 * saw) and RCV.WND from its last advertisement, scaled as the SYNs agreed (RFC 7323 §2.2); a RST
 * between RCV.NXT and the bytes in flight is accepted too (the receiver may have got them). When the
 * capture has shown neither side's numbers, every RST is believed.
 */
function resetAcceptable(conn: Conn, dir: Direction, seq: number): boolean {
  const sender = conn.halves[dir];
  const receiver = conn.halves[1 - dir]!;
  if (!sender.started || receiver.window < 0) return true;
  let shift = MAX_WINDOW_SHIFT;
  if (sender.synScale >= 0 && receiver.synScale >= 0) shift = receiver.synScale;
  else if (sender.isn !== null && receiver.isn !== null) shift = 0; // RFC 7323: no scaling unless both SYNs ask
  const window = Math.max(receiver.window * 2 ** shift, 1);
  const low = sender.ackSeen ? sender.lastAck : sender.next;
  const off = seqDiff(seq, low);
  return off >= 0 && (off < window || seqDiff(seq, sender.next) <= 0);
}

export class Reassembler {
  readonly stats: ReassemblyStats = {
    connections: 0,
    duplicateSegments: 0,
    outOfOrderSegments: 0,
    gaps: 0,
    gapBytes: 0,
    retiredConnections: 0,
    ignoredSegments: 0,
    unattachedSegments: 0,
    ignoredResets: 0,
  };
  private readonly table = new ConnTable();
  /** Live connections, least recently active first. */
  private readonly live = new LinkedList<Conn>();
  /** What is left of closed connections, so that late segments start no ghost connection; oldest first. */
  private readonly recentlyClosed = new LinkedList<Tombstone>();
  /** Forgotten tombstones, buried again on the next closes (see Tombstone). */
  private readonly spareTombstones: Tombstone[] = [];
  private readonly kafkaPorts: ReadonlySet<number>;
  private readonly limits: BufferLimits;
  private readonly maxConnections: number;
  private readonly idleTimeoutSec: number;
  private readonly maxRecentlyClosed: number;
  private nextId = 1;
  /** IPv4 address texts by address (see addressText). */
  private readonly ipv4Texts = new Map<number, string>();
  /** Capture time: the latest packet second seen. Never goes back, so the live list is ordered by it. */
  private now = -Infinity;

  constructor(private readonly factory: ConnectionFactory, opts: ReassemblyOptions) {
    this.kafkaPorts = opts.kafkaPorts;
    this.limits = {
      maxBytes: opts.maxBufferedBytesPerDirection ?? DEFAULT_MAX_BUFFERED_BYTES,
      maxChunks: opts.maxBufferedSegmentsPerDirection ?? DEFAULT_MAX_BUFFERED_SEGMENTS,
    };
    this.maxConnections = Math.max(1, opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
    this.idleTimeoutSec = opts.idleTimeoutSec ?? DEFAULT_IDLE_TIMEOUT_SEC;
    this.maxRecentlyClosed = opts.maxRecentlyClosed ?? DEFAULT_MAX_RECENTLY_CLOSED;
  }

  get liveConnections(): number {
    return this.live.size;
  }

  segment(s: TcpSegment): void {
    if (s.tsSec > this.now) {
      this.now = s.tsSec;
      this.retireIdle();
    }
    const entry = this.table.find(s);
    if (entry === undefined) this.onNewTuple(s);
    else if (entry.tombstone) this.onRecentlyClosed(entry, s, this.table.dir);
    else this.onLive(entry, s, this.table.dir);
  }

  /** End of the capture: every live connection delivers what waits behind holes, then ends. */
  finish(): void {
    for (let c = this.live.head; c !== null; c = this.live.head) this.retire(c, 'capture-end');
    for (let c = this.recentlyClosed.head; c !== null; c = this.recentlyClosed.head) this.forget(c);
  }

  private onNewTuple(s: TcpSegment): void {
    const flags = s.flags;
    let sourceIsA: boolean;
    if (flags & RST) {
      this.stats.unattachedSegments++;
      return;
    }
    if (flags & SYN) {
      // The SYN's sender initiated; a SYN+ACK answers the initiator.
      sourceIsA = (flags & ACK) === 0;
    } else if (s.payloadLen + s.missingLen > 0) {
      sourceIsA = sourceIsClient(s.srcPort, s.dstPort, this.kafkaPorts);
    } else {
      // A bare ACK/FIN of an unknown connection carries nothing to reassemble.
      this.stats.unattachedSegments++;
      return;
    }
    const conn = this.open(s, sourceIsA, (flags & SYN) !== 0);
    this.onLive(conn, s, sourceIsA ? 0 : 1);
  }

  private open(s: TcpSegment, sourceIsA: boolean, synSeen: boolean): Conn {
    if (this.live.size >= this.maxConnections) {
      this.stats.retiredConnections++;
      this.retire(this.live.head!, 'evicted');
    }
    const src: Endpoint = { ip: this.addressText(s.data, s.srcAddrOff, s.ipVersion), port: s.srcPort };
    const dst: Endpoint = { ip: this.addressText(s.data, s.dstAddrOff, s.ipVersion), port: s.dstPort };
    const conn = new Conn(this.nextId++, sourceIsA ? src : dst, sourceIsA ? dst : src, synSeen,
      s.frame, s.tsSec, s.tsNsec, this.table.keyForLast(sourceIsA), this.limits, this.stats);
    conn.lastSec = this.now;
    this.table.add(conn);
    this.live.push(conn);
    this.stats.connections++;
    conn.handler = this.factory.open(conn);
    return conn;
  }

  /**
   * An address as text. A broker, and a client host, open many connections: IPv4 texts are kept
   * by address and made once, so that every connection of a host shares one string.
   */
  private addressText(buf: Buffer, off: number, ipVersion: 4 | 6): string {
    if (ipVersion === 6) return formatAddress(buf, off, 6);
    const key = (buf[off]! << 24) | (buf[off + 1]! << 16) | (buf[off + 2]! << 8) | buf[off + 3]!;
    let text = this.ipv4Texts.get(key);
    if (text === undefined) {
      text = formatAddress(buf, off, 4);
      if (this.ipv4Texts.size >= MAX_ADDRESS_TEXTS) this.ipv4Texts.clear();
      this.ipv4Texts.set(key, text);
    }
    return text;
  }

  private onLive(conn: Conn, s: TcpSegment, dir: Direction): void {
    conn.lastSec = this.now;
    this.live.moveToTail(conn);
    const flags = s.flags;
    if (flags & SYN) {
      const half = conn.halves[dir];
      if (half.isn === s.seq) {
        this.stats.duplicateSegments++; // a retransmitted SYN or SYN+ACK
        return;
      }
      if (half.started) {
        // A new SYN from a side that already has a stream: the 4-tuple was reused for a new
        // connection (the old one's end was not captured, or it is over).
        this.retire(conn, 'closed');
        this.onNewTuple(s);
        return;
      }
      half.syn(s.seq);
      half.synScale = s.windowScale;
      const peer = conn.halves[1 - dir]!;
      if (flags & ACK && !peer.started) peer.syn(seqAdd(s.ack, -1)); // a SYN+ACK acknowledges the peer's ISN + 1
    }
    if (flags & RST && !resetAcceptable(conn, dir, s.seq)) {
      // RFC 9293 §3.10.7.4 (RFC 5961 §3.2): a RST outside the receiver's window is dropped; both
      // peers carry on, and so does kcid. Its ACK field is not believed either.
      this.stats.ignoredResets++;
      return;
    }
    conn.halves[dir].window = s.window;
    if (conn.ignored) {
      this.onIgnored(conn, s, dir);
      return;
    }
    // The peer's acknowledgement first: the bytes it acknowledges were sent before this packet.
    if (flags & ACK) conn.halves[1 - dir]!.acked(s.ack, s.frame);
    if (flags & RST) {
      // No more data either way. A RST's payload is diagnostic text (RFC 9293 §3.5.3), not stream data.
      this.close(conn, 'reset');
      return;
    }
    const half = conn.halves[dir];
    const dataSeq = flags & SYN ? seqAdd(s.seq, 1) : s.seq;
    const dataLen = s.payloadLen + s.missingLen;
    if (dataLen > 0) {
      half.accept(dataSeq, s.data, s.payloadOff, s.payloadLen, s.missingLen, s.frame, s.tsSec, s.tsNsec);
    }
    if (flags & FIN) half.fin(seqAdd(dataSeq, dataLen), s.frame);
    if (conn.halves[0].ended && conn.halves[1].ended) this.close(conn, 'closed');
  }

  /** An ignored connection costs a counter, but still ends when its FINs or RST show. */
  private onIgnored(conn: Conn, s: TcpSegment, dir: Direction): void {
    this.stats.ignoredSegments++;
    if (s.flags & RST) {
      this.close(conn, 'reset');
      return;
    }
    if (s.flags & FIN) conn.halves[dir].ended = true;
    if (conn.halves[0].ended && conn.halves[1].ended) this.close(conn, 'closed');
  }

  /** A segment for a 4-tuple whose connection closed a short while ago. */
  private onRecentlyClosed(tombstone: Tombstone, s: TcpSegment, dir: Direction): void {
    if ((s.flags & (SYN | RST)) === SYN && tombstone.isn(dir) !== s.seq) {
      // A SYN with a new ISN: the 4-tuple is being reused (RFC 9293 §3.6.1, TIME-WAIT reuse).
      this.forget(tombstone);
      this.onNewTuple(s);
      return;
    }
    if (tombstone.idle && !isOld(tombstone, s, dir)) {
      const conn = tombstone.parked;
      if (conn === null) {
        // Forgotten already: it goes on as a connection whose start is unseen.
        this.forget(tombstone);
        this.onNewTuple(s);
        return;
      }
      // New bytes on a connection retired for idleness: the same connection goes on (same start,
      // same handler, one connection in the counts).
      tombstone.parked = null;
      this.recentlyClosed.remove(tombstone);
      this.table.replace(tombstone, conn);
      this.spareTombstones.push(tombstone);
      if (this.live.size >= this.maxConnections) {
        this.stats.retiredConnections++;
        this.retire(this.live.head!, 'evicted');
      }
      this.live.push(conn);
      this.onLive(conn, s, dir);
      return;
    }
    // The last ACK of the close, a late retransmission, a keep-alive: no ghost connection.
    this.stats.unattachedSegments++;
  }

  /**
   * Closed by the peers (FINs or RST), or retired when idle: ended, and its tombstone kept in its
   * place for a while (an idle one tells a keep-alive from the connection going on).
   */
  private close(conn: Conn, reason: EndReason): void {
    conn.finish(reason);
    this.live.remove(conn);
    const tombstone = (this.spareTombstones.pop() ?? new Tombstone()).bury(conn, this.now, reason === 'idle');
    this.table.replace(conn, tombstone);
    this.recentlyClosed.push(tombstone);
    if (this.recentlyClosed.size > this.maxRecentlyClosed) this.forget(this.recentlyClosed.head!);
  }

  /** Ended by kcid (idle, evicted, capture end, replaced): forgotten at once. */
  private retire(conn: Conn, reason: EndReason): void {
    this.live.remove(conn);
    this.table.remove(conn);
    conn.finish(reason);
  }

  private forget(tombstone: Tombstone): void {
    this.recentlyClosed.remove(tombstone);
    this.table.remove(tombstone);
    this.spareTombstones.push(tombstone);
    const parked = tombstone.parked;
    if (parked !== null) {
      tombstone.parked = null;
      parked.finish('idle');
    }
  }

  /**
   * Idle for --idle-timeout: out of the live list, its tombstone in its place, but kept whole for as
   * long as tombstones are (another timeout, within maxRecentlyClosed): in-sequence bytes after the
   * pause revive it, and it ends only when forgotten. Not Kafka, it is simply closed.
   */
  private park(conn: Conn): void {
    if (conn.ignored) {
      this.close(conn, 'idle');
      return;
    }
    conn.park();
    this.live.remove(conn);
    const tombstone = (this.spareTombstones.pop() ?? new Tombstone()).bury(conn, this.now, true, conn);
    this.table.replace(conn, tombstone);
    this.recentlyClosed.push(tombstone);
    if (this.recentlyClosed.size > this.maxRecentlyClosed) this.forget(this.recentlyClosed.head!);
  }

  /**
   * Run when capture time reaches a new second. Both lists are ordered by `lastSec` (it comes
   * from `now`, which never goes back), so only their heads need looking at.
   */
  private retireIdle(): void {
    const before = this.now - this.idleTimeoutSec;
    for (let c = this.live.head; c !== null && c.lastSec < before; c = this.live.head) {
      this.stats.retiredConnections++;
      this.park(c);
    }
    for (let c = this.recentlyClosed.head; c !== null && c.lastSec < before; c = this.recentlyClosed.head) {
      this.forget(c);
    }
  }
}
