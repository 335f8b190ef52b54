/**
 * pcapng (draft-ietf-opsawg-pcapng): a sequence of blocks, each
 *
 *   block type u32 | block total length u32 | body | block total length u32
 *
 * with the total length a multiple of 4 and at least 12. A Section Header Block (SHB) opens each
 * section and fixes the byte order of everything up to the next SHB; Interface Description Blocks
 * (IDB) number the section's interfaces from 0, and packet blocks name their interface.
 */
import { IMPLAUSIBLE, MAX_PACKET_BYTES, PLAUSIBLE, RecordParser } from './parser.js';
import { CaptureError } from './types.js';

const SHB = 0x0a0d0d0a; // a palindrome, so it reads the same in either byte order (draft §4.1)
const IDB = 1;
const PB = 2; // obsolete Packet Block (draft appendix A)
const SPB = 3;
const NRB = 4;
const ISB = 5;
const EPB = 6;
const DSB = 0x0a;
const CUSTOM = 0x00000bad;
const CUSTOM_NO_COPY = 0x40000bad;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;

const MIN_BLOCK_LEN = 12;
const MIN_SHB_LEN = 28;
const MIN_IDB_LEN = 20;
const MIN_EPB_LEN = 32; // also the obsolete PB
const MIN_SPB_LEN = 16;
const MAX_BLOCK_LEN = MAX_PACKET_BYTES;

const OPT_ENDOFOPT = 0;
const OPT_IF_TSRESOL = 9;
const OPT_IF_TSOFFSET = 14;
/** if_tsresol: the high bit chooses a power of 2 over a power of 10; absent, units are µs. */
const TSRESOL_BINARY = 0x80;
const DEFAULT_TSRESOL = 6;

const BLOCK_NAMES = new Map<number, string>([
  [SHB, 'section header block'],
  [IDB, 'interface description block'],
  [PB, 'packet block'],
  [SPB, 'simple packet block'],
  [NRB, 'name resolution block'],
  [ISB, 'interface statistics block'],
  [EPB, 'enhanced packet block'],
  [DSB, 'decryption secrets block'],
  [CUSTOM, 'custom block'],
  [CUSTOM_NO_COPY, 'custom block'],
]);

/** Block types registered by the draft (§11.1) that a resynchronisation may land on. */
function isKnownBlockType(type: number): boolean {
  return BLOCK_NAMES.has(type) || (type >= 7 && type <= 9);
}

function minBlockLength(type: number): number {
  switch (type) {
    case SHB:
      return MIN_SHB_LEN;
    case IDB:
      return MIN_IDB_LEN;
    case EPB:
    case PB:
      return MIN_EPB_LEN;
    case SPB:
      return MIN_SPB_LEN;
    default:
      return MIN_BLOCK_LEN;
  }
}

function blockName(type: number): string {
  return BLOCK_NAMES.get(type) ?? `block of type 0x${type.toString(16)}`;
}

/** The byte order a SHB's byte-order magic at `offset` declares: true for little-endian, null if it is not the magic. */
function byteOrderAt(buf: Buffer, offset: number): boolean | null {
  const magic = buf.readUInt32LE(offset);
  if (magic === BYTE_ORDER_MAGIC) return true;
  if (magic === 0x4d3c2b1a) return false;
  return null;
}

export function isPcapngStart(head: Buffer): boolean {
  return head.readUInt32LE(0) === SHB;
}

/**
 * How an interface counts time. Timestamps are a 64-bit count of units of 10^-k or 2^-k seconds
 * (if_tsresol) since 1970 plus if_tsoffset seconds. When a unit divides a nanosecond evenly
 * (10^-k or 2^-k with k <= 9) the exact split into seconds and nanoseconds is done with doubles;
 * any other resolution takes the rare BigInt path.
 */
interface Interface {
  linkType: number;
  snaplen: number;
  /** Units per second for the fast path, else 0. */
  unitsPerSecond: number;
  nsPerUnit: number;
  /** For the BigInt path: units per second as a shift (binary) or a power of ten. */
  binaryShift: bigint;
  decimalUnitsPerSecond: bigint;
  tsOffset: number;
}

function interfaceClock(tsresol: number): Pick<Interface, 'unitsPerSecond' | 'nsPerUnit' | 'binaryShift' | 'decimalUnitsPerSecond'> {
  const exponent = tsresol & ~TSRESOL_BINARY;
  const binary = (tsresol & TSRESOL_BINARY) !== 0;
  const base = binary ? 2 : 10;
  if (exponent <= 9) {
    const unitsPerSecond = base ** exponent;
    return { unitsPerSecond, nsPerUnit: 1e9 / unitsPerSecond, binaryShift: -1n, decimalUnitsPerSecond: 0n };
  }
  return {
    unitsPerSecond: 0,
    nsPerUnit: 0,
    binaryShift: binary ? BigInt(exponent) : -1n,
    decimalUnitsPerSecond: binary ? 0n : 10n ** BigInt(exponent),
  };
}

let quotient = 0;
let remainder = 0;

/**
 * Divides the unsigned 64-bit count high·2^32 + low by `divisor` (at most 10^9) into `quotient`
 * and `remainder`. A count of nanoseconds since 1970 is past 2^53, beyond what a double holds
 * exactly, so this is long division in 16-bit digits: no intermediate reaches 2^46.
 */
function divide64(high: number, low: number, divisor: number): void {
  quotient = 0;
  remainder = 0;
  divideDigit(high >>> 16, divisor);
  divideDigit(high & 0xffff, divisor);
  divideDigit(low >>> 16, divisor);
  divideDigit(low & 0xffff, divisor);
}

function divideDigit(digit: number, divisor: number): void {
  const x = remainder * 65536 + digit;
  const q = Math.floor(x / divisor);
  remainder = x - q * divisor;
  quotient = quotient * 65536 + q;
}

const NS_PER_SECOND = 1_000_000_000n;

export class PcapngParser extends RecordParser {
  protected readonly unit = 'block';
  private sections = 0;
  private le = true;
  /** This section's interfaces, by id. */
  private interfaces: Interface[] = [];
  /** Interfaces of earlier sections: packet interface ids count on across sections. */
  private interfaceBase = 0;
  private capOverOrig = 0;

  override finish(): void {
    if (this.capOverOrig > 0) {
      this.note(
        `${this.capOverOrig} packets have a captured length larger than their original length: ` +
          'their original length is taken to be the captured length',
      );
    }
    super.finish();
  }

  protected readRecords(buf: Buffer, pos: number, end: number, eof: boolean): number {
    for (;;) {
      if (end - pos < MIN_BLOCK_LEN) {
        if (eof) this.firstSectionError(`truncated pcapng section header (${end - pos} of ${MIN_SHB_LEN} bytes)`);
        return this.stopAt(pos, end, eof, MIN_BLOCK_LEN, 0, this.partialName(buf, pos, end));
      }
      const type = this.u32(buf, pos);
      const le = type === SHB ? byteOrderAt(buf, pos + 8) : this.le;
      if (le === null) {
        return this.badBlock(pos, type, `byte-order magic ${hex(buf, pos + 8, 4)}`);
      }
      const len = le ? buf.readUInt32LE(pos + 4) : buf.readUInt32BE(pos + 4);
      if (len < minBlockLength(type) || len % 4 !== 0 || len > MAX_BLOCK_LEN) {
        return this.badBlock(pos, type, `block length ${len}`);
      }
      if (end - pos < len) {
        if (eof && this.sections === 0) this.firstSectionError(`truncated pcapng section header (${end - pos} of ${len} bytes)`);
        return this.stopAt(pos, end, eof, len, len, blockName(type));
      }
      const trailer = le ? buf.readUInt32LE(pos + len - 4) : buf.readUInt32BE(pos + len - 4);
      if (trailer !== len) {
        return this.badBlock(pos, type, `block length ${len} but trailing length ${trailer}`);
      }
      if (type === SHB) {
        if (!this.startSection(buf, pos, le)) return pos + 1;
      } else {
        this.readBlock(type, buf, pos, len);
      }
      pos += len;
    }
  }

  /** A block can start at `p` if its type is known, its length sane and its trailing copy matches. */
  protected plausibleAt(buf: Buffer, p: number, end: number, eof: boolean): number {
    if (end - p < MIN_BLOCK_LEN) return eof ? IMPLAUSIBLE : MIN_BLOCK_LEN;
    const type = this.u32(buf, p);
    if (!isKnownBlockType(type)) return IMPLAUSIBLE;
    const le = type === SHB ? byteOrderAt(buf, p + 8) : this.le;
    if (le === null) return IMPLAUSIBLE;
    const len = le ? buf.readUInt32LE(p + 4) : buf.readUInt32BE(p + 4);
    if (len < minBlockLength(type) || len % 4 !== 0 || len > MAX_BLOCK_LEN) return IMPLAUSIBLE;
    if (end - p < len) return eof ? IMPLAUSIBLE : len;
    const trailer = le ? buf.readUInt32LE(p + len - 4) : buf.readUInt32BE(p + len - 4);
    return trailer === len ? PLAUSIBLE : IMPLAUSIBLE;
  }

  private badBlock(pos: number, type: number, why: string): number {
    this.firstSectionError(`damaged pcapng section header (${why})`);
    this.damaged(pos, `${blockName(type)} at byte ${this.abs(pos)}`, why);
    return pos + 1;
  }

  /** Damage before the first section is read means this is no usable pcapng file at all. */
  private firstSectionError(message: string): void {
    if (this.sections === 0) throw new CaptureError(`${this.name}: ${message}`);
  }

  private partialName(buf: Buffer, pos: number, end: number): string {
    return end - pos >= 4 ? blockName(this.u32(buf, pos)) : 'block';
  }

  private startSection(buf: Buffer, pos: number, le: boolean): boolean {
    const major = le ? buf.readUInt16LE(pos + 12) : buf.readUInt16BE(pos + 12);
    const minor = le ? buf.readUInt16LE(pos + 14) : buf.readUInt16BE(pos + 14);
    if (major !== 1) {
      this.firstSectionError(`unsupported pcapng version ${major}.${minor}`);
      this.damaged(pos, `section header block at byte ${this.abs(pos)}`, `unsupported version ${major}.${minor}`);
      return false;
    }
    this.sections++;
    this.le = le;
    this.interfaceBase += this.interfaces.length;
    this.interfaces = [];
    return true;
  }

  private readBlock(type: number, buf: Buffer, pos: number, len: number): void {
    switch (type) {
      case EPB:
        return this.packetBlock(buf, pos, len, this.u32(buf, pos + 8), 'enhanced packet block');
      case PB:
        return this.packetBlock(buf, pos, len, this.u16(buf, pos + 8), 'packet block');
      case SPB:
        return this.simplePacketBlock(buf, pos, len);
      case IDB:
        return this.interfaceDescription(buf, pos, len);
      case DSB:
        return this.secretsBlock(buf, pos, len);
      default:
        this.stats.skippedBlocks++;
    }
  }

  /**
   * EPB (draft §4.3) and the obsolete PB (appendix A) share a layout after the interface id:
   * timestamp high u32, low u32, captured length, original length, packet data, options.
   */
  private packetBlock(buf: Buffer, pos: number, len: number, localId: number, what: string): void {
    const iface = this.interfaces[localId];
    if (!iface) return this.badPacket(pos, what, `unknown interface ${localId}`);
    const capLen = this.u32(buf, pos + 20);
    if (capLen > len - MIN_EPB_LEN) return this.badPacket(pos, what, `captured length ${capLen} does not fit in the block`);
    this.setTime(iface, this.u32(buf, pos + 12), this.u32(buf, pos + 16));
    this.setPacket(iface, localId, buf, pos + 28, capLen, this.u32(buf, pos + 24));
    this.deliver();
  }

  /** DSB (draft §4.7): secrets type u32, secrets length u32, the secrets, padding to 32 bits. */
  private secretsBlock(buf: Buffer, pos: number, len: number): void {
    const length = len >= 20 ? this.u32(buf, pos + 12) : -1;
    if (length < 0 || length > len - 20) {
      this.stats.damagedRecords++;
      this.note("a decryption secrets block whose secrets length does not fit it was skipped");
      return;
    }
    this.inSink = true;
    this.sink.onSecrets?.(this.u32(buf, pos + 8), buf.subarray(pos + 16, pos + 16 + length));
    this.inSink = false;
  }

  /**
   * SPB (draft §4.4): interface 0, no timestamp (the previous packet's stands), and no captured
   * length: it is the original length cut to the snaplen and to the space in the block.
   */
  private simplePacketBlock(buf: Buffer, pos: number, len: number): void {
    const iface = this.interfaces[0];
    if (!iface) return this.badPacket(pos, 'simple packet block', 'no interface 0');
    const origLen = this.u32(buf, pos + 8);
    let capLen = Math.min(origLen, len - MIN_SPB_LEN);
    if (iface.snaplen > 0) capLen = Math.min(capLen, iface.snaplen);
    this.setPacket(iface, 0, buf, pos + 12, capLen, origLen);
    this.deliver();
  }

  /** A packet block whose own framing is sound but whose content is not: skipped, no resync needed. */
  private badPacket(pos: number, what: string, why: string): void {
    this.stats.damagedRecords++;
    this.note(`damaged ${what} at byte ${this.abs(pos)} (${why}): skipped`);
  }

  private setPacket(iface: Interface, localId: number, buf: Buffer, data: number, capLen: number, origLen: number): void {
    const ref = this.ref;
    ref.linkType = iface.linkType;
    ref.interfaceId = this.interfaceBase + localId;
    ref.data = buf;
    ref.offset = data;
    ref.capLen = capLen;
    if (origLen < capLen) {
      this.capOverOrig++;
      ref.origLen = capLen;
    } else {
      ref.origLen = origLen;
    }
  }

  private setTime(iface: Interface, high: number, low: number): void {
    const ref = this.ref;
    if (iface.unitsPerSecond > 0) {
      divide64(high, low, iface.unitsPerSecond);
      ref.tsSec = quotient + iface.tsOffset;
      ref.tsNsec = remainder * iface.nsPerUnit;
      return;
    }
    const units = (BigInt(high) << 32n) | BigInt(low);
    let seconds: bigint;
    let ns: bigint;
    if (iface.binaryShift >= 0n) {
      seconds = units >> iface.binaryShift;
      ns = ((units - (seconds << iface.binaryShift)) * NS_PER_SECOND) >> iface.binaryShift;
    } else {
      seconds = units / iface.decimalUnitsPerSecond;
      ns = ((units % iface.decimalUnitsPerSecond) * NS_PER_SECOND) / iface.decimalUnitsPerSecond;
    }
    ref.tsSec = Number(seconds) + iface.tsOffset;
    ref.tsNsec = Number(ns);
  }

  /** IDB (draft §4.2): link type u16, reserved u16, snaplen u32, options. */
  private interfaceDescription(buf: Buffer, pos: number, len: number): void {
    let tsresol = DEFAULT_TSRESOL;
    let tsOffset = 0;
    const optionsEnd = pos + len - 4;
    for (let o = pos + 16; o + 4 <= optionsEnd; ) {
      const code = this.u16(buf, o);
      const optLen = this.u16(buf, o + 2);
      if (code === OPT_ENDOFOPT || o + 4 + optLen > optionsEnd) break;
      if (code === OPT_IF_TSRESOL && optLen >= 1) tsresol = buf[o + 4]!;
      if (code === OPT_IF_TSOFFSET && optLen >= 8) tsOffset = this.i64(buf, o + 4);
      o += 4 + ((optLen + 3) & ~3);
    }
    this.interfaces.push({
      linkType: this.u16(buf, pos + 8),
      snaplen: this.u32(buf, pos + 12),
      tsOffset,
      ...interfaceClock(tsresol),
    });
  }

  private u32(buf: Buffer, offset: number): number {
    return this.le ? buf.readUInt32LE(offset) : buf.readUInt32BE(offset);
  }

  private u16(buf: Buffer, offset: number): number {
    return this.le ? buf.readUInt16LE(offset) : buf.readUInt16BE(offset);
  }

  private i64(buf: Buffer, offset: number): number {
    const high = this.le ? buf.readInt32LE(offset + 4) : buf.readInt32BE(offset);
    const low = this.le ? buf.readUInt32LE(offset) : buf.readUInt32BE(offset + 4);
    return high * 4294967296 + low;
  }
}

function hex(buf: Buffer, offset: number, count: number): string {
  return [...buf.subarray(offset, offset + count)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
}
