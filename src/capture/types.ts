/**
 * Capture stage: bytes of a pcap / pcapng file (plain or gzip, file or stdin) in,
 * packets out. One mutable {@link PacketRef} is reused for every packet: nothing is
 * allocated per packet, and `data` is only valid during the sink call.
 */

/** Link-layer header types (LINKTYPE_* from tcpdump.org/linktypes.html). */
export const LinkType = {
  NULL: 0, // BSD loopback, host-endian 4-byte family
  ETHERNET: 1,
  RAW: 101, // raw IPv4/IPv6
  LOOP: 108, // OpenBSD loopback, network-endian 4-byte family
  LINUX_SLL: 113,
  IPV4: 228,
  IPV6: 229,
  LINUX_SLL2: 276,
} as const;

export interface PacketRef {
  /** 1-based, as Wireshark numbers frames. */
  frame: number;
  /** Seconds since the epoch (integer). */
  tsSec: number;
  /** Nanoseconds within the second (integer, 0..999_999_999). */
  tsNsec: number;
  /** LINKTYPE_* of the interface the packet was captured on. */
  linkType: number;
  /** pcapng interface id, counted on across sections so that it is unique in the file (0 for classic pcap). */
  interfaceId: number;
  /** Buffer holding the packet bytes at [offset, offset + capLen). Valid only during the call. */
  data: Buffer;
  offset: number;
  /** Bytes captured (present in `data`). */
  capLen: number;
  /** Bytes on the wire; > capLen when the capture truncated the packet (snaplen). */
  origLen: number;
}

export interface PacketSink {
  onPacket(p: PacketRef): void;
  /**
   * A pcapng Decryption Secrets Block (draft §4.7): its secrets type (0x544c534b 'TLSK' for a TLS
   * key log) and its data, valid only during the call. Secrets: never printed.
   */
  onSecrets?(secretsType: number, data: Buffer): void;
}

/** DSB secrets type of an NSS key log (draft-ietf-opsawg-pcapng §4.7). */
export const SECRETS_TLS_KEY_LOG = 0x544c534b;

export type CaptureFormat = 'pcap' | 'pcapng';

export interface CaptureStats {
  /** The name given for the input ('-' for stdin). */
  file: string;
  format: CaptureFormat;
  /** True when the input was gzip-compressed. */
  gzip: boolean;
  /** Packets delivered to the sink. */
  packets: number;
  /** Capture bytes read (after decompression). */
  bytes: number;
  /** Packets whose captured length was smaller than their original length. */
  truncatedPackets: number;
  /** The input ended in the middle of a record: set to the frame number that would have come next, else 0. */
  truncatedAtFrame: number;
  /** pcapng blocks that were not packets (or unknown) and were skipped. */
  skippedBlocks: number;
  /** Damaged records/blocks that were skipped (counted, not fatal). */
  damagedRecords: number;
  /** Human-readable notes about the file (e.g. "the last packet is truncated at byte 1234"). */
  notes: string[];
}

/** An input that cannot be read as a capture at all: one line, names the file. Exit code 2. */
export class CaptureError extends Error {
  override readonly name = 'CaptureError';
  constructor(message: string) {
    super(message);
  }
}

export interface ReadCaptureOptions {
  /** Called now and then with the bytes consumed so far (compressed bytes for gzip) and the total if known. */
  onProgress?: (bytesRead: number, totalBytes: number | null) => void;
}
