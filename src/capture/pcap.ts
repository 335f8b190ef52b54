/**
 * Classic pcap (draft-ietf-opsawg-pcap): a 24-byte file header, then records, each a 16-byte
 * header (ts_sec, ts_usec or ts_nsec, incl_len, orig_len) followed by incl_len packet bytes.
 * The magic number says both the byte order of every field and the timestamp precision.
 */
import { IMPLAUSIBLE, MAX_PACKET_BYTES, PLAUSIBLE, RecordParser, nearInTime } from './parser.js';
import { CaptureError, type CaptureStats, type PacketSink } from './types.js';

const MAGIC_MICROSECONDS = 0xa1b2c3d4;
const MAGIC_NANOSECONDS = 0xa1b23c4d;
const FILE_HEADER_LEN = 24;
const RECORD_HEADER_LEN = 16;
/** Wireshark's largest packet for most link types (WTAP_MAX_PACKET_SIZE_STANDARD). */
const STANDARD_MAX_PACKET = 262144;
/**
 * The header's LinkType field carries the link type in its low 16 bits; bit 26 says the upper
 * four bits hold the FCS length in 16-bit words (draft-ietf-opsawg-pcap, "LinkType and
 * additional information"; libpcap's LT_LINKTYPE / LT_FCS_LENGTH). Readers ignore the rest.
 */
const LINKTYPE_MASK = 0xffff;
const FCS_LENGTH_PRESENT = 0x04000000;

export interface PcapMagic {
  littleEndian: boolean;
  nanosecond: boolean;
}

/** Recognises a pcap file by its first four bytes. */
export function pcapMagic(head: Buffer): PcapMagic | null {
  for (const littleEndian of [true, false]) {
    const magic = littleEndian ? head.readUInt32LE(0) : head.readUInt32BE(0);
    if (magic === MAGIC_MICROSECONDS) return { littleEndian, nanosecond: false };
    if (magic === MAGIC_NANOSECONDS) return { littleEndian, nanosecond: true };
  }
  return null;
}

export class PcapParser extends RecordParser {
  protected readonly unit = 'record';
  private haveFileHeader = false;
  private readonly le: boolean;
  private readonly fracPerSecond: number;
  private readonly nsPerFrac: number;
  private linkType = 0;
  /** A larger incl_len is damage, not a packet. */
  private maxCapLen = 0;
  /** While resynchronising, a candidate record's incl_len must not be larger than this. */
  private plausibleCapLen = 0;
  private lastTsSec = 0;
  private capOverOrig = 0;

  constructor(name: string, sink: PacketSink, stats: CaptureStats, magic: PcapMagic) {
    super(name, sink, stats);
    this.le = magic.littleEndian;
    this.fracPerSecond = magic.nanosecond ? 1e9 : 1e6;
    this.nsPerFrac = magic.nanosecond ? 1 : 1000;
  }

  override finish(): void {
    if (this.capOverOrig > 0) {
      this.note(
        `${this.capOverOrig} records have a captured length larger than their original length ` +
          '(a writer bug; e.g. some Linux cooked captures write incl_len = orig_len + 16): ' +
          'their original length is taken to be the captured length',
      );
    }
    super.finish();
  }

  protected readRecords(buf: Buffer, pos: number, end: number, eof: boolean): number {
    if (!this.haveFileHeader) {
      if (end - pos < FILE_HEADER_LEN) {
        if (eof) throw new CaptureError(`${this.name}: truncated pcap file header (${end - pos} of ${FILE_HEADER_LEN} bytes)`);
        this.need = FILE_HEADER_LEN;
        return pos;
      }
      this.readFileHeader(buf, pos);
      pos += FILE_HEADER_LEN;
    }
    for (;;) {
      const left = end - pos;
      if (left < RECORD_HEADER_LEN) return this.stopAt(pos, end, eof, RECORD_HEADER_LEN, 0, 'record');
      const capLen = this.u32(buf, pos + 8);
      if (capLen > this.maxCapLen) {
        this.damaged(pos, `record at byte ${this.abs(pos)}`, `captured length ${capLen} is impossible`);
        return pos + 1;
      }
      const size = RECORD_HEADER_LEN + capLen;
      if (left < size) return this.stopAt(pos, end, eof, size, size, 'record');
      this.fillRef(buf, pos, capLen);
      this.deliver();
      pos += size;
    }
  }

  /**
   * A record can start at `p` if its header is sane, its time is within a day of the last packet,
   * and the record after it is sane too (or the input ends right there).
   *
   * A candidate with no record after it has only its own header to vouch for it: it must end
   * exactly where the input does, and there must be a packet before it to compare its time with.
   * Otherwise the bytes of a record cut short by the end of the file (a MAC address, an IP
   * header) could pass for a small record and be delivered as a packet that never was.
   */
  protected plausibleAt(buf: Buffer, p: number, end: number, eof: boolean): number {
    if (end - p < RECORD_HEADER_LEN) return eof ? IMPLAUSIBLE : RECORD_HEADER_LEN;
    const near = this.stats.packets > 0 ? this.lastTsSec : NaN;
    if (!this.plausibleHeader(buf, p, near)) return IMPLAUSIBLE;
    const next = p + RECORD_HEADER_LEN + this.u32(buf, p + 8);
    if (end - next >= RECORD_HEADER_LEN) {
      return this.plausibleHeader(buf, next, this.u32(buf, p)) ? PLAUSIBLE : IMPLAUSIBLE;
    }
    if (!eof) return next + RECORD_HEADER_LEN - p;
    return next === end && !Number.isNaN(near) ? PLAUSIBLE : IMPLAUSIBLE;
  }

  private plausibleHeader(buf: Buffer, p: number, nearSec: number): boolean {
    const capLen = this.u32(buf, p + 8);
    const origLen = this.u32(buf, p + 12);
    return (
      this.u32(buf, p + 4) < this.fracPerSecond &&
      capLen > 0 &&
      capLen <= this.plausibleCapLen &&
      origLen <= MAX_PACKET_BYTES &&
      (origLen >= capLen || origLen + 16 === capLen) &&
      (Number.isNaN(nearSec) || nearInTime(this.u32(buf, p), nearSec))
    );
  }

  private readFileHeader(buf: Buffer, pos: number): void {
    const major = this.u16(buf, pos + 4);
    const minor = this.u16(buf, pos + 6);
    const snaplen = this.u32(buf, pos + 16);
    const linkTypeAndInfo = this.u32(buf, pos + 20);
    this.linkType = linkTypeAndInfo & LINKTYPE_MASK;
    if (major !== 2) this.note(`unusual pcap version ${major}.${minor}`);
    if (linkTypeAndInfo & FCS_LENGTH_PRESENT) {
      this.note(`every packet ends with a ${(linkTypeAndInfo >>> 28) * 2}-byte frame check sequence`);
    }
    // Writers do exceed their snaplen (see the +16 quirk), so only twice the usual limit is damage.
    const usual = Math.max(snaplen, STANDARD_MAX_PACKET);
    this.maxCapLen = Math.min(MAX_PACKET_BYTES, 2 * usual);
    this.plausibleCapLen = Math.min(MAX_PACKET_BYTES, usual);
    this.ref.interfaceId = 0;
    this.haveFileHeader = true;
  }

  private fillRef(buf: Buffer, pos: number, capLen: number): void {
    const ref = this.ref;
    let sec = this.u32(buf, pos);
    let frac = this.u32(buf, pos + 4);
    if (frac >= this.fracPerSecond) {
      // Not normalised by its writer: carry the whole seconds.
      sec += Math.floor(frac / this.fracPerSecond);
      frac %= this.fracPerSecond;
    }
    const origLen = this.u32(buf, pos + 12);
    ref.tsSec = sec;
    ref.tsNsec = frac * this.nsPerFrac;
    ref.linkType = this.linkType;
    ref.data = buf;
    ref.offset = pos + RECORD_HEADER_LEN;
    ref.capLen = capLen;
    if (origLen < capLen) {
      this.capOverOrig++;
      ref.origLen = capLen;
    } else {
      ref.origLen = origLen;
    }
    this.lastTsSec = sec;
  }

  /**
   * Header integers in the file's byte order, from the bytes: Buffer#readUInt32LE validates its
   * argument and checks bounds on every call, and this runs several times per packet.
   */
  private u32(buf: Buffer, offset: number): number {
    const b0 = buf[offset]!;
    const b1 = buf[offset + 1]!;
    const b2 = buf[offset + 2]!;
    const b3 = buf[offset + 3]!;
    return this.le ? b3 * 0x1000000 + ((b2 << 16) | (b1 << 8) | b0) : b0 * 0x1000000 + ((b1 << 16) | (b2 << 8) | b3);
  }

  private u16(buf: Buffer, offset: number): number {
    return this.le ? buf.readUInt16LE(offset) : buf.readUInt16BE(offset);
  }
}
