/**
 * Where things are in a well-formed seed capture, so that mutations can aim at fields rather than
 * at random bytes: pcap records and pcapng blocks, and in each packet the IP, TCP and Kafka
 * fields whose lengths a hostile capture would lie about. Only seeds (captures kcid's own test
 * builders or real tools wrote) are parsed here, so this code trusts what it reads but never
 * reads outside the buffer.
 */

export type Width = 1 | 2 | 4;

/** A length-like field: where it is, how wide, its byte order. */
export interface Field {
  at: number;
  width: Width;
  le: boolean;
  /** What it is, for the case's description: 'pcap incl_len', 'ipv4 total length', ... */
  name: string;
}

/** One record (pcap) or block (pcapng): [start, end) in the file. */
export interface Unit {
  start: number;
  end: number;
  /** Offset of the packet bytes, -1 for a non-packet block. */
  data: number;
  dataLen: number;
  linkType: number;
}

export interface Layout {
  format: 'pcap' | 'pcapng' | 'other';
  /** Bytes before the first record (the pcap file header; 0 for pcapng, whose SHB is a unit). */
  headerLen: number;
  units: Unit[];
  /** Capture-format length fields (pcap header and record lengths, pcapng block lengths and fields). */
  captureFields: Field[];
  ipFields: Field[];
  tcpFields: Field[];
  /** Offsets of TCP payloads that start with what may be a Kafka frame size, and their lengths. */
  payloads: { at: number; len: number }[];
}

const SHB = 0x0a0d0d0a;

export function layoutOf(file: Buffer): Layout {
  const layout: Layout = { format: 'other', headerLen: 0, units: [], captureFields: [], ipFields: [], tcpFields: [], payloads: [] };
  if (file.length < 24) return layout;
  const magicLe = file.readUInt32LE(0);
  if (magicLe === 0xa1b2c3d4 || magicLe === 0xa1b23c4d) pcapLayout(file, true, layout);
  else if (file.readUInt32BE(0) === 0xa1b2c3d4 || file.readUInt32BE(0) === 0xa1b23c4d) pcapLayout(file, false, layout);
  else if (magicLe === SHB) pcapngLayout(file, layout);
  for (const u of layout.units) if (u.data >= 0) packetFields(file, u, layout);
  return layout;
}

function pcapLayout(file: Buffer, le: boolean, layout: Layout): void {
  const u32 = (at: number): number => (le ? file.readUInt32LE(at) : file.readUInt32BE(at));
  layout.format = 'pcap';
  layout.headerLen = 24;
  layout.captureFields.push({ at: 16, width: 4, le, name: 'pcap snaplen' }, { at: 20, width: 4, le, name: 'pcap link type' });
  const linkType = u32(20) & 0xffff;
  for (let at = 24; at + 16 <= file.length; ) {
    const capLen = u32(at + 8);
    const end = at + 16 + capLen;
    if (end > file.length) break;
    layout.units.push({ start: at, end, data: at + 16, dataLen: capLen, linkType });
    layout.captureFields.push({ at: at + 8, width: 4, le, name: 'pcap incl_len' }, { at: at + 12, width: 4, le, name: 'pcap orig_len' });
    at = end;
  }
}

function pcapngLayout(file: Buffer, layout: Layout): void {
  layout.format = 'pcapng';
  let le = true;
  const linkTypes: number[] = [];
  for (let at = 0; at + 12 <= file.length; ) {
    const type = file.readUInt32LE(at);
    if (type === SHB) le = file.readUInt32LE(at + 8) === 0x1a2b3c4d;
    const u32 = (p: number): number => (le ? file.readUInt32LE(p) : file.readUInt32BE(p));
    const u16 = (p: number): number => (le ? file.readUInt16LE(p) : file.readUInt16BE(p));
    const blockType = u32(at);
    const len = u32(at + 4);
    if (len < 12 || at + len > file.length) break;
    if (blockType === SHB) linkTypes.length = 0;
    const unit: Unit = { start: at, end: at + len, data: -1, dataLen: 0, linkType: 0 };
    layout.captureFields.push({ at: at + 4, width: 4, le, name: 'pcapng block length' }, { at: at + len - 4, width: 4, le, name: 'pcapng trailing block length' });
    if (blockType === 1 && len >= 20) {
      linkTypes.push(u16(at + 8));
      layout.captureFields.push({ at: at + 12, width: 4, le, name: 'pcapng idb snaplen' });
      if (len >= 24) layout.captureFields.push({ at: at + 18, width: 2, le, name: 'pcapng idb option length' });
    } else if (blockType === 6 && len >= 32) {
      const iface = u32(at + 8);
      unit.data = at + 28;
      unit.dataLen = Math.min(u32(at + 20), len - 32);
      unit.linkType = linkTypes[iface] ?? 1;
      layout.captureFields.push(
        { at: at + 8, width: 4, le, name: 'pcapng epb interface id' },
        { at: at + 20, width: 4, le, name: 'pcapng epb captured length' },
        { at: at + 24, width: 4, le, name: 'pcapng epb original length' },
      );
    } else if (blockType === 3 && len >= 16) {
      unit.data = at + 12;
      unit.dataLen = Math.min(u32(at + 8), len - 16);
      unit.linkType = linkTypes[0] ?? 1;
      layout.captureFields.push({ at: at + 8, width: 4, le, name: 'pcapng spb original length' });
    }
    layout.units.push(unit);
    at += len;
  }
}

/** The link header's length and the EtherType-like protocol it announces, for the link types seeds use. */
function linkHeader(file: Buffer, at: number, end: number, linkType: number): { l3: number } | null {
  switch (linkType) {
    case 1: {
      let p = at + 12;
      while (p + 2 <= end && [0x8100, 0x88a8, 0x9100].includes(file.readUInt16BE(p))) p += 4;
      return { l3: p + 2 };
    }
    case 113:
      return { l3: at + 16 };
    case 276:
      return { l3: at + 20 };
    case 0:
    case 108:
      return { l3: at + 4 };
    case 101:
    case 228:
    case 229:
      return { l3: at };
    default:
      return null;
  }
}

function packetFields(file: Buffer, u: Unit, layout: Layout): void {
  const end = u.data + u.dataLen;
  const link = linkHeader(file, u.data, end, u.linkType);
  if (link === null || link.l3 >= end) return;
  const ip = link.l3;
  const version = file[ip]! >> 4;
  let tcp: number;
  let ipEnd: number;
  if (version === 4 && ip + 20 <= end) {
    const ihl = (file[ip]! & 0x0f) * 4;
    if (file[ip + 9] !== 6) return;
    layout.ipFields.push(
      { at: ip, width: 1, le: false, name: 'ipv4 version/ihl' },
      { at: ip + 2, width: 2, le: false, name: 'ipv4 total length' },
      { at: ip + 6, width: 2, le: false, name: 'ipv4 flags/fragment offset' },
    );
    tcp = ip + ihl;
    ipEnd = Math.min(end, ip + file.readUInt16BE(ip + 2));
  } else if (version === 6 && ip + 40 <= end) {
    if (file[ip + 6] !== 6) return;
    layout.ipFields.push(
      { at: ip + 4, width: 2, le: false, name: 'ipv6 payload length' },
      { at: ip + 6, width: 1, le: false, name: 'ipv6 next header' },
    );
    tcp = ip + 40;
    ipEnd = Math.min(end, ip + 40 + file.readUInt16BE(ip + 4));
  } else {
    return;
  }
  if (tcp + 20 > ipEnd) return;
  layout.tcpFields.push(
    { at: tcp + 4, width: 4, le: false, name: 'tcp sequence number' },
    { at: tcp + 8, width: 4, le: false, name: 'tcp acknowledgement number' },
    { at: tcp + 12, width: 1, le: false, name: 'tcp data offset' },
    { at: tcp + 13, width: 1, le: false, name: 'tcp flags' },
  );
  const payload = tcp + (file[tcp + 12]! >> 4) * 4;
  if (payload < ipEnd) layout.payloads.push({ at: payload, len: ipEnd - payload });
}
