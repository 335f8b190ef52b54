/**
 * One TCP connection as the reassembler keeps it: two half streams, the handler they feed,
 * and links into the reassembler's activity lists.
 */

import { type BufferLimits, HalfStream, type HalfStreamSink } from './half-stream.js';
import type { Direction, Endpoint, ReassemblyStats, StreamHandler, TcpConnection } from './types.js';

export type EndReason = Parameters<StreamHandler['end']>[0];

/** Where a connection sits in the connection table (see table.ts), and which endpoint is A. */
export interface TupleKey {
  /**
   * IPv4: the two endpoints, the smaller (address, port) first: addresses as signed 32-bit
   * integers, ports as (smaller's << 16) | larger's; whether A is the smaller one; the table's
   * hash of the three.
   */
  loIp: number;
  hiIp: number;
  ports: number;
  aIsLo: boolean;
  hash: number;
  /** IPv6: each endpoint as 16 address bytes (latin1) + port char; '' for IPv4. */
  key6: string;
  a6: string;
}

export class Conn implements TcpConnection, HalfStreamSink {
  handler: StreamHandler | null = null;
  ignored = false;
  /** handler.end() was called; a closed connection may linger in the table as a tombstone. */
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

/** Intrusive doubly linked list of connections, oldest at the head: O(1) touch and removal. */
export class ConnList {
  head: Conn | null = null;
  tail: Conn | null = null;
  size = 0;

  push(conn: Conn): void {
    conn.older = this.tail;
    conn.newer = null;
    if (this.tail === null) this.head = conn;
    else this.tail.newer = conn;
    this.tail = conn;
    this.size++;
  }

  remove(conn: Conn): void {
    if (conn.older === null) this.head = conn.newer;
    else conn.older.newer = conn.newer;
    if (conn.newer === null) this.tail = conn.older;
    else conn.newer.older = conn.older;
    conn.older = null;
    conn.newer = null;
    this.size--;
  }

  moveToTail(conn: Conn): void {
    if (this.tail === conn) return;
    this.remove(conn);
    this.push(conn);
  }
}
