/**
 * Resource-bound attacks, written straight into a pcap (building a million packets with the test
 * builders would take longer than analysing them):
 *
 *  - 'syn':      N connections of one SYN each, to the Kafka port;
 *  - 'request':  N connections of one packet each carrying a whole request whose header has the
 *                zero UUID as its ClientInstanceId (one finding per connection);
 *  - 'probe':    N connections of one packet each to an unknown port, carrying the start of a
 *                plausible request that never completes (port detection keeps its bytes);
 *  - 'acks':     one connection to an unknown port, then N bare ACKs from the server, each
 *                acknowledging 2 more bytes the capture never showed (a gap each);
 *  - 'frame':    one connection whose client announces a 2 GiB - 1 frame, then N segments of payload.
 *
 * Every packet is Ethernet + IPv4 + TCP; every connection a distinct 4-tuple.
 */

export type FloodMode = 'syn' | 'request' | 'probe' | 'acks' | 'frame';
export const FLOOD_MODES: readonly FloodMode[] = ['syn', 'request', 'probe', 'acks', 'frame'];

const ETH = 14;
const IP = 20;
const TCP = 20;
const RECORD = 16;
const TS = 1_764_547_200;

/** ApiVersions v3 (header v2): ClientId "f", tag 0 = the zero UUID, body: software "k" "1", no tags. */
function zeroIdRequest(): Buffer {
  const header = Buffer.from([0, 18, 0, 3, 0, 0, 0, 1, 0, 1, 0x66, 1, 0, 16, ...new Array<number>(16).fill(0)]);
  const body = Buffer.from([2, 0x6b, 2, 0x31, 0]);
  const frame = Buffer.alloc(4 + header.length + body.length);
  frame.writeInt32BE(header.length + body.length, 0);
  header.copy(frame, 4);
  body.copy(frame, 4 + header.length);
  return frame;
}

/** The first 1400 bytes of an ApiVersions v0 request of 10000 bytes with a ClientId of 4000 'a's. */
function partialRequest(): Buffer {
  const b = Buffer.alloc(1400, 0x61);
  b.writeInt32BE(10000, 0);
  b.writeInt16BE(18, 4);
  b.writeInt16BE(0, 6);
  b.writeInt32BE(1, 8);
  b.writeInt16BE(4000, 12);
  return b;
}

interface Packet {
  client: number;
  clientPort: number;
  fromClient: boolean;
  serverPort: number;
  seq: number;
  ack: number;
  flags: number;
  payload: Buffer | null;
  payloadLen: number;
}

export function floodCapture(n: number, mode: FloodMode): Buffer {
  const payload = mode === 'request' ? zeroIdRequest() : mode === 'probe' ? partialRequest() : mode === 'frame' ? Buffer.alloc(1400, 0x5a) : null;
  const count = mode === 'acks' || mode === 'frame' ? n + 1 : n;
  const perPacket = RECORD + ETH + IP + TCP + (payload?.length ?? 0);
  const out = Buffer.alloc(24 + count * perPacket);
  out.writeUInt32LE(0xa1b2c3d4, 0);
  out.writeUInt16LE(2, 4);
  out.writeUInt16LE(4, 6);
  out.writeUInt32LE(262144, 16);
  out.writeUInt32LE(1, 20);
  let at = 24;
  const p: Packet = { client: 0, clientPort: 0, fromClient: true, serverPort: 9092, seq: 1000, ack: 5000, flags: 0x02, payload: null, payloadLen: 0 };
  for (let i = 0; i < count; i++) {
    p.payload = null;
    if (mode === 'syn' || mode === 'request' || mode === 'probe') {
      // A new 4-tuple per packet: 2^14 ports on each of many client addresses.
      p.client = 0x0a000000 + (i >>> 14);
      p.clientPort = 1024 + (i & 0x3fff);
      p.serverPort = mode === 'probe' ? 7777 : 9092;
      p.flags = mode === 'syn' ? 0x02 : 0x18;
      p.payload = payload;
    } else if (mode === 'acks') {
      p.client = 0x0a000001;
      p.clientPort = 40000;
      p.serverPort = 7777;
      p.fromClient = i === 0;
      if (i === 0) {
        p.flags = 0x18;
        p.payload = Buffer.from([0]);
      } else {
        p.flags = 0x10;
        p.ack = 1001 + 2 * i;
      }
    } else {
      p.client = 0x0a000001;
      p.clientPort = 40000;
      p.flags = 0x18;
      if (i === 0) {
        p.payload = Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff]);
      } else {
        p.payload = payload;
        p.seq = 1000 + 14 + (i - 1) * 1400;
      }
    }
    at = writePacket(out, at, p, i);
  }
  return out.subarray(0, at);
}

function writePacket(out: Buffer, at: number, p: Packet, i: number): number {
  const len = p.payload?.length ?? 0;
  const captured = ETH + IP + TCP + len;
  out.writeUInt32LE(TS + Math.floor(i / 1_000_000), at);
  out.writeUInt32LE(i % 1_000_000, at + 4);
  out.writeUInt32LE(captured, at + 8);
  out.writeUInt32LE(captured, at + 12);
  at += RECORD;
  out.writeUInt16BE(0x0800, at + 12);
  at += ETH;
  out[at] = 0x45;
  out.writeUInt16BE(IP + TCP + len, at + 2);
  out[at + 8] = 64;
  out[at + 9] = 6;
  const server = 0x0a800002;
  out.writeUInt32BE(p.fromClient ? p.client : server, at + 12);
  out.writeUInt32BE(p.fromClient ? server : p.client, at + 16);
  at += IP;
  out.writeUInt16BE(p.fromClient ? p.clientPort : p.serverPort, at);
  out.writeUInt16BE(p.fromClient ? p.serverPort : p.clientPort, at + 2);
  out.writeUInt32BE(p.fromClient ? p.seq : 5000, at + 4);
  out.writeUInt32BE(p.fromClient ? 5000 : p.ack, at + 8);
  out[at + 12] = 0x50;
  out[at + 13] = p.flags;
  out.writeUInt16BE(65535, at + 14);
  at += TCP;
  if (p.payload !== null) {
    p.payload.copy(out, at);
    at += len;
  }
  return at;
}
