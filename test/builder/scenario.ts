/**
 * Whole Kafka conversations for tests: clients talking to brokers over TCP, written as a pcap or
 * pcapng. Built from the three lower builders (packets, kafka, capture), so every byte is still
 * explained; this file only sequences them. Frames are kept in the order the test makes them and
 * stamped from one clock, 100 µs apart.
 */
import { protocol } from '../../src/kafka/protocol.js';
import { LinkType } from '../../src/capture/types.js';
import { pcapFile, pcapngFile, tmpFile } from './capture.js';
import { minimalResponseBody, requestFrame, responseFrame, type RawTag } from './kafka.js';
import { TcpConversation, type Frame } from './packets.js';

export interface ConnOptions {
  client: string;
  broker: string;
  /** Default true: the capture sees SYN, SYN+ACK, ACK. */
  handshake?: boolean;
  mss?: number;
  /** Initial sequence numbers (a reused port gets a new one). */
  clientIsn?: number;
  serverIsn?: number;
}

export interface SendRequest {
  apiKey: number;
  apiVersion: number;
  /** Default: the connection's next correlation id. */
  correlationId?: number;
  /** Default: the connection's clientId on its first request, null after (KIP-1313 style) unless given. */
  clientId?: string | null;
  clientInstanceId?: Uint8Array | null;
  headerVersion?: 0 | 1 | 2;
  tags?: RawTag[];
  rawTagSection?: Uint8Array;
  body?: Uint8Array;
}

export class KafkaConn {
  readonly tcp: TcpConversation;
  private nextCorrelation = 1;
  private readonly pending = new Map<number, { apiKey: number; apiVersion: number }>();

  constructor(
    private readonly scenario: Scenario,
    o: ConnOptions,
  ) {
    this.tcp = new TcpConversation({
      client: o.client,
      server: o.broker,
      ...(o.mss === undefined ? {} : { mss: o.mss }),
      ...(o.clientIsn === undefined ? {} : { clientIsn: o.clientIsn }),
      ...(o.serverIsn === undefined ? {} : { serverIsn: o.serverIsn }),
    });
    if (o.handshake !== false) scenario.add(this.tcp.handshake());
  }

  /** Sends a request; returns its correlation id. */
  request(r: SendRequest): number {
    const correlationId = r.correlationId ?? this.nextCorrelation;
    this.nextCorrelation = correlationId + 1;
    this.pending.set(correlationId, { apiKey: r.apiKey, apiVersion: r.apiVersion });
    const frame = requestFrame({ ...r, correlationId, clientId: r.clientId === undefined ? null : r.clientId });
    this.scenario.add(this.tcp.clientSends(frame));
    return correlationId;
  }

  /** Answers a request with `body` (by default the smallest its schema allows), in the response header version its API uses. */
  respond(correlationId: number, given?: Uint8Array): void {
    const req = this.pending.get(correlationId);
    if (req === undefined) throw new Error(`no request ${correlationId} to answer`);
    const body = given ?? minimalResponseBody(req.apiKey, req.apiVersion);
    this.pending.delete(correlationId);
    const headerVersion = protocol().responseHeaderVersion(req.apiKey, req.apiVersion) ?? 0;
    this.scenario.add(this.tcp.serverSends(responseFrame({ correlationId, headerVersion, body })));
  }

  clientBytes(data: Uint8Array): void {
    this.scenario.add(this.tcp.clientSends(data));
  }

  serverBytes(data: Uint8Array): void {
    this.scenario.add(this.tcp.serverSends(data));
  }

  close(): void {
    this.scenario.add(this.tcp.close());
  }
}

export class Scenario {
  readonly frames: Frame[] = [];
  private sec: number;
  private nsec = 0;

  constructor(startSec = 1_764_547_200 /* 2025-12-01T00:00:00Z */) {
    this.sec = startSec;
  }

  connect(o: ConnOptions): KafkaConn {
    return new KafkaConn(this, o);
  }

  /** Appends frames, restamped from the scenario's clock. */
  add(frames: Frame[]): void {
    for (const f of frames) {
      this.frames.push({ data: f.data, tsSec: this.sec, tsNsec: this.nsec });
      this.nsec += 100_000;
      if (this.nsec >= 1e9) {
        this.sec++;
        this.nsec -= 1e9;
      }
    }
  }

  /** Advances the clock. */
  wait(seconds: number): void {
    const total = this.nsec + Math.round(seconds * 1e9);
    this.sec += Math.floor(total / 1e9);
    this.nsec = total - Math.floor(total / 1e9) * 1e9; // a negative wait steps the clock back
  }

  /** `snaplen`: keep only the first bytes of each packet, as `tcpdump -s N` does (the record says the original length). */
  pcap(o: { nanosecond?: boolean; bigEndian?: boolean; snaplen?: number } = {}): Buffer {
    const { snaplen, ...rest } = o;
    return pcapFile({
      linkType: LinkType.ETHERNET,
      ...rest,
      ...(snaplen === undefined ? {} : { snaplen }),
      packets: this.frames.map((f) => ({
        tsSec: f.tsSec,
        tsNsec: f.tsNsec,
        data: snaplen === undefined ? f.data : f.data.subarray(0, snaplen),
        origLen: f.data.length,
      })),
    });
  }

  pcapng(): Buffer {
    return pcapngFile({
      sections: [
        {
          interfaces: [{ linkType: LinkType.ETHERNET, tsresol: 9 }],
          blocks: this.frames.map((f) => ({ type: 'epb' as const, interfaceId: 0, tsSec: f.tsSec, tsNsec: f.tsNsec, data: f.data })),
        },
      ],
    });
  }

  /** Writes the pcap to a temporary file and returns its path. */
  file(name = 'scenario.pcap', o: { snaplen?: number } = {}): string {
    return tmpFile(name, this.pcap(o));
  }
}
