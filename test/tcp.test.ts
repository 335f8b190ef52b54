import { describe, expect, it } from 'vitest';
import type { PacketRef } from '../src/capture/types.js';
import { decodeTcp } from '../src/net/decode.js';
import { newNetStats, newTcpSegment, type TcpSegment } from '../src/net/types.js';
import { Reassembler, sourceIsClient } from '../src/tcp/reassembly.js';
import type {
  ConnectionFactory,
  Direction,
  Endpoint,
  ReassemblyOptions,
  ReassemblyStats,
  StreamHandler,
  TcpConnection,
} from '../src/tcp/types.js';
import { bytes, packetRef, parseEndpoint, TcpConversation, tcpPacket } from './builder/packets.js';

const T0 = 1_700_000_000;
const CLIENT = '10.0.0.1:50000';
const SERVER = '10.0.0.2:9092';

/** One segment of a test table. */
interface Seg {
  from: 'client' | 'server';
  seq: number;
  flags: string;
  payload: string;
  ack?: number;
  /** Capture second, relative to T0. */
  t?: number;
  /** Payload bytes the capture kept (snaplen); the rest is missing. */
  snap?: number;
  client?: string;
  server?: string;
}

type Extra = Partial<Pick<Seg, 'ack' | 't' | 'snap' | 'client' | 'server'>>;

/** Client to server. Segments with the ACK flag must say what they acknowledge. */
function C(seq: number, flags: string, payload = '', extra: Extra = {}): Seg {
  if (flags.includes('A') && extra.ack === undefined) throw new Error('an ACK needs an ack number');
  return { from: 'client', seq: seq >>> 0, flags, payload, ...extra };
}

/** Server to client. */
function S(seq: number, flags: string, payload = '', extra: Extra = {}): Seg {
  if (flags.includes('A') && extra.ack === undefined) throw new Error('an ACK needs an ack number');
  return { from: 'server', seq: seq >>> 0, flags, payload, ...extra };
}

function toPacket(s: Seg, frame: number): PacketRef {
  const client = parseEndpoint(s.client ?? CLIENT);
  const server = parseEndpoint(s.server ?? SERVER);
  const [src, dst] = s.from === 'client' ? [client, server] : [server, client];
  const full = tcpPacket({ src: src.ip, dst: dst.ip, sport: src.port, dport: dst.port, seq: s.seq, ack: s.ack ?? 0, flags: s.flags, payload: s.payload });
  const headers = full.length - s.payload.length;
  const data = s.snap === undefined ? full : full.subarray(0, headers + s.snap);
  return packetRef(data, { frame, tsSec: T0 + (s.t ?? 0), tsNsec: frame, origLen: full.length });
}

const ep = (e: Endpoint): string => (e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`);
const arrow = (dir: Direction): string => (dir === 0 ? 'A→B' : 'B→A');

/**
 * Records what the reassembler delivers as one line per event:
 *   open #1 A=… B=… syn|nosyn     #1 A→B "bytes" f3 [copy]     #1 B→A gap 5 f4     #1 end closed
 * 'copy' marks bytes that do not come from the packet being processed (buffered out of order).
 */
class Recorder implements ConnectionFactory {
  readonly events: string[] = [];
  readonly conns: TcpConnection[] = [];
  current: Buffer | null = null;
  constructor(private readonly hooks: Hooks = {}) {}

  open(conn: TcpConnection): StreamHandler {
    this.events.push(`open #${conn.id} A=${ep(conn.a)} B=${ep(conn.b)} ${conn.synSeen ? 'syn' : 'nosyn'}`);
    this.conns.push(conn);
    this.hooks.open?.(conn);
    let ended = false;
    const id = conn.id;
    return {
      data: (dir, buf, off, len, frame) => {
        if (ended) throw new Error('data after end');
        const copy = buf === this.current ? '' : ' copy';
        this.events.push(`#${id} ${arrow(dir)} "${buf.toString('latin1', off, off + len)}" f${frame}${copy}`);
        this.hooks.data?.(conn, buf.toString('latin1', off, off + len));
      },
      gap: (dir, n, frame) => {
        if (ended) throw new Error('gap after end');
        this.events.push(`#${id} ${arrow(dir)} gap ${n} f${frame}`);
      },
      end: (reason) => {
        if (ended) throw new Error('end called twice');
        ended = true;
        this.events.push(`#${id} end ${reason}`);
      },
    };
  }
}

interface Hooks {
  open?: (conn: TcpConnection) => void;
  data?: (conn: TcpConnection, text: string) => void;
}

interface Case {
  name: string;
  opts?: Partial<ReassemblyOptions>;
  in: Seg[];
  want: string[];
  /** Call finish() after the last segment (default true). */
  finish?: boolean;
  stats?: Partial<ReassemblyStats>;
  hooks?: Hooks;
}

function run(c: Omit<Case, 'name'>) {
  const rec = new Recorder(c.hooks);
  const r = new Reassembler(rec, { kafkaPorts: new Set([9092]), ...c.opts });
  const seg: TcpSegment = newTcpSegment();
  const net = newNetStats();
  c.in.forEach((s, i) => {
    const p = toPacket(s, i + 1);
    expect(decodeTcp(p, seg, net)).toBe(true);
    rec.current = p.data;
    r.segment(seg);
    // The packet buffer is valid only during the call: anything kept must have been copied.
    p.data.fill(0x21);
  });
  if (c.finish !== false) r.finish();
  return { events: rec.events, stats: r.stats, r, rec };
}

function check(c: Omit<Case, 'name'>): void {
  const { events, stats } = run(c);
  expect(events).toEqual(c.want);
  if (c.stats) expect(stats).toMatchObject(c.stats);
}

const OPEN = `open #1 A=${CLIENT} B=${SERVER} syn`;
const OPEN_NOSYN = `open #1 A=${CLIENT} B=${SERVER} nosyn`;
/** Client ISN 1000 (data from 1001), server ISN 5000 (data from 5001). */
const HANDSHAKE = [C(1000, 'S'), S(5000, 'SA', '', { ack: 1001 }), C(1001, 'A', '', { ack: 5001 })];

/** The client on another port: another 4-tuple to the same server. */
const other = (port: number): Extra => ({ client: `10.0.0.1:${port}` });

/** SYN, SYN+ACK, then both FINs and the last ACK: a connection opened and closed, ISNs `isn` (client) and `peerIsn`. */
function openedAndClosed(extra: Extra, isn = 1000, peerIsn = 5000): Seg[] {
  return [
    C(isn, 'S', '', extra),
    S(peerIsn, 'SA', '', { ack: isn + 1, ...extra }),
    C(isn + 1, 'FA', '', { ack: peerIsn + 1, ...extra }),
    S(peerIsn + 1, 'FA', '', { ack: isn + 2, ...extra }),
    C(isn + 2, 'A', '', { ack: peerIsn + 2, ...extra }),
  ];
}

describe('Reassembler: ordering', () => {
  const cases: Case[] = [
    {
      name: 'handshake, a request and a response, both FINs',
      in: [
        ...HANDSHAKE,
        C(1001, 'PA', 'hello', { ack: 5001 }),
        S(5001, 'PA', 'world', { ack: 1006 }),
        C(1006, 'FA', '', { ack: 5006 }),
        S(5006, 'FA', '', { ack: 1007 }),
        C(1007, 'A', '', { ack: 5007 }),
      ],
      want: [OPEN, '#1 A→B "hello" f4', '#1 B→A "world" f5', '#1 end closed'],
      stats: { connections: 1, duplicateSegments: 0, outOfOrderSegments: 0, gaps: 0, unattachedSegments: 1 },
    },
    {
      name: 'out of order: buffered (copied) until the hole fills',
      in: [C(1000, 'S'), C(1004, 'P', 'def'), C(1001, 'P', 'abc'), C(1007, 'P', 'g')],
      want: [OPEN, '#1 A→B "abc" f3', '#1 A→B "def" f2 copy', '#1 A→B "g" f4', '#1 end capture-end'],
      stats: { outOfOrderSegments: 1, duplicateSegments: 0, gaps: 0 },
    },
    {
      name: 'several out-of-order segments in reverse order',
      in: [C(1000, 'S'), C(1007, 'P', 'ghi'), C(1004, 'P', 'def'), C(1001, 'P', 'abc')],
      want: [OPEN, '#1 A→B "abc" f4', '#1 A→B "def" f3 copy', '#1 A→B "ghi" f2 copy', '#1 end capture-end'],
      stats: { outOfOrderSegments: 2 },
    },
    {
      name: 'an exact retransmission is a duplicate',
      in: [C(1000, 'S'), C(1001, 'P', 'abc'), C(1001, 'P', 'abc'), C(1004, 'P', 'd')],
      want: [OPEN, '#1 A→B "abc" f2', '#1 A→B "d" f4', '#1 end capture-end'],
      stats: { duplicateSegments: 1 },
    },
    {
      name: 'overlap with delivered bytes: the first bytes seen win',
      in: [C(1000, 'S'), C(1001, 'P', 'abcd'), C(1003, 'P', 'XXef')],
      want: [OPEN, '#1 A→B "abcd" f2', '#1 A→B "ef" f3', '#1 end capture-end'],
      stats: { duplicateSegments: 0 },
    },
    {
      name: 'overlap with buffered bytes: the buffered bytes win, the rest stays in place',
      in: [C(1000, 'S'), C(1005, 'P', 'efgh'), C(1001, 'P', 'abcdEFGHij')],
      want: [OPEN, '#1 A→B "abcd" f3', '#1 A→B "efgh" f2 copy', '#1 A→B "ij" f3', '#1 end capture-end'],
    },
    {
      name: 'overlaps between buffered segments: only holes are filled',
      in: [C(1000, 'S'), C(1005, 'P', 'ef'), C(1009, 'P', 'ij'), C(1004, 'P', 'DEFGHIJk'), C(1005, 'P', 'e'), C(1001, 'P', 'abc')],
      want: [
        OPEN,
        '#1 A→B "abc" f6',
        '#1 A→B "D" f4 copy',
        '#1 A→B "ef" f2 copy',
        '#1 A→B "GH" f4 copy',
        '#1 A→B "ij" f3 copy',
        '#1 A→B "k" f4 copy',
        '#1 end capture-end',
      ],
      stats: { outOfOrderSegments: 3, duplicateSegments: 1 },
    },
    {
      name: 'sequence numbers wrap at 2^32',
      in: [
        C(0xfffffffd, 'S'),
        C(0xfffffffe, 'P', 'ab'),
        C(1, 'P', 'de'),
        C(0, 'P', 'c'),
        C(0xffffffff, 'P', 'bc'), // already delivered, across the wrap
        C(3, 'P', 'f'),
      ],
      want: [OPEN, '#1 A→B "ab" f2', '#1 A→B "c" f4', '#1 A→B "de" f3 copy', '#1 A→B "f" f6', '#1 end capture-end'],
      stats: { duplicateSegments: 1, outOfOrderSegments: 1 },
    },
    {
      name: 'an ISN of 2^32 - 1 is an ISN like any other (kcid keeps it as -1): its retransmitted SYN is a duplicate',
      in: [C(0xffffffff, 'S'), C(0xffffffff, 'S'), C(0, 'P', 'ab')],
      want: [OPEN, '#1 A→B "ab" f3', '#1 end capture-end'],
      stats: { duplicateSegments: 1, connections: 1 },
    },
    {
      name: 'a keep-alive (one old byte at next - 1) and empty segments are no retransmissions',
      in: [C(1000, 'S'), C(1001, 'PA', 'abc', { ack: 0 }), C(1003, 'A', 'c', { ack: 0 }), C(1004, 'A', '', { ack: 0 }), C(1004, 'P', 'd')],
      want: [OPEN, '#1 A→B "abc" f2', '#1 A→B "d" f5', '#1 end capture-end'],
      stats: { duplicateSegments: 0 },
    },
    {
      name: 'a SYN carrying data (TCP Fast Open): data starts at ISN + 1',
      in: [C(1000, 'S', 'fast'), S(5000, 'SA', '', { ack: 1005 }), C(1005, 'PA', 'er', { ack: 5001 })],
      want: [OPEN, '#1 A→B "fast" f1', '#1 A→B "er" f3', '#1 end capture-end'],
    },
    {
      name: 'a retransmitted SYN and SYN+ACK are duplicates',
      in: [C(1000, 'S'), C(1000, 'S'), S(5000, 'SA', '', { ack: 1001 }), S(5000, 'SA', '', { ack: 1001 }), C(1001, 'P', 'x')],
      want: [OPEN, '#1 A→B "x" f5', '#1 end capture-end'],
      stats: { duplicateSegments: 2, connections: 1 },
    },
  ];
  it.each(cases)('$name', (c) => check(c));
});

describe('Reassembler: sides', () => {
  it.each([
    // [src port, dst port, kafka ports, source is client]
    [50000, 9092, [9092], true],
    [9092, 50000, [9092], false],
    [9093, 9092, [9092, 9093], true], // both Kafka (broker to broker), neither ephemeral: first source
    [40000, 8080, [], true], // ephemeral source
    [8080, 40000, [], false], // ephemeral destination
    [40000, 50000, [], true], // both ephemeral: first source
    [1000, 2000, [], true], // neither ephemeral: first source
    [9092, 40000, [40000], true], // the Kafka port wins over the ephemeral guess
  ] as const)('%d → %d, kafka ports %j: source is A = %s', (sport, dport, kafka, want) => {
    expect(sourceIsClient(sport, dport, new Set(kafka))).toBe(want);
  });

  const cases: Case[] = [
    {
      name: 'SYN: its sender is A',
      in: [S(5000, 'S')],
      want: [`open #1 A=${SERVER} B=${CLIENT} syn`, '#1 end capture-end'],
    },
    {
      name: 'SYN+ACK first (SYN not captured): its receiver is A, both ISNs known',
      in: [S(5000, 'SA', '', { ack: 1001 }), C(1001, 'PA', 'req', { ack: 5001 }), S(5001, 'PA', 'resp', { ack: 1004 })],
      want: [OPEN, '#1 A→B "req" f2', '#1 B→A "resp" f3', '#1 end capture-end'],
    },
    {
      name: 'no SYN: the side on the Kafka port is B',
      in: [S(7000, 'P', 'resp')],
      want: [OPEN_NOSYN, '#1 B→A "resp" f1', '#1 end capture-end'],
    },
    {
      name: 'no SYN, no Kafka port: the side on the ephemeral port is A',
      opts: { kafkaPorts: new Set() },
      in: [S(7000, 'P', 'x', { client: '10.0.0.1:40000', server: '10.0.0.2:8080' })],
      want: ['open #1 A=10.0.0.1:40000 B=10.0.0.2:8080 nosyn', '#1 B→A "x" f1', '#1 end capture-end'],
    },
    {
      name: 'no SYN, nothing to go by: the first source is A',
      opts: { kafkaPorts: new Set() },
      in: [S(7000, 'P', 'x', { client: '10.0.0.1:1000', server: '10.0.0.2:2000' })],
      want: ['open #1 A=10.0.0.2:2000 B=10.0.0.1:1000 nosyn', '#1 A→B "x" f1', '#1 end capture-end'],
    },
    {
      name: 'IPv6 endpoints',
      in: [C(1000, 'S', '', { client: '[2001:db8::1]:50000', server: '[2001:db8::2]:9092' }), S(5000, 'SA', '', { ack: 1001, client: '[2001:db8::1]:50000', server: '[2001:db8::2]:9092' }), C(1001, 'P', 'v6', { client: '[2001:db8::1]:50000', server: '[2001:db8::2]:9092' })],
      want: ['open #1 A=[2001:db8::1]:50000 B=[2001:db8::2]:9092 syn', '#1 A→B "v6" f3', '#1 end capture-end'],
    },
  ];
  it.each(cases)('$name', (c) => check(c));

  it('mid-connection start: the first data sets where each direction starts', () => {
    check({
      in: [C(3000, 'PA', 'mid', { ack: 8000 }), S(8000, 'PA', 'dle', { ack: 3003 }), C(2990, 'PA', 'old', { ack: 8003 }), C(3003, 'PA', '!', { ack: 8003 })],
      want: [OPEN_NOSYN, '#1 A→B "mid" f1', '#1 B→A "dle" f2', '#1 A→B "!" f4', '#1 end capture-end'],
      stats: { duplicateSegments: 1, gaps: 0 },
    });
  });

  it('a bare ACK, FIN or RST of an unknown connection opens nothing', () => {
    check({
      in: [C(1001, 'A', '', { ack: 5001 }), C(1001, 'FA', '', { ack: 5001 }), S(5001, 'R'), S(5001, 'RA', 'diagnostic', { ack: 1001 })],
      want: [],
      stats: { connections: 0, unattachedSegments: 4 },
    });
  });
});

describe('Reassembler: gaps', () => {
  const cases: Case[] = [
    {
      name: 'the peer ACKs bytes never captured: gap at the ACK',
      in: [...HANDSHAKE, C(1001, 'PA', 'abc', { ack: 5001 }), /* 1004 'def' lost */ S(5001, 'PA', 'ok', { ack: 1007 }), C(1007, 'PA', 'ghi', { ack: 5003 })],
      want: [OPEN, '#1 A→B "abc" f4', '#1 A→B gap 3 f5', '#1 B→A "ok" f5', '#1 A→B "ghi" f6', '#1 end capture-end'],
      stats: { gaps: 1, gapBytes: 3 },
    },
    {
      name: 'the peer ACKs past a hole with data buffered after it: gap at the buffered frame',
      in: [...HANDSHAKE, C(1001, 'PA', 'abc', { ack: 5001 }), C(1007, 'PA', 'ghi', { ack: 5001 }), S(5001, 'A', '', { ack: 1010 })],
      want: [OPEN, '#1 A→B "abc" f4', '#1 A→B gap 3 f5', '#1 A→B "ghi" f5 copy', '#1 end capture-end'],
      stats: { gaps: 1, gapBytes: 3, outOfOrderSegments: 1 },
    },
    {
      name: 'an ACK into the middle of a hole: gap up to the ACK, the rest may still come',
      in: [C(1000, 'S'), C(1001, 'P', 'ab'), C(1010, 'P', 'jk'), S(5000, 'SA', '', { ack: 1006 }), C(1006, 'P', 'fghi')],
      want: [OPEN, '#1 A→B "ab" f2', '#1 A→B gap 3 f4', '#1 A→B "fghi" f5', '#1 A→B "jk" f3 copy', '#1 end capture-end'],
    },
    {
      name: 'an ACK one past the data (a FIN not captured) is no gap',
      in: [...HANDSHAKE, C(1001, 'PA', 'abc', { ack: 5001 }), S(5001, 'FA', '', { ack: 1005 })],
      want: [OPEN, '#1 A→B "abc" f4', '#1 end capture-end'],
      stats: { gaps: 0 },
    },
    {
      name: 'the buffer bound is exceeded: the first hole becomes a gap',
      opts: { maxBufferedBytesPerDirection: 4 },
      in: [C(1000, 'S'), C(1001, 'P', 'ab'), C(1005, 'P', 'ef'), C(1007, 'P', 'ghi'), C(1010, 'P', 'j')],
      want: [OPEN, '#1 A→B "ab" f2', '#1 A→B gap 2 f3', '#1 A→B "ef" f3 copy', '#1 A→B "ghi" f4 copy', '#1 A→B "j" f5', '#1 end capture-end'],
      stats: { gaps: 1, gapBytes: 2 },
    },
    {
      name: 'one segment larger than the bound',
      opts: { maxBufferedBytesPerDirection: 4 },
      in: [C(1000, 'S'), C(1003, 'P', 'cdefgh')],
      want: [OPEN, '#1 A→B gap 2 f2', '#1 A→B "cdefgh" f2 copy', '#1 end capture-end'],
    },
    {
      name: 'the buffered segment count bound is exceeded',
      opts: { maxBufferedSegmentsPerDirection: 2 },
      in: [C(1000, 'S'), C(1003, 'P', 'c'), C(1005, 'P', 'e'), C(1007, 'P', 'g')],
      want: [OPEN, '#1 A→B gap 2 f2', '#1 A→B "c" f2 copy', '#1 A→B gap 1 f3', '#1 A→B "e" f3 copy', '#1 A→B gap 1 f4', '#1 A→B "g" f4 copy', '#1 end capture-end'],
    },
    {
      name: 'snaplen: the captured part, then a gap for the rest',
      in: [C(1000, 'S'), C(1001, 'P', 'abcdef', { snap: 2 }), C(1007, 'P', 'gh')],
      want: [OPEN, '#1 A→B "ab" f2', '#1 A→B gap 4 f2', '#1 A→B "gh" f3', '#1 end capture-end'],
      stats: { gaps: 1, gapBytes: 4 },
    },
    {
      name: 'snaplen on an out-of-order segment: the gap waits its turn',
      in: [C(1000, 'S'), C(1007, 'P', 'ghij', { snap: 1 }), C(1001, 'P', 'abcdef'), C(1011, 'P', 'k')],
      want: [OPEN, '#1 A→B "abcdef" f3', '#1 A→B "g" f2 copy', '#1 A→B gap 3 f2', '#1 A→B "k" f4', '#1 end capture-end'],
    },
    {
      name: 'snaplen leaving no payload at all',
      in: [C(1000, 'S'), C(1001, 'P', 'abcd', { snap: 0 }), C(1005, 'P', 'e')],
      want: [OPEN, '#1 A→B gap 4 f2', '#1 A→B "e" f3', '#1 end capture-end'],
    },
    {
      name: 'capture end: buffered bytes behind holes are delivered after gaps',
      in: [C(1000, 'S'), C(1001, 'P', 'a'), C(1003, 'P', 'c'), C(1006, 'P', 'fg'), S(5000, 'SA', '', { ack: 1001 }), S(5003, 'P', 'Z')],
      want: [OPEN, '#1 A→B "a" f2', '#1 A→B gap 1 f3', '#1 A→B "c" f3 copy', '#1 A→B gap 2 f4', '#1 A→B "fg" f4 copy', '#1 B→A gap 2 f6', '#1 B→A "Z" f6 copy', '#1 end capture-end'],
      stats: { gaps: 3, gapBytes: 5 },
    },
  ];
  it.each(cases)('$name', (c) => check(c));
});

describe('Reassembler: ends', () => {
  const cases: Case[] = [
    {
      name: 'one FIN only: the connection lives until the capture ends',
      in: [...HANDSHAKE, C(1001, 'FPA', 'bye', { ack: 5001 }), C(1005, 'A', '', { ack: 5001 })],
      want: [OPEN, '#1 A→B "bye" f4', '#1 end capture-end'],
    },
    {
      name: 'RST: reset at once; later segments start nothing',
      in: [...HANDSHAKE, C(1001, 'PA', 'abc', { ack: 5001 }), S(5001, 'RA', '', { ack: 1004 }), C(1004, 'PA', 'def', { ack: 5001 })],
      want: [OPEN, '#1 A→B "abc" f4', '#1 end reset'],
      stats: { unattachedSegments: 1, connections: 1 },
    },
    {
      name: 'RST with bytes waiting behind a hole: gap, the bytes, then reset',
      in: [C(1000, 'S'), C(1001, 'P', 'ab'), C(1005, 'P', 'ef'), S(5001, 'R')],
      want: [OPEN, '#1 A→B "ab" f2', '#1 A→B gap 2 f3', '#1 A→B "ef" f3 copy', '#1 end reset'],
    },
    {
      name: 'FIN with bytes missing before it: buffered bytes after gaps, then a last gap',
      in: [C(1000, 'S'), C(1001, 'P', 'ab'), C(1005, 'P', 'ef'), C(1009, 'F'), S(5001, 'F')],
      want: [OPEN, '#1 A→B "ab" f2', '#1 A→B gap 2 f3', '#1 A→B "ef" f3 copy', '#1 A→B gap 2 f4', '#1 end closed'],
      stats: { gaps: 2, gapBytes: 4 },
    },
    {
      name: 'FIN: bytes buffered beyond it are dropped, data after it is ignored',
      in: [C(1000, 'S'), C(1008, 'P', 'hij'), C(1001, 'FP', 'abcdef'), C(1007, 'P', 'zz'), S(5001, 'F')],
      want: [OPEN, '#1 A→B "abcdef" f3', '#1 end closed'],
    },
    {
      name: 'FINs cross (each side closes before seeing the other FIN)',
      in: [...HANDSHAKE, C(1001, 'FA', '', { ack: 5001 }), S(5001, 'FA', '', { ack: 1001 }), C(1002, 'A', '', { ack: 5002 }), S(5002, 'A', '', { ack: 1002 })],
      want: [OPEN, '#1 end closed'],
      stats: { unattachedSegments: 2 },
    },
  ];
  it.each(cases)('$name', (c) => check(c));
});

describe('Reassembler: port reuse and late segments', () => {
  const closed = [...HANDSHAKE, C(1001, 'FA', '', { ack: 5001 }), S(5001, 'FA', '', { ack: 1002 }), C(1002, 'A', '', { ack: 5002 })];
  const cases: Case[] = [
    {
      name: 'a new SYN on a closed 4-tuple starts a new connection',
      in: [...closed, C(90000, 'S'), S(70000, 'SA', '', { ack: 90001 }), C(90001, 'PA', 'again', { ack: 70001 })],
      want: [OPEN, '#1 end closed', `open #2 A=${CLIENT} B=${SERVER} syn`, '#2 A→B "again" f9', '#2 end capture-end'],
      stats: { connections: 2 },
    },
    {
      name: 'a late retransmission of the old SYN does not',
      in: [...closed, C(1000, 'S')],
      want: [OPEN, '#1 end closed'],
      stats: { connections: 1, unattachedSegments: 2 },
    },
    {
      name: 'late data and ACKs after the close start no ghost connection',
      in: [...HANDSHAKE, C(1001, 'PA', 'abc', { ack: 5001 }), C(1004, 'FA', '', { ack: 5001 }), S(5001, 'FA', '', { ack: 1005 }), C(1001, 'PA', 'abc', { ack: 5002 }), S(5001, 'FA', '', { ack: 1005 }), C(1005, 'A', '', { ack: 5002 })],
      want: [OPEN, '#1 A→B "abc" f4', '#1 end closed'],
      stats: { connections: 1, unattachedSegments: 3 },
    },
    {
      name: 'without room for recently closed 4-tuples, late data does start a ghost (the bound is real)',
      opts: { maxRecentlyClosed: 0 },
      in: [...closed, C(1001, 'PA', 'x', { ack: 5002 })],
      want: [OPEN, '#1 end closed', OPEN_NOSYN.replace('#1', '#2'), '#2 A→B "x" f7', '#2 end capture-end'],
    },
    {
      name: 'recently closed 4-tuples are forgotten after the idle timeout',
      opts: { idleTimeoutSec: 10 },
      in: [...closed, C(1001, 'PA', 'x', { ack: 5002, t: 10 }), C(1001, 'PA', 'y', { ack: 5002, t: 11 })],
      want: [OPEN, '#1 end closed', OPEN_NOSYN.replace('#1', '#2'), '#2 A→B "y" f8', '#2 end capture-end'],
    },
    {
      name: 'a SYN with a new ISN on a live connection: the old one ends, a new one starts',
      in: [...HANDSHAKE, C(1001, 'PA', 'abc', { ack: 5001 }), C(424242, 'S'), S(777, 'SA', '', { ack: 424243 }), C(424243, 'PA', 'new', { ack: 778 })],
      want: [OPEN, '#1 A→B "abc" f4', '#1 end closed', `open #2 A=${CLIENT} B=${SERVER} syn`, '#2 A→B "new" f7', '#2 end capture-end'],
    },
    {
      name: 'a SYN on a mid-connection stream from the side that sent data: new connection',
      in: [C(3000, 'P', 'old'), C(9000, 'S'), C(9001, 'P', 'new')],
      want: [OPEN_NOSYN, '#1 A→B "old" f1', '#1 end closed', `open #2 A=${CLIENT} B=${SERVER} syn`, '#2 A→B "new" f3', '#2 end capture-end'],
    },
    {
      name: 'after a RST, a SYN+ACK with a new ISN starts a new connection (its receiver is A)',
      in: [...HANDSHAKE, S(5001, 'R'), S(6000, 'SA', '', { ack: 2001 }), C(2001, 'PA', 'hi', { ack: 6001 })],
      want: [OPEN, '#1 end reset', `open #2 A=${CLIENT} B=${SERVER} syn`, '#2 A→B "hi" f6', '#2 end capture-end'],
    },
  ];
  it.each(cases)('$name', (c) => check(c));

  it("a forgotten tombstone is reused for a later close and holds that connection's 4-tuple and ISNs", () => {
    // Room for one tombstone: #2's close forgets #1's, and #3 is buried in it.
    check({
      opts: { maxRecentlyClosed: 1 },
      in: [
        ...closed,
        ...openedAndClosed(other(50001), 2000, 6000),
        ...openedAndClosed(other(50002), 3000, 7000),
        C(3000, 'S', '', other(50002)), // #3's own SYN again, late: nothing new
        S(7001, 'A', '', { ack: 3002, ...other(50002) }), // a late ACK on #3's 4-tuple: nothing new
        C(1000, 'S', '', other(50002)), // #1's ISN is a new one on #3's 4-tuple: #3's tombstone goes, #4 starts
        C(1001, 'P', 'y', other(50002)), // #4's data (found by #3's 4-tuple: the tombstone's key was copied)
        C(1001, 'PA', 'x', { ack: 5002 }), // #1's 4-tuple was forgotten: a connection without SYN
      ],
      want: [
        OPEN,
        '#1 end closed',
        `open #2 A=10.0.0.1:50001 B=${SERVER} syn`,
        '#2 end closed',
        `open #3 A=10.0.0.1:50002 B=${SERVER} syn`,
        '#3 end closed',
        `open #4 A=10.0.0.1:50002 B=${SERVER} syn`,
        '#4 A→B "y" f20',
        `open #5 A=${CLIENT} B=${SERVER} nosyn`,
        '#5 A→B "x" f21',
        '#4 end capture-end',
        '#5 end capture-end',
      ],
      stats: { connections: 5, unattachedSegments: 5 },
    });
  });
});

describe('Reassembler: port reuse and late segments over IPv6 (the tombstone in the IPv6 map)', () => {
  const v6 = { client: '[2001:db8::1]:50000', server: '[2001:db8::2]:9092' };
  const OPEN6 = 'open #1 A=[2001:db8::1]:50000 B=[2001:db8::2]:9092 syn';
  const closed = openedAndClosed(v6);

  it('late data after the close starts no ghost connection', () => {
    check({ in: [...closed, C(1001, 'PA', 'x', { ack: 5002, ...v6 })], want: [OPEN6, '#1 end closed'], stats: { connections: 1, unattachedSegments: 2 } });
  });

  it('a new SYN on the closed 4-tuple starts a new connection', () => {
    check({
      in: [...closed, C(90000, 'S', '', v6), C(90001, 'P', 'again', v6)],
      want: [OPEN6, '#1 end closed', OPEN6.replace('#1', '#2'), '#2 A→B "again" f7', '#2 end capture-end'],
      stats: { connections: 2 },
    });
  });
});

describe('Reassembler: limits', () => {
  it('retires a connection idle for longer than idleTimeoutSec of capture time', () => {
    check({
      opts: { idleTimeoutSec: 10 },
      in: [
        C(1000, 'S', '', { t: 0 }),
        C(1001, 'P', 'a', { t: 0 }),
        C(2000, 'S', '', { t: 5, ...other(50001) }),
        C(2001, 'P', 'b', { t: 10, ...other(50001) }), // #1 idle for exactly 10 s: kept
        C(2002, 'P', 'c', { t: 11, ...other(50001) }), // #1 idle for 11 s: retired first
        C(1002, 'P', 'd', { t: 12 }), // #1's next byte: the same connection goes on (issue 13)
      ],
      want: [
        OPEN,
        '#1 A→B "a" f2',
        `open #2 A=10.0.0.1:50001 B=${SERVER} syn`,
        '#2 A→B "b" f4',
        '#2 A→B "c" f5',
        '#1 A→B "d" f6',
        '#2 end capture-end',
        '#1 end capture-end',
      ],
      stats: { retiredConnections: 1, connections: 2 },
    });
  });

  it('idle retirement delivers what waits behind holes first', () => {
    check({
      opts: { idleTimeoutSec: 10 },
      in: [C(1000, 'S'), C(1003, 'P', 'c'), S(1, 'P', 'x', { t: 20, ...other(50001) })],
      // Its end waits until its tombstone is forgotten (here at the capture's end): its bytes might go on.
      want: [OPEN, '#1 A→B gap 2 f2', '#1 A→B "c" f2 copy', `open #2 A=10.0.0.1:50001 B=${SERVER} nosyn`, '#2 B→A "x" f3', '#2 end capture-end', '#1 end idle'],
    });
  });

  it('evicts the least recently active connection beyond maxConnections', () => {
    const { events, stats, r } = run({
      opts: { maxConnections: 2 },
      in: [C(1000, 'S'), C(2000, 'S', '', other(50001)), C(1001, 'P', 'a'), C(3000, 'S', '', other(50002)), C(2001, 'P', 'b', other(50001))],
      want: [],
      finish: false,
    });
    expect(events).toEqual([
      OPEN,
      `open #2 A=10.0.0.1:50001 B=${SERVER} syn`,
      '#1 A→B "a" f3',
      '#2 end evicted',
      `open #3 A=10.0.0.1:50002 B=${SERVER} syn`,
      '#1 end evicted',
      `open #4 A=10.0.0.1:50001 B=${SERVER} nosyn`,
      '#4 A→B "b" f5',
    ]);
    expect(r.liveConnections).toBe(2);
    expect(stats).toMatchObject({ retiredConnections: 2, connections: 4 });
    r.finish();
    expect(r.liveConnections).toBe(0);
    expect(events.slice(8)).toEqual(['#3 end capture-end', '#4 end capture-end']);
  });
});

describe('Reassembler: ignore()', () => {
  it('stops delivery at once, drops later segments, still ends once', () => {
    check({
      hooks: { data: (conn, text) => text === 'abc' && conn.ignore() },
      in: [C(1000, 'S'), C(1004, 'P', 'def'), C(1001, 'P', 'abc'), C(1007, 'P', 'ghi'), C(1010, 'F'), S(5001, 'F')],
      want: [OPEN, '#1 A→B "abc" f3', '#1 end closed'],
      stats: { ignoredSegments: 3 },
    });
  });

  it('ignored from open(): nothing is delivered, RST still ends it', () => {
    check({
      hooks: { open: (conn) => conn.ignore() },
      in: [C(1000, 'S'), C(1001, 'P', 'abc'), S(1, 'R'), C(1004, 'P', 'late')],
      want: [OPEN, '#1 end reset'],
      stats: { ignoredSegments: 3, unattachedSegments: 1 },
    });
  });

  it('a new SYN on an ignored connection\'s 4-tuple starts a connection the Kafka stage sees again', () => {
    check({
      hooks: { open: (conn) => conn.id === 1 && conn.ignore() },
      in: [C(1000, 'S'), C(1001, 'P', 'abc'), C(8000, 'S'), C(8001, 'P', 'xyz')],
      want: [OPEN, '#1 end closed', `open #2 A=${CLIENT} B=${SERVER} syn`, '#2 A→B "xyz" f4', '#2 end capture-end'],
    });
  });
});

describe('Reassembler: delivery details', () => {
  it('buffered bytes keep their frame and capture time', () => {
    const got: [number, number, number, number][] = [];
    const r = new Reassembler(
      {
        open: () => ({
          data: (_dir, _buf, _off, len, frame, tsSec, tsNsec) => got.push([len, frame, tsSec, tsNsec]),
          gap: () => {},
          end: () => {},
        }),
      },
      { kafkaPorts: new Set([9092]) },
    );
    const seg = newTcpSegment();
    const net = newNetStats();
    [C(1000, 'S'), C(1003, 'P', 'cd', { t: 1 }), C(1001, 'P', 'ab', { t: 2 })].forEach((s, i) => {
      decodeTcp(toPacket(s, i + 1), seg, net);
      r.segment(seg);
    });
    expect(got).toEqual([
      [2, 3, T0 + 2, 3],
      [2, 2, T0 + 1, 2],
    ]);
  });

  it('carries streams past 4 GiB and across several wraps, in place, without gaps', () => {
    const chunk = 1 << 16;
    const payload = Buffer.alloc(chunk, 0x61);
    let delivered = 0;
    let inPlace = true;
    let gaps = 0;
    const r = new Reassembler(
      {
        open: () => ({
          data: (_d, buf, _o, len) => {
            delivered += len;
            inPlace &&= buf === seg.data;
          },
          gap: () => gaps++,
          end: () => {},
        }),
      },
      { kafkaPorts: new Set([9092]) },
    );
    // Build one segment by hand around a real header, then move its sequence number along.
    const seg = newTcpSegment();
    decodeTcp(toPacket(C(0xfffff000, 'S'), 1), seg, newNetStats());
    r.segment(seg);
    const header = toPacket(C(0, 'P', 'x'), 2);
    decodeTcp(header, seg, newNetStats());
    const buf = Buffer.concat([header.data.subarray(0, seg.payloadOff), payload]);
    Object.assign(seg, { data: buf, payloadLen: chunk, flags: 0x18 });
    const total = 5 * 2 ** 32 + 12345;
    let seq = 0xfffff001;
    for (let sent = 0; sent < total; ) {
      const len = Math.min(chunk, total - sent);
      seg.seq = seq;
      seg.payloadLen = len;
      r.segment(seg);
      sent += len;
      seq = (seq + len) >>> 0;
    }
    expect([delivered, inPlace, gaps]).toEqual([total, true, 0]);
    expect(r.stats).toMatchObject({ duplicateSegments: 0, outOfOrderSegments: 0 });
  });
});

describe('TcpConversation', () => {
  it('builds a whole connection the reassembler puts back together', () => {
    const c = new TcpConversation({ client: '10.0.0.1:50000', server: '10.0.0.2:9092', mss: 1000 });
    c.handshake();
    const request = 'q'.repeat(2500);
    expect(c.clientSends(request, { acked: true })).toHaveLength(4);
    c.serverSends('response');
    c.close();
    expect(c.frames).toHaveLength(3 + 4 + 1 + 3);
    expect(c.frames.slice(0, 2).map((f) => [f.tsSec, f.tsNsec])).toEqual([[T0, 0], [T0, 100_000]]);

    const streams: [string, string] = ['', ''];
    const ends: string[] = [];
    const r = new Reassembler(
      {
        open: (conn) => {
          ends.push(`open ${ep(conn.a)} ${ep(conn.b)} ${conn.synSeen}`);
          return {
            data: (dir, buf, off, len) => (streams[dir] += buf.toString('latin1', off, off + len)),
            gap: (dir, n) => ends.push(`gap ${dir} ${n}`),
            end: (reason) => ends.push(reason),
          };
        },
      },
      { kafkaPorts: new Set([9092]) },
    );
    const seg = newTcpSegment();
    const net = newNetStats();
    for (const p of c.packetRefs()) if (decodeTcp(p, seg, net)) r.segment(seg);
    expect(streams).toEqual([request, 'response']);
    expect(ends).toEqual(['open 10.0.0.1:50000 10.0.0.2:9092 true', 'closed']);
    expect(net.tcpPackets).toBe(11);
  });

  it('a lost segment the server acknowledges becomes a gap', () => {
    const c = new TcpConversation({ client: '[2001:db8::1]:50000', server: '[2001:db8::2]:9092', mss: 4, clientIsn: 0xfffffffe });
    c.handshake();
    const sent = c.clientSends(bytes('abcdefghij'));
    c.frames.splice(c.frames.indexOf(sent[1]!), 1); // 'efgh' never captured
    c.ack('server');
    c.wait(1.5).serverSends('ok');
    const events = replay(c.packetRefs());
    // Frames: SYN, SYN+ACK, ACK, 'abcd', ('efgh' lost), 'ij', ACK, 'ok' 1.5 s later.
    expect(events).toEqual(['A abcd', 'A gap 4', 'A ij', 'B ok']);
    expect(c.frames).toHaveLength(7);
    expect([c.frames[6]!.tsSec, c.frames[6]!.tsNsec]).toEqual([T0 + 1, 500_000_000 + 7 * 100_000]);
  });
});

function replay(refs: PacketRef[]): string[] {
  const events: string[] = [];
  const r = new Reassembler(
    {
      open: () => ({
        data: (dir, buf, off, len) => events.push(`${dir === 0 ? 'A' : 'B'} ${buf.toString('latin1', off, off + len)}`),
        gap: (dir, n) => events.push(`${dir === 0 ? 'A' : 'B'} gap ${n}`),
        end: () => {},
      }),
    },
    { kafkaPorts: new Set([9092]) },
  );
  const seg = newTcpSegment();
  const net = newNetStats();
  for (const p of refs) if (decodeTcp(p, seg, net)) r.segment(seg);
  return events;
}
