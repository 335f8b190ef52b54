/**
 * TCP stage: segments in, two ordered byte streams per connection out, with gaps reported.
 *
 * Side A is the initiator when the capture saw the SYN, else the side kcid guessed to be the
 * client (the side not on a known Kafka port, else the first packet's source). The Kafka stage
 * may decide the guess was wrong and swap the roles for reporting.
 */

export interface Endpoint {
  /** Printable address: dotted IPv4, or RFC 5952 IPv6 (without brackets). */
  ip: string;
  port: number;
}

/** 0: from side A (the presumed client) to side B; 1: from B to A. */
export type Direction = 0 | 1;

export interface TcpConnection {
  /** Sequential id in order of first packet, from 1. */
  readonly id: number;
  readonly a: Endpoint;
  readonly b: Endpoint;
  /** The capture saw this connection's SYN: A is certainly the initiator. */
  readonly synSeen: boolean;
  /** Frame and time of the first packet seen. */
  readonly firstFrame: number;
  readonly firstTsSec: number;
  readonly firstTsNsec: number;
  /** Stop reassembling this connection (not Kafka): later segments are counted and dropped. */
  ignore(): void;
}

/** Receives one connection's ordered bytes. `buf` is valid only during the call. */
export interface StreamHandler {
  data(dir: Direction, buf: Buffer, off: number, len: number, frame: number, tsSec: number, tsNsec: number): void;
  /** `bytes` bytes of the stream are missing here (never captured, or dropped to keep memory bounded). */
  gap(dir: Direction, bytes: number, frame: number): void;
  /** The connection ended (FIN/RST on both sides, retired when idle, or end of capture). */
  end(reason: 'closed' | 'reset' | 'idle' | 'evicted' | 'capture-end'): void;
}

export interface ConnectionFactory {
  /** A new connection was seen; return its handler. */
  open(conn: TcpConnection): StreamHandler;
}

export interface ReassemblyOptions {
  /** Ports known to be Kafka brokers (decides sides when the SYN was not captured). */
  kafkaPorts: ReadonlySet<number>;
  /** Bytes of out-of-order data kept per direction before the hole is declared a gap. Default 4 MiB. */
  maxBufferedBytesPerDirection?: number;
  /** Live connections kept at most; the least recently active is retired beyond this. Default 100_000. */
  maxConnections?: number;
  /** A connection idle for this many seconds of capture time is retired. Default 600. */
  idleTimeoutSec?: number;
  /** Out-of-order segments kept per direction before the hole is declared a gap. Default 4096. */
  maxBufferedSegmentsPerDirection?: number;
  /**
   * Closed 4-tuples remembered (for idleTimeoutSec at most) so that late retransmissions do not
   * start ghost connections. Default 10_000.
   */
  maxRecentlyClosed?: number;
}

export interface ReassemblyStats {
  connections: number;
  /** Segments entirely already seen (retransmissions). */
  duplicateSegments: number;
  /** Segments that arrived ahead of a hole. */
  outOfOrderSegments: number;
  gaps: number;
  gapBytes: number;
  /** Connections retired for idleness or to respect maxConnections. */
  retiredConnections: number;
  /** Segments of connections the Kafka stage ignored, dropped. */
  ignoredSegments: number;
  /**
   * Segments that belong to no connection and were dropped: payload-less segments of unknown
   * 4-tuples, late segments of recently closed connections (e.g. the last ACK of a close).
   */
  unattachedSegments: number;
  /** RSTs outside the receiver's window (RFC 9293 §3.10.7.4), ignored as the peers ignore them. */
  ignoredResets: number;
}
