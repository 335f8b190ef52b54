/** What the Kafka stage is told: which ports are Kafka, its bounds, TLS secrets and what becomes of bodies. */
import type { KeyLog } from '../tls/keylog.js';

export interface KafkaOptions {
  /** Ports whose connections are Kafka without detection. */
  kafkaPorts: ReadonlySet<number>;
  /** Detect Kafka on other ports from the client's first bytes. */
  detect: boolean;
  /** Frames larger than this mean the stream is out of sync (Kafka's socket.request.max.bytes). */
  maxFrameBytes: number;
  /** Requests awaiting a response kept per connection; the oldest is given up beyond this. */
  maxPendingRequests?: number;
  /** Broker ports learned from connections whose SYN the capture saw (shared by the factory's conversations). */
  learnedBrokerPorts?: Set<number>;
  /** The time of the packet being processed, kept by the caller: gaps are dated by the packet that revealed them. */
  clock?: { tsSec: number; tsNsec: number };
  /** TLS secrets (--tls-keylog, the capture's Decryption Secrets Blocks), or null when there are none. */
  tlsKeys?: KeyLog | null;
  /**
   * Keep PushTelemetry requests up to this many bytes whole and hand over their Metrics blob
   * (`KafkaRequest.metricsBlob`); 0 or absent: the blob is sized, never copied (telemetry-frame.ts).
   */
  keepTelemetryBytes?: number;
  /**
   * `kcid requests --bodies`: read every body, keeping up to this many bytes of each frame (a larger
   * frame is decoded as far as that goes), as {@link bodyForm} says. Absent: decode only what the rules read.
   */
  maxBodyBytes?: number;
  /**
   * With maxBodyBytes, what each body becomes: 'value' (the default), every field decoded into
   * `body`; 'json', its JSON written from the wire into `bodyJson` (Kafka's converter form, secrets
   * hidden), with only what the rules read decoded into `body`, as without maxBodyBytes.
   */
  bodyForm?: 'value' | 'json';
  /**
   * Connections left out as not Kafka, by their server's port (the SYN's target), or without the
   * SYN by both ports (key 65536 * (1 + portA) + portB) while the tally has under 65,536 entries,
   * else by the lower port: so at most 131,072 entries. Filled by the conversations, read once the
   * capture is read (the "TCP connections not recognised as Kafka" capture note).
   */
  unrecognised?: Map<number, number>;
}
