import { describe, expect, it } from 'vitest';
import { LinkType, type PacketRef } from '../src/capture/types.js';
import { formatAddress, formatEndpoint } from '../src/net/address.js';
import { decodeTcp } from '../src/net/decode.js';
import { newNetStats, newTcpSegment, type NetStats, type TcpSegment } from '../src/net/types.js';
import {
  AddressFamily,
  type Bytes,
  concat,
  EtherType,
  ethernet,
  IpProto,
  ipv4,
  ipv4Address,
  ipv6,
  ipv6Address,
  nullLoop,
  packetRef,
  sll,
  sll2,
  tcp,
  u16,
} from './builder/packets.js';

/** The segment every link-layer case carries: 50000 → 9092, 'hello'. */
const SEGMENT = tcp({ sport: 50000, dport: 9092, seq: 1000, ack: 2000, flags: 'PA' }, 'hello');
const IP4 = ipv4({ src: '10.0.0.1', dst: '10.0.0.2' }, SEGMENT);
const IP6 = ipv6({ src: '2001:db8::1', dst: '2001:db8::2' }, SEGMENT);

const WANT4 = { ipVersion: 4, src: '10.0.0.1:50000', dst: '10.0.0.2:9092', seq: 1000, ack: 2000, flags: 0x18, payload: 'hello', missingLen: 0 };
const WANT6 = { ...WANT4, ipVersion: 6, src: '[2001:db8::1]:50000', dst: '[2001:db8::2]:9092' };

interface Decoded {
  ok: boolean;
  seg: TcpSegment;
  stats: NetStats;
}

function decode(p: PacketRef): Decoded {
  const seg = newTcpSegment();
  const stats = newNetStats();
  return { ok: decodeTcp(p, seg, stats), seg, stats };
}

function summary(s: TcpSegment) {
  return {
    ipVersion: s.ipVersion,
    src: formatEndpoint(formatAddress(s.data, s.srcAddrOff, s.ipVersion), s.srcPort),
    dst: formatEndpoint(formatAddress(s.data, s.dstAddrOff, s.ipVersion), s.dstPort),
    seq: s.seq,
    ack: s.ack,
    flags: s.flags,
    payload: s.data.toString('latin1', s.payloadOff, s.payloadOff + s.payloadLen),
    missingLen: s.missingLen,
  };
}

/** Counters as a plain object, for exact comparison. */
function counts(stats: NetStats) {
  return {
    tcp: stats.tcpPackets,
    nonTcp: stats.nonTcpPackets,
    malformed: stats.malformedPackets,
    fragments: stats.ipFragments,
    unknown: [...stats.unknownLinkTypes],
  };
}

const ONE_TCP = { tcp: 1, nonTcp: 0, malformed: 0, fragments: 0, unknown: [] };
const ONE_NON_TCP = { tcp: 0, nonTcp: 1, malformed: 0, fragments: 0, unknown: [] };
const ONE_MALFORMED = { tcp: 0, nonTcp: 0, malformed: 1, fragments: 0, unknown: [] };
const ONE_FRAGMENT = { tcp: 0, nonTcp: 0, malformed: 0, fragments: 1, unknown: [] };

describe('decodeTcp: link types', () => {
  const cases: { name: string; linkType: number; frame: Bytes; linkLen: number; v6?: boolean }[] = [
    { name: 'Ethernet IPv4', linkType: LinkType.ETHERNET, frame: ethernet(IP4), linkLen: 14 },
    { name: 'Ethernet IPv6', linkType: LinkType.ETHERNET, frame: ethernet(IP6), linkLen: 14, v6: true },
    { name: 'Ethernet 802.1Q', linkType: LinkType.ETHERNET, frame: ethernet(IP4, { vlan: [100] }), linkLen: 18 },
    {
      name: 'Ethernet QinQ 802.1ad + 802.1Q',
      linkType: LinkType.ETHERNET,
      frame: ethernet(IP6, { vlan: [{ tpid: EtherType.QINQ, id: 10 }, 20] }),
      linkLen: 22,
      v6: true,
    },
    {
      name: 'Ethernet 0x9100 + two 802.1Q tags',
      linkType: LinkType.ETHERNET,
      frame: ethernet(IP4, { vlan: [{ tpid: EtherType.QINQ_OLD, id: 1 }, 2, { id: 3, pcp: 5 }] }),
      linkLen: 26,
    },
    { name: 'Linux SLL IPv4', linkType: LinkType.LINUX_SLL, frame: sll(IP4), linkLen: 16 },
    { name: 'Linux SLL IPv6', linkType: LinkType.LINUX_SLL, frame: sll(IP6), linkLen: 16, v6: true },
    {
      name: 'Linux SLL with a VLAN tag',
      linkType: LinkType.LINUX_SLL,
      frame: sll(concat(u16(7), u16(EtherType.IPV4), IP4), EtherType.VLAN),
      linkLen: 20,
    },
    { name: 'Linux SLL2 IPv4', linkType: LinkType.LINUX_SLL2, frame: sll2(IP4), linkLen: 20 },
    { name: 'Linux SLL2 IPv6', linkType: LinkType.LINUX_SLL2, frame: sll2(IP6), linkLen: 20, v6: true },
    {
      name: 'Linux SLL2 with a VLAN tag',
      linkType: LinkType.LINUX_SLL2,
      frame: sll2(concat(u16(7), u16(EtherType.IPV6), IP6), EtherType.VLAN),
      linkLen: 24,
      v6: true,
    },
    { name: 'raw IPv4 (101)', linkType: LinkType.RAW, frame: IP4, linkLen: 0 },
    { name: 'raw IPv6 (101)', linkType: LinkType.RAW, frame: IP6, linkLen: 0, v6: true },
    { name: 'IPv4 (228)', linkType: LinkType.IPV4, frame: IP4, linkLen: 0 },
    { name: 'IPv6 (229)', linkType: LinkType.IPV6, frame: IP6, linkLen: 0, v6: true },
    { name: 'NULL AF_INET little-endian', linkType: LinkType.NULL, frame: nullLoop(IP4, AddressFamily.INET), linkLen: 4 },
    { name: 'NULL AF_INET big-endian', linkType: LinkType.NULL, frame: nullLoop(IP4, AddressFamily.INET, true), linkLen: 4 },
    ...[AddressFamily.INET6_BSD, AddressFamily.INET6_FREEBSD, AddressFamily.INET6_DARWIN].flatMap((family) =>
      [false, true].map((bigEndian) => ({
        name: `NULL AF_INET6 ${family} ${bigEndian ? 'big' : 'little'}-endian`,
        linkType: LinkType.NULL,
        frame: nullLoop(IP6, family, bigEndian),
        linkLen: 4,
        v6: true,
      })),
    ),
    { name: 'LOOP AF_INET', linkType: LinkType.LOOP, frame: nullLoop(IP4, AddressFamily.INET, true), linkLen: 4 },
    { name: 'LOOP AF_INET6 (30)', linkType: LinkType.LOOP, frame: nullLoop(IP6, AddressFamily.INET6_DARWIN, true), linkLen: 4, v6: true },
  ];

  it.each(cases)('$name', ({ linkType, frame, linkLen, v6 }) => {
    const p = packetRef(frame, { linkType, frame: 7, tsSec: 1_700_000_123, tsNsec: 456 });
    const { ok, seg, stats } = decode(p);
    expect(ok).toBe(true);
    expect(counts(stats)).toEqual(ONE_TCP);
    expect(summary(seg)).toEqual(v6 ? WANT6 : WANT4);
    expect([seg.frame, seg.tsSec, seg.tsNsec]).toEqual([7, 1_700_000_123, 456]);
    expect(seg.srcAddrOff).toBe(linkLen + (v6 ? 8 : 12));
    expect(seg.dstAddrOff).toBe(linkLen + (v6 ? 24 : 16));
    expect(seg.payloadOff).toBe(linkLen + (v6 ? 40 : 20) + 20);
    expect(seg.data).toBe(p.data);
  });

  it('reads the packet at its offset in a larger buffer', () => {
    const p = packetRef(ethernet(IP4), { offset: 7 });
    const { ok, seg } = decode(p);
    expect(ok).toBe(true);
    expect(summary(seg)).toEqual(WANT4);
    expect([seg.srcAddrOff, seg.payloadOff]).toEqual([7 + 14 + 12, 7 + 14 + 20 + 20]);
  });

  it('counts unknown link types per type', () => {
    const stats = newNetStats();
    const seg = newTcpSegment();
    for (const linkType of [105, 127, 105]) expect(decodeTcp(packetRef(IP4, { linkType }), seg, stats)).toBe(false);
    expect(counts(stats)).toEqual({ tcp: 0, nonTcp: 0, malformed: 0, fragments: 0, unknown: [[105, 2], [127, 1]] });
  });
});

describe('decodeTcp: not TCP', () => {
  const udp = ipv4({ src: '10.0.0.1', dst: '10.0.0.2', proto: IpProto.UDP }, new Uint8Array(8));
  const cases: { name: string; linkType: number; frame: Bytes }[] = [
    { name: 'ARP', linkType: LinkType.ETHERNET, frame: ethernet(new Uint8Array(28), { etherType: EtherType.ARP }) },
    { name: 'ARP in a VLAN', linkType: LinkType.ETHERNET, frame: ethernet(new Uint8Array(28), { vlan: [5], etherType: EtherType.ARP }) },
    { name: '802.3 length field', linkType: LinkType.ETHERNET, frame: ethernet(new Uint8Array(46), { etherType: 46 }) },
    { name: 'UDP over IPv4', linkType: LinkType.ETHERNET, frame: ethernet(udp) },
    {
      name: 'ICMPv6',
      linkType: LinkType.ETHERNET,
      frame: ethernet(ipv6({ src: '::1', dst: '::1', proto: IpProto.ICMPV6 }, new Uint8Array(8))),
    },
    {
      name: 'ESP after a hop-by-hop header',
      linkType: LinkType.RAW,
      frame: ipv6({ src: '::1', dst: '::1', extHeaders: [{ type: 0 }], proto: 50 }, new Uint8Array(16)),
    },
    { name: 'IPv6 No Next Header', linkType: LinkType.RAW, frame: ipv6({ src: '::1', dst: '::1', proto: 59 }, new Uint8Array(0)) },
    { name: 'SLL ARP', linkType: LinkType.LINUX_SLL, frame: sll(new Uint8Array(28), EtherType.ARP) },
    { name: 'SLL2 ARP', linkType: LinkType.LINUX_SLL2, frame: sll2(new Uint8Array(28), EtherType.ARP) },
    { name: 'NULL unknown family 7', linkType: LinkType.NULL, frame: nullLoop(IP4, 7) },
    // LOOP is network order only: AF_INET written little-endian is family 0x02000000.
    { name: 'LOOP family in host order', linkType: LinkType.LOOP, frame: nullLoop(IP4, AddressFamily.INET) },
    {
      name: 'UDP fragment',
      linkType: LinkType.RAW,
      frame: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', proto: IpProto.UDP, moreFragments: true }, new Uint8Array(8)),
    },
    {
      name: 'IPv6 UDP fragment',
      linkType: LinkType.RAW,
      frame: ipv6({ src: '::1', dst: '::1', extHeaders: [{ type: 44, more: true }], proto: IpProto.UDP }, new Uint8Array(8)),
    },
  ];

  it.each(cases)('$name', ({ linkType, frame }) => {
    const { ok, stats } = decode(packetRef(frame, { linkType }));
    expect(ok).toBe(false);
    expect(counts(stats)).toEqual(ONE_NON_TCP);
  });
});

describe('decodeTcp: IP and TCP headers', () => {
  it('skips IPv4 options (IHL) and TCP options (data offset)', () => {
    const segment = tcp(
      {
        sport: 50000,
        dport: 9092,
        seq: 1000,
        ack: 2000,
        flags: 'PA',
        // MSS 1460, SACK permitted, timestamps, NOP, window scale 7: 20 option bytes.
        options: [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7],
      },
      'hello',
    );
    // Record Route with room for two addresses (11 bytes), then EOL: 12 option bytes.
    const ip = ipv4({ src: '10.0.0.1', dst: '10.0.0.2', options: [7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0] }, segment);
    const { ok, seg } = decode(packetRef(ethernet(ip)));
    expect(ok).toBe(true);
    expect(summary(seg)).toEqual(WANT4);
    expect(seg.payloadOff).toBe(14 + 32 + 40);
  });

  it('skips IPv6 extension headers: hop-by-hop, destination options, routing, atomic fragment, AH', () => {
    const ip = ipv6(
      {
        src: '2001:db8::1',
        dst: '2001:db8::2',
        extHeaders: [{ type: 0 }, { type: 60, length: 16 }, { type: 43 }, { type: 44 }, { type: 51, length: 16 }],
      },
      SEGMENT,
    );
    const { ok, seg } = decode(packetRef(ethernet(ip)));
    expect(ok).toBe(true);
    expect(summary(seg)).toEqual(WANT6);
    expect(seg.payloadOff).toBe(14 + 40 + 8 + 16 + 8 + 8 + 16 + 20);
  });

  it('keeps all flag bits; sequence numbers from 2^31 up come out as signed 32-bit integers', () => {
    const frame = ethernet(ipv4({ src: '10.0.0.1', dst: '10.0.0.2' }, tcp({ sport: 1, dport: 2, seq: 0xffffffff, ack: 0x80000000, flags: 'FSRPAUEC' })));
    const { seg } = decode(packetRef(frame));
    expect([seg.flags, seg.seq, seg.ack, seg.payloadLen]).toEqual([0xff, -1, -0x80000000, 0]);
    expect([seg.seq >>> 0, seg.ack >>> 0]).toEqual([0xffffffff, 0x80000000]);
  });
});

describe('decodeTcp: payload length comes from IP, not from the frame', () => {
  it('Ethernet padding of a bare ACK is not payload', () => {
    const frame = ethernet(ipv4({ src: '10.0.0.1', dst: '10.0.0.2' }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'A' })), { pad: true });
    expect(frame.length).toBe(60);
    const { ok, seg } = decode(packetRef(frame));
    expect(ok).toBe(true);
    expect([seg.payloadLen, seg.missingLen]).toEqual([0, 0]);
  });

  it('Ethernet padding after a 2-byte payload is not payload', () => {
    const frame = ethernet(ipv4({ src: '10.0.0.1', dst: '10.0.0.2' }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'PA' }, 'hi')), { pad: true });
    expect(frame.length).toBe(60);
    const { seg } = decode(packetRef(frame));
    expect([seg.payloadLen, seg.missingLen]).toEqual([2, 0]);
  });

  it('IPv6 trailing bytes (an Ethernet FCS) are not payload', () => {
    const frame = concat(ethernet(IP6), Uint8Array.of(0xde, 0xad, 0xbe, 0xef));
    const { seg } = decode(packetRef(frame));
    expect(summary(seg)).toEqual(WANT6);
  });

  it.each([
    { name: 'IPv4', ip: ipv4({ src: '10.0.0.1', dst: '10.0.0.2' }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'A' }, 'x'.repeat(100))), headers: 14 + 20 + 20 },
    { name: 'IPv6', ip: ipv6({ src: '::1', dst: '::2' }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'A' }, 'x'.repeat(100))), headers: 14 + 40 + 20 },
  ])('$name cut by snaplen: captured part is payload, the rest missing', ({ ip, headers }) => {
    const frame = ethernet(ip);
    const p = packetRef(frame.subarray(0, headers + 30), { origLen: frame.length });
    const { ok, seg } = decode(p);
    expect(ok).toBe(true);
    expect([seg.payloadLen, seg.missingLen]).toEqual([30, 70]);
  });

  it('IPv4 total length 0 (TSO on the capturing host): the captured length counts', () => {
    const ip = ipv4({ src: '10.0.0.1', dst: '10.0.0.2', totalLength: 0 }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'A' }, 'y'.repeat(3000)));
    expect(decode(packetRef(ethernet(ip))).seg.payloadLen).toBe(3000);
    // ... and when it was also cut by snaplen, the wire length tells what is missing.
    const frame = ethernet(ip);
    const { ok, seg } = decode(packetRef(frame.subarray(0, 14 + 40 + 1000), { origLen: frame.length }));
    expect(ok).toBe(true);
    expect([seg.payloadLen, seg.missingLen]).toEqual([1000, 2000]);
  });

  it('IPv6 payload length 0 (jumbogram / large send offload): the captured length counts', () => {
    const ip = ipv6({ src: '::1', dst: '::2', payloadLength: 0 }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'A' }, 'y'.repeat(70000)));
    const { ok, seg } = decode(packetRef(ethernet(ip)));
    expect(ok).toBe(true);
    expect([seg.payloadLen, seg.missingLen]).toEqual([70000, 0]);
  });
});

describe('decodeTcp: IP fragments are counted and skipped', () => {
  const seg = tcp({ sport: 1, dport: 2, seq: 5, flags: 'A' }, 'z'.repeat(16));
  const cases: { name: string; ip: Bytes; ok?: boolean }[] = [
    { name: 'IPv4 first fragment (MF, offset 0)', ip: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', moreFragments: true }, seg) },
    { name: 'IPv4 middle fragment', ip: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', moreFragments: true, fragmentOffset: 185 }, seg) },
    { name: 'IPv4 last fragment (offset only)', ip: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', fragmentOffset: 370 }, seg) },
    { name: 'IPv6 first fragment', ip: ipv6({ src: '::1', dst: '::2', extHeaders: [{ type: 44, more: true }] }, seg) },
    { name: 'IPv6 last fragment', ip: ipv6({ src: '::1', dst: '::2', extHeaders: [{ type: 44, offset: 100 }] }, seg) },
    {
      name: 'IPv6 fragment after hop-by-hop, before destination options',
      ip: ipv6({ src: '::1', dst: '::2', extHeaders: [{ type: 0 }, { type: 44, offset: 1 }, { type: 60 }] }, seg),
    },
  ];

  it.each(cases)('$name', ({ ip }) => {
    const { ok, stats } = decode(packetRef(ethernet(ip)));
    expect(ok).toBe(false);
    expect(counts(stats)).toEqual(ONE_FRAGMENT);
  });

  it('Don\'t Fragment alone is not a fragment', () => {
    const { ok } = decode(packetRef(ethernet(ipv4({ src: '10.0.0.1', dst: '10.0.0.2', dontFragment: true }, seg))));
    expect(ok).toBe(true);
  });
});

describe('decodeTcp: malformed packets', () => {
  const bare = tcp({ sport: 1, dport: 2, seq: 5, flags: 'A' });
  const cases: { name: string; linkType: number; frame: Bytes }[] = [
    { name: 'IPv4 IHL below 5', linkType: LinkType.RAW, frame: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', headerLength: 16 }, bare) },
    { name: 'IPv4 IHL past the packet', linkType: LinkType.RAW, frame: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', headerLength: 60 }, bare.subarray(0, 20)) },
    { name: 'IPv4 total length below the header', linkType: LinkType.RAW, frame: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', totalLength: 12 }, bare) },
    { name: 'IPv4 total length ending inside the TCP header', linkType: LinkType.RAW, frame: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', totalLength: 30 }, bare) },
    { name: 'EtherType IPv4 holding version 6', linkType: LinkType.ETHERNET, frame: ethernet(IP6, { etherType: EtherType.IPV4 }) },
    { name: 'link type 228 holding version 6', linkType: LinkType.IPV4, frame: IP6 },
    { name: 'raw IP version 5', linkType: LinkType.RAW, frame: ipv4({ src: '10.0.0.1', dst: '10.0.0.2', version: 5 }, bare) },
    { name: 'TCP data offset below 5', linkType: LinkType.RAW, frame: ipv4({ src: '10.0.0.1', dst: '10.0.0.2' }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'A', headerLength: 16 })) },
    { name: 'TCP data offset past the IP payload', linkType: LinkType.RAW, frame: ipv4({ src: '10.0.0.1', dst: '10.0.0.2' }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'A', headerLength: 60 }, 'abcd')) },
    { name: 'IPv6 extension header past the payload length', linkType: LinkType.RAW, frame: ipv6({ src: '::1', dst: '::2', extHeaders: [{ type: 60, length: 64 }], payloadLength: 32 }, bare) },
    { name: 'empty Ethernet frame', linkType: LinkType.ETHERNET, frame: new Uint8Array(0) },
    { name: 'empty raw packet', linkType: LinkType.RAW, frame: new Uint8Array(0) },
    { name: 'VLAN tag cut short', linkType: LinkType.ETHERNET, frame: ethernet(new Uint8Array(0), { etherType: EtherType.VLAN }) },
    { name: 'NULL header cut short', linkType: LinkType.NULL, frame: Uint8Array.of(2, 0) },
  ];

  it.each(cases)('$name', ({ linkType, frame }) => {
    const { ok, stats } = decode(packetRef(frame, { linkType }));
    expect(ok).toBe(false);
    expect(counts(stats)).toEqual(ONE_MALFORMED);
  });

  const valid: { name: string; linkType: number; frame: Bytes; headers: number }[] = [
    {
      name: 'Ethernet/IPv4 options/TCP options',
      linkType: LinkType.ETHERNET,
      frame: ethernet(ipv4({ src: '10.0.0.1', dst: '10.0.0.2', options: [1, 1, 1, 0] }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'PA', options: [2, 4, 5, 0xb4] }, 'payload!'))),
      headers: 14 + 24 + 24,
    },
    {
      name: 'QinQ/IPv6 extension headers/TCP',
      linkType: LinkType.ETHERNET,
      frame: ethernet(ipv6({ src: '::1', dst: '::2', extHeaders: [{ type: 0 }, { type: 44 }, { type: 51 }] }, tcp({ sport: 1, dport: 2, seq: 5, flags: 'PA' }, 'payload!')), { vlan: [{ tpid: EtherType.QINQ, id: 1 }, 2] }),
      headers: 22 + 40 + 8 + 8 + 12 + 20,
    },
    { name: 'SLL2/IPv4/TCP', linkType: LinkType.LINUX_SLL2, frame: sll2(IP4), headers: 20 + 20 + 20 },
    { name: 'NULL/IPv6/TCP', linkType: LinkType.NULL, frame: nullLoop(IP6, AddressFamily.INET6_DARWIN), headers: 4 + 40 + 20 },
  ];

  it.each(valid)('$name cut at every offset: malformed inside the headers, missing bytes after', ({ linkType, frame, headers }) => {
    const stats = newNetStats();
    const seg = newTcpSegment();
    for (let cut = 0; cut <= frame.length; cut++) {
      const p = packetRef(frame.subarray(0, cut), { linkType, origLen: frame.length });
      const ok = decodeTcp(p, seg, stats);
      expect(ok).toBe(cut >= headers);
      if (ok) expect([seg.payloadLen, seg.missingLen]).toEqual([cut - headers, frame.length - cut]);
    }
    expect(counts(stats)).toEqual({ tcp: frame.length - headers + 1, nonTcp: 0, malformed: headers, fragments: 0, unknown: [] });
  });

  it('never throws on mutated and cut packets, on any link type', () => {
    let state = 0x12345678;
    const random = (n: number): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    const bases = [...valid, { linkType: LinkType.RAW, frame: IP4 }, { linkType: LinkType.LOOP, frame: nullLoop(IP6, 24, true) }, { linkType: 42, frame: IP4 }];
    const stats = newNetStats();
    const seg = newTcpSegment();
    const packets = 50_000;
    for (let i = 0; i < packets; i++) {
      const base = bases[i % bases.length]!;
      const data = new Uint8Array(random(base.frame.length + 8));
      data.set(base.frame.subarray(0, data.length));
      const flips = random(4);
      for (let f = 0; f < flips && data.length > 0; f++) data[random(data.length)] = random(256);
      decodeTcp(packetRef(data, { linkType: base.linkType, origLen: data.length + random(3) * 100 }), seg, stats);
    }
    const { tcp: t, nonTcp, malformed, fragments, unknown } = counts(stats);
    expect(t + nonTcp + malformed + fragments + unknown.reduce((n, [, c]) => n + c, 0)).toBe(packets);
    expect(Math.min(t, nonTcp, malformed, fragments)).toBeGreaterThan(0);
  });
});

describe('formatAddress / formatEndpoint', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1'],
    ['255.255.255.255', '255.255.255.255'],
    ['0.0.0.0', '0.0.0.0'],
  ])('IPv4 %s', (text, want) => {
    expect(formatAddress(concat(Uint8Array.of(9, 9), ipv4Address(text)), 2, 4)).toBe(want);
  });

  // RFC 5952 §4: lowercase, no leading zeros, '::' for the longest run of two or more zero
  // groups (the first on ties), never for a single zero group; §5: IPv4-mapped keeps dotted quads.
  it.each([
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['1:0:0:0:0:0:0:0', '1::'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:0001', '2001:db8:aaaa:bbbb:cccc:dddd:eeee:1'],
    ['FE80:0:0:0:ABCD:EF01:0:0', 'fe80::abcd:ef01:0:0'],
    ['0:0:0:0:0:ffff:c000:0201', '::ffff:192.0.2.1'],
    ['0:0:0:0:0:0:c000:0201', '::c000:201'],
    ['64:ff9b:0:0:0:0:c000:0201', '64:ff9b::c000:201'],
    ['0:0:0:0:ffff:0:c000:0201', '::ffff:0:c000:201'],
  ])('IPv6 %s → %s', (text, want) => {
    expect(formatAddress(concat(Uint8Array.of(9), ipv6Address(text)), 1, 6)).toBe(want);
  });

  it.each([
    ['10.0.0.1', 9092, '10.0.0.1:9092'],
    ['2001:db8::1', 9092, '[2001:db8::1]:9092'],
    ['::ffff:192.0.2.1', 0, '[::ffff:192.0.2.1]:0'],
  ])('endpoint %s %d', (ip, port, want) => {
    expect(formatEndpoint(ip, port)).toBe(want);
  });
});

describe('TCP window and window scale (RFC 7323 §2.2)', () => {
  const syn = (options: number[], flags = 'S') =>
    decode(packetRef(ethernet(ipv4({ src: '10.0.0.1', dst: '10.0.0.2' }, tcp({ sport: 50000, dport: 9092, seq: 1, flags, window: 29200, options }))))).seg;
  it('reads the window of every segment and the scale option of a SYN, after NOPs and other options', () => {
    // MSS 1460, SACK permitted, timestamps, NOP, window scale 7: Linux's SYN.
    const linux = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];
    expect([syn(linux).window, syn(linux).windowScale]).toEqual([29200, 7]);
    expect(syn([2, 4, 0x05, 0xb4]).windowScale).toBe(-1);
    expect(syn([3, 3, 20]).windowScale).toBe(14); // RFC 7323 §2.3: a shift above 14 is taken as 14
    expect(syn([3, 3, 7], 'A').windowScale).toBe(-1); // only a SYN's option counts
    expect(syn([2, 40, 3, 3]).windowScale).toBe(-1); // an option running past the header
    expect(syn([0, 3, 3, 7]).windowScale).toBe(-1); // after the end of the option list
  });
});
