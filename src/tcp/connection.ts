/**
 * One TCP connection as the reassembler keeps it: two half streams, the handler they feed,
 * and links into the reassembler's activity lists.
 */

import { type BufferLimits, HalfStream, type HalfStreamSink } from './half-stream.js';
import type { Direction, Endpoint, ReassemblyStats, StreamHandler, TcpConnection } from './types.js';

export type EndReason = Parameters<StreamHandler['end']>[0];

/**
 * Where a connection sits in the connection table (see table.ts), and which endpoint is A. A class,
 * like the other objects that live as long as a connection: V8 can put a long-lived object
 * literal on a slower allocation path (see Summary in analysis/analyzer.ts).
 */
export class TupleKey {
  constructor(
    /**
     * IPv4: the two endpoints, the smaller (address, port) first: addresses as signed 32-bit
     * integers, ports as (smaller's << 16) | larger's; whether A is the smaller one; the table's
     * hash of the three.
     */
    readonly loIp: number,
    readonly hiIp: number,
    readonly ports: number,
    readonly aIsLo: boolean,
    readonly hash: number,
    /** IPv6: each endpoint as 16 address bytes (latin1) + port char; '' for IPv4. */
    readonly key6: string,
    readonly a6: string,
  ) {}

  /** Takes `k`'s fields: only for a {@link Tombstone}'s own key, which is reused. */
  copy(k: TupleKey): void {
    const w = this as { -readonly [F in keyof TupleKey]: TupleKey[F] };
    w.loIp = k.loIp;
    w.hiIp = k.hiIp;
    w.ports = k.ports;
    w.aIsLo = k.aIsLo;
    w.hash = k.hash;
    w.key6 = k.key6;
    w.a6 = k.a6;
  }
}

export class Conn implements TcpConnection, HalfStreamSink {
  /** Tells a connection from a {@link Tombstone} in the connection table. */
  readonly tombstone = false;
  handler: StreamHandler | null = null;
  ignored = false;
  /** handler.end() was called. */
  ended = false;
  /** Capture second of the last packet (or of the close, for a tombstone). */
  lastSec = 0;
  /** Links in the reassembler's live list or recently-closed list (older = towards the head). */
  older: Conn | null = null;
  newer: Conn | null = null;
  readonly halves: readonly [HalfStream, HalfStream];

  constructor(
    readonly id: number,
    readonly a: Endpoint,
    readonly b: Endpoint,
    readonly synSeen: boolean,
    readonly firstFrame: number,
    readonly firstTsSec: number,
    readonly firstTsNsec: number,
    readonly key: TupleKey,
    limits: BufferLimits,
    stats: ReassemblyStats,
  ) {
    this.halves = [new HalfStream(this, 0, limits, stats), new HalfStream(this, 1, limits, stats)];
  }

  get live(): boolean {
    return !this.ignored && !this.ended;
  }

  ignore(): void {
    if (this.ignored) return;
    this.ignored = true;
    this.halves[0].release();
    this.halves[1].release();
  }

  data(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void {
    this.handler?.data(dir, buf, off, len, frame, tsSec, tsNsec);
  }

  gap(dir: Direction, bytes: number, frame: number): void {
    this.handler?.gap(dir, bytes, frame);
  }

  /** Idle: deliver what waits behind holes (as gaps, then the data); the streams stay where they are. */
  park(): void {
    this.halves[0].flush();
    this.halves[1].flush();
  }

  /** Deliver what waits behind holes (as gaps, then the data), then end the handler, once. */
  finish(reason: EndReason): void {
    if (this.ended) return;
    this.halves[0].flush();
    this.halves[1].flush();
    this.ended = true;
    this.halves[0].ended = true;
    this.halves[1].ended = true;
    this.halves[0].release();
    this.halves[1].release();
    const handler = this.handler;
    this.handler = null;
    handler?.end(reason);
  }
}

/**
 * What is left in the connection table of a connection its peers closed, for a while: enough to
 * tell a late segment (the last ACK, a retransmission: no ghost connection) from a new
 * connection on the same 4-tuple (a SYN with another ISN). A few numbers rather than the
 * connection, and reused: the reassembler keeps the last thousands of closes, long enough for V8
 * to move what it keeps to its old generation, so a tombstone made per close (and the
 * connection's key it held) was most of the old-generation garbage a capture of many short
 * connections left behind (13 MB of peak memory over 100,000 connections, measured). A
 * tombstone copies the key instead, and the reassembler buries the next closed connection in a
 * forgotten one.
 */
export class Tombstone {
  readonly tombstone = true;
  older: Tombstone | null = null;
  newer: Tombstone | null = null;
  /** The closed connection's key, copied: its own key dies with it. */
  readonly key = new TupleKey(0, 0, 0, false, 0, '', '');
  /** The SYN sequence numbers of A's and B's side, null where the capture did not show one. */
  private isnA: number | null = null;
  private isnB: number | null = null;
  /** The next sequence number of A's and B's stream, null where no byte of it was seen. */
  private nextA: number | null = null;
  private nextB: number | null = null;
  /** Retired by kcid for idleness rather than closed by its peers. */
  idle = false;
  /** An idle connection kept whole (its handler not yet ended), to go on if its bytes do. */
  parked: Conn | null = null;
  /** Capture second of the close. */
  lastSec = 0;

  /** Becomes the tombstone of `conn`, closed (or retired when idle) at capture second `sec`. */
  bury(conn: Conn, sec: number, idle: boolean, parked: Conn | null = null): this {
    this.parked = parked;
    this.key.copy(conn.key);
    const [a, b] = conn.halves;
    this.isnA = a.isn;
    this.isnB = b.isn;
    this.nextA = a.started ? a.next : null;
    this.nextB = b.started ? b.next : null;
    this.idle = idle;
    this.lastSec = sec;
    return this;
  }

  isn(dir: Direction): number | null {
    return dir === 0 ? this.isnA : this.isnB;
  }

  next(dir: Direction): number | null {
    return dir === 0 ? this.nextA : this.nextB;
  }
}

/** A member of a {@link LinkedList}: its links to its neighbours. */
interface Linked<T> {
  older: T | null;
  newer: T | null;
}

/** Intrusive doubly linked list, oldest at the head: O(1) touch and removal. */
export class LinkedList<T extends Linked<T>> {
  head: T | null = null;
  tail: T | null = null;
  size = 0;

  push(item: T): void {
    item.older = this.tail;
    item.newer = null;
    if (this.tail === null) this.head = item;
    else this.tail.newer = item;
    this.tail = item;
    this.size++;
  }

  remove(item: T): void {
    if (item.older === null) this.head = item.newer;
    else item.older.newer = item.newer;
    if (item.newer === null) this.tail = item.older;
    else item.newer.older = item.older;
    item.older = null;
    item.newer = null;
    this.size--;
  }

  moveToTail(item: T): void {
    if (this.tail === item) return;
    this.remove(item);
    this.push(item);
  }
}
