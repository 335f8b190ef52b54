/**
 * Net stage: a captured packet in, a TCP segment out (or a reason it was skipped).
 * One mutable {@link TcpSegment} is reused for every packet; addresses stay as bytes
 * in the packet buffer until somebody needs them as text.
 */

export interface TcpSegment {
  frame: number;
  tsSec: number;
  tsNsec: number;
  /** 4 or 6. */
  ipVersion: 4 | 6;
  /** The packet buffer; addresses and payload are read from it in place. Valid only during the call. */
  data: Buffer;
  /** Offsets of the source and destination addresses in `data` (4 bytes for IPv4, 16 for IPv6). */
  srcAddrOff: number;
  dstAddrOff: number;
  srcPort: number;
  dstPort: number;
  /** Sequence and acknowledgement numbers as signed 32-bit integers (the wire's unsigned value | 0: see tcp/seq.ts). */
  seq: number;
  ack: number;
  /** TCP flags byte (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10). */
  flags: number;
  /** Captured TCP payload: data[payloadOff, payloadOff + payloadLen). */
  payloadOff: number;
  payloadLen: number;
  /** Payload bytes the IP header announces but the capture did not keep (snaplen): a gap after the captured part. */
  missingLen: number;
  /** The receive window the sender advertises (unscaled, RFC 9293 §3.1); -1 when not decoded from a header. */
  window: number;
  /** A SYN's window scale option (RFC 7323 §2.2), else -1. */
  windowScale: number;
}

/** The one segment a reader reuses for every packet, before its first. */
export function newSegment(): TcpSegment {
  return {
    frame: 0,
    tsSec: 0,
    tsNsec: 0,
    ipVersion: 4,
    data: Buffer.alloc(0),
    srcAddrOff: 0,
    dstAddrOff: 0,
    srcPort: 0,
    dstPort: 0,
    seq: 0,
    ack: 0,
    flags: 0,
    payloadOff: 0,
    payloadLen: 0,
    missingLen: 0,
    window: -1,
    windowScale: -1,
  };
}

export const TcpFlag = { FIN: 0x01, SYN: 0x02, RST: 0x04, PSH: 0x08, ACK: 0x10 } as const;

export interface NetStats {
  /** Packets that decoded to a TCP segment. */
  tcpPackets: number;
  /** Packets that were IP but not TCP (UDP, ICMP, ...), or not IP at all (ARP, ...). */
  nonTcpPackets: number;
  /** Packets on link types kcid does not decode, by link type. */
  unknownLinkTypes: Map<number, number>;
  /** Packets whose link/IP/TCP headers were damaged or cut short. */
  malformedPackets: number;
  /** IP fragments (kcid does not reassemble IP fragments; Kafka over TCP practically never fragments). */
  ipFragments: number;
}

export function newNetStats(): NetStats {
  return { tcpPackets: 0, nonTcpPackets: 0, unknownLinkTypes: new Map(), malformedPackets: 0, ipFragments: 0 };
}

/** A blank segment for `decodeTcp` (net/decode.ts) to fill (one per pipeline, reused for every packet). */
export function newTcpSegment(): TcpSegment {
  return {
    frame: 0, tsSec: 0, tsNsec: 0, ipVersion: 4, data: Buffer.alloc(0), srcAddrOff: 0, dstAddrOff: 0,
    srcPort: 0, dstPort: 0, seq: 0, ack: 0, flags: 0, payloadOff: 0, payloadLen: 0, missingLen: 0, window: -1, windowScale: -1,
  };
}
