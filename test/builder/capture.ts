/**
 * Capture-file writers for tests, so that every byte of a test input is explained by the values
 * the test states. Layouts: classic pcap per draft-ietf-opsawg-pcap, pcapng per
 * draft-ietf-opsawg-pcapng. Integers are written in the byte order the file or section declares.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { PacketRef, PacketSink } from '../../src/capture/types.js';

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Bytes from a hex string; spaces are ignored: hexBytes('de ad be ef'). */
export function hexBytes(hex: string): Buffer {
  return Buffer.from(hex.replace(/\s+/g, ''), 'hex');
}

/** Lower-case hex with a space between bytes, as error messages and recorded packets show them. */
export function toHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ');
}

/** A writer of fixed-width integers in one byte order. */
export class Bytes {
  private readonly parts: Buffer[] = [];
  constructor(private readonly bigEndian = false) {}

  u8(v: number): this {
    this.parts.push(Buffer.from([v]));
    return this;
  }
  u16(v: number): this {
    const b = Buffer.alloc(2);
    if (this.bigEndian) b.writeUInt16BE(v);
    else b.writeUInt16LE(v);
    this.parts.push(b);
    return this;
  }
  u32(v: number): this {
    const b = Buffer.alloc(4);
    if (this.bigEndian) b.writeUInt32BE(v);
    else b.writeUInt32LE(v);
    this.parts.push(b);
    return this;
  }
  i64(v: bigint): this {
    const b = Buffer.alloc(8);
    if (this.bigEndian) b.writeBigInt64BE(v);
    else b.writeBigInt64LE(v);
    this.parts.push(b);
    return this;
  }
  raw(bytes: Uint8Array): this {
    this.parts.push(Buffer.from(bytes));
    return this;
  }
  /** Zero bytes up to the next multiple of 4 of what was written so far. */
  pad4(): this {
    const len = this.length;
    return this.raw(Buffer.alloc((4 - (len % 4)) % 4));
  }
  get length(): number {
    return this.parts.reduce((n, p) => n + p.length, 0);
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** The same bytes gzip-compressed (one member). */
export function gzip(bytes: Uint8Array): Buffer {
  return gzipSync(bytes);
}

/** The bytes as an async stream of chunks of `size` bytes (the last may be shorter). */
export async function* chunksOf(bytes: Uint8Array, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield Buffer.from(bytes.subarray(at, at + size));
}

/** The bytes as an async stream of the given pieces, cut at `cuts` (ascending offsets). */
export async function* cutAt(bytes: Uint8Array, ...cuts: number[]): AsyncGenerator<Buffer> {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    yield Buffer.from(bytes.subarray(from, cut));
    from = cut;
  }
}

let scratchDir: string | null = null;

/**
 * The scratch folder's name: `kcid-test-RUN-` where RUN names this `npm test` (test/global-setup.ts
 * sets KCID_TEST_RUN), so that its teardown can find what a test file left behind and say so.
 */
export function scratchPrefix(env: NodeJS.ProcessEnv = process.env): string {
  return `kcid-test-${env.KCID_TEST_RUN ?? 'x'}-`;
}

/** Writes `content` to a fresh file named `name` under the OS temporary directory; returns its path. */
export function tmpFile(name: string, content: Uint8Array | string): string {
  scratchDir ??= mkdtempSync(join(tmpdir(), scratchPrefix()));
  const dir = mkdtempSync(join(scratchDir, 'f-'));
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** A temporary directory (for tests that need one as input). */
export function tmpDir(): string {
  scratchDir ??= mkdtempSync(join(tmpdir(), scratchPrefix()));
  return mkdtempSync(join(scratchDir, 'd-'));
}

/** Removes everything tmpFile and tmpDir made (test/setup-file.ts calls it after every test file). */
export function removeTmpFiles(): void {
  if (scratchDir) rmSync(scratchDir, { recursive: true, force: true });
  scratchDir = null;
}

/** A packet as a sink saw it, with its bytes copied out as hex. */
export interface RecordedPacket {
  frame: number;
  tsSec: number;
  tsNsec: number;
  linkType: number;
  interfaceId: number;
  capLen: number;
  origLen: number;
  data: string;
}

/** A sink that keeps a copy of every packet. */
export function recordingSink(): { sink: PacketSink; packets: RecordedPacket[] } {
  const packets: RecordedPacket[] = [];
  const sink: PacketSink = {
    onPacket(p: PacketRef) {
      packets.push({
        frame: p.frame,
        tsSec: p.tsSec,
        tsNsec: p.tsNsec,
        linkType: p.linkType,
        interfaceId: p.interfaceId,
        capLen: p.capLen,
        origLen: p.origLen,
        data: toHex(p.data.subarray(p.offset, p.offset + p.capLen)),
      });
    },
  };
  return { sink, packets };
}

// ---------------------------------------------------------------------------------------------
// Classic pcap
//
//   file header (24 bytes): magic u32 | version major u16 (2) | minor u16 (4) | thiszone i32 (0)
//                           | sigfigs u32 (0) | snaplen u32 | LinkType and additional info u32
//   record header (16 bytes): ts_sec u32 | ts_usec or ts_nsec u32 | incl_len u32 | orig_len u32
//   then incl_len bytes of packet data, no padding.
//
// The magic a1b2c3d4 (µs) or a1b23c4d (ns), written in the file's byte order, tells a reader both.

export const PCAP_FILE_HEADER_LEN = 24;
export const PCAP_RECORD_HEADER_LEN = 16;

export interface PcapPacket {
  tsSec: number;
  /** Nanoseconds within the second; a µs file keeps whole microseconds (truncated). */
  tsNsec?: number;
  /** Microseconds within the second (alternative to tsNsec). */
  tsUsec?: number;
  data: Uint8Array;
  /** orig_len; defaults to data.length. */
  origLen?: number;
  /** incl_len as written; defaults to data.length. Set it to forge a damaged record. */
  inclLen?: number;
}

export interface PcapOptions {
  /** Written as-is into the 32-bit LinkType field (upper bits may carry FCS information). */
  linkType: number;
  nanosecond?: boolean;
  bigEndian?: boolean;
  /** Defaults to 262144. */
  snaplen?: number;
  /** Defaults to 2 (the only version there is). */
  versionMajor?: number;
  packets: PcapPacket[];
}

export function pcapFileHeader(opts: Omit<PcapOptions, 'packets'>): Buffer {
  return new Bytes(opts.bigEndian)
    .u32(opts.nanosecond ? 0xa1b23c4d : 0xa1b2c3d4)
    .u16(opts.versionMajor ?? 2)
    .u16(4)
    .u32(0) // thiszone: always 0
    .u32(0) // sigfigs: always 0
    .u32(opts.snaplen ?? 262144)
    .u32(opts.linkType)
    .done();
}

export function pcapRecord(p: PcapPacket, opts: { nanosecond?: boolean; bigEndian?: boolean }): Buffer {
  const ns = p.tsNsec ?? (p.tsUsec ?? 0) * 1000;
  return new Bytes(opts.bigEndian)
    .u32(p.tsSec)
    .u32(opts.nanosecond ? ns : p.tsUsec ?? Math.floor(ns / 1000))
    .u32(p.inclLen ?? p.data.length)
    .u32(p.origLen ?? p.data.length)
    .raw(p.data)
    .done();
}

export function pcapFile(opts: PcapOptions): Buffer {
  return Buffer.concat([pcapFileHeader(opts), ...opts.packets.map((p) => pcapRecord(p, opts))]);
}

/** Offsets of each record header in a file built by pcapFile from these packets. */
export function pcapRecordOffsets(packets: PcapPacket[]): number[] {
  const offsets: number[] = [];
  let at = PCAP_FILE_HEADER_LEN;
  for (const p of packets) {
    offsets.push(at);
    at += PCAP_RECORD_HEADER_LEN + p.data.length;
  }
  return offsets;
}

// ---------------------------------------------------------------------------------------------
// pcapng
//
//   every block: block type u32 | block total length u32 | body, zero-padded to 4 bytes
//                | block total length u32 again
//   SHB (0x0a0d0d0a) body: byte-order magic 0x1a2b3c4d u32 | major u16 (1) | minor u16 (0)
//                          | section length i64 (-1: not given)
//   IDB (1) body: link type u16 | reserved u16 (0) | snaplen u32 | options
//   EPB (6) body: interface id u32 | timestamp high u32 | low u32 | captured length u32
//                 | original length u32 | packet data, padded
//   SPB (3) body: original length u32 | packet data, padded
//   PB (2, obsolete) body: interface id u16 | drops u16 | timestamp high u32 | low u32
//                 | captured length u32 | original length u32 | packet data, padded
//   option: code u16 | length u16 | value, padded; the list ends with opt_endofopt (code 0, length 0)
//
// Timestamps count units of the interface's if_tsresol (option 9: 10^-n, or 2^-n when the high
// bit is set; µs when absent) since 1970 minus if_tsoffset (option 14) seconds.

export const PCAPNG_SHB_LEN = 28;

export interface PcapngInterface {
  linkType: number;
  snaplen?: number;
  /** The raw if_tsresol option byte; no option when absent (µs). */
  tsresol?: number;
  /** if_tsoffset in seconds; no option when absent. */
  tsoffset?: number;
}

export type PcapngBlock =
  | {
      type: 'epb';
      interfaceId: number;
      tsSec: number;
      tsNsec: number;
      data: Uint8Array;
      origLen?: number;
      /** The raw 64-bit timestamp, instead of converting tsSec/tsNsec. */
      units?: bigint;
    }
  | { type: 'pb'; interfaceId: number; tsSec: number; tsNsec: number; data: Uint8Array; origLen?: number }
  | { type: 'spb'; data: Uint8Array; origLen?: number }
  | { type: 'raw'; blockType: number; body: Uint8Array };

export interface PcapngSection {
  bigEndian?: boolean;
  interfaces: PcapngInterface[];
  blocks: PcapngBlock[];
}

export function pcapngBlock(bigEndian: boolean, blockType: number, body: Uint8Array): Buffer {
  const padded = (body.length + 3) & ~3;
  const total = 12 + padded;
  return new Bytes(bigEndian).u32(blockType).u32(total).raw(body).pad4().u32(total).done();
}

export function shbBlock(bigEndian = false): Buffer {
  return pcapngBlock(bigEndian, 0x0a0d0d0a, new Bytes(bigEndian).u32(0x1a2b3c4d).u16(1).u16(0).i64(-1n).done());
}

export function idbBlock(bigEndian: boolean, iface: PcapngInterface): Buffer {
  const body = new Bytes(bigEndian).u16(iface.linkType).u16(0).u32(iface.snaplen ?? 0);
  const hasOptions = iface.tsresol !== undefined || iface.tsoffset !== undefined;
  if (iface.tsresol !== undefined) body.u16(9).u16(1).u8(iface.tsresol).pad4();
  if (iface.tsoffset !== undefined) body.u16(14).u16(8).i64(BigInt(iface.tsoffset));
  if (hasOptions) body.u16(0).u16(0);
  return pcapngBlock(bigEndian, 1, body.done());
}

/** Units per second of an if_tsresol byte. */
export function unitsPerSecond(tsresol = 6): bigint {
  return tsresol & 0x80 ? 1n << BigInt(tsresol & 0x7f) : 10n ** BigInt(tsresol);
}

/** The 64-bit timestamp an interface writes for a time (sub-unit nanoseconds are dropped). */
export function timestampUnits(iface: PcapngInterface, tsSec: number, tsNsec: number): bigint {
  const perSecond = unitsPerSecond(iface.tsresol);
  const units = BigInt(tsSec - (iface.tsoffset ?? 0)) * perSecond + (BigInt(tsNsec) * perSecond) / 1_000_000_000n;
  if (units < 0n || units >= 1n << 64n) throw new RangeError(`timestamp ${tsSec}.${tsNsec} does not fit 64 bits of this resolution`);
  return units;
}

export function epbBlock(bigEndian: boolean, iface: PcapngInterface, b: Extract<PcapngBlock, { type: 'epb' }>): Buffer {
  const units = b.units ?? timestampUnits(iface, b.tsSec, b.tsNsec);
  const body = new Bytes(bigEndian)
    .u32(b.interfaceId)
    .u32(Number(units >> 32n))
    .u32(Number(units & 0xffffffffn))
    .u32(b.data.length)
    .u32(b.origLen ?? b.data.length)
    .raw(b.data);
  return pcapngBlock(bigEndian, 6, body.done());
}

export function pbBlock(bigEndian: boolean, iface: PcapngInterface, b: Extract<PcapngBlock, { type: 'pb' }>): Buffer {
  const units = timestampUnits(iface, b.tsSec, b.tsNsec);
  const body = new Bytes(bigEndian)
    .u16(b.interfaceId)
    .u16(0) // drops count
    .u32(Number(units >> 32n))
    .u32(Number(units & 0xffffffffn))
    .u32(b.data.length)
    .u32(b.origLen ?? b.data.length)
    .raw(b.data);
  return pcapngBlock(bigEndian, 2, body.done());
}

export function spbBlock(bigEndian: boolean, b: Extract<PcapngBlock, { type: 'spb' }>): Buffer {
  return pcapngBlock(bigEndian, 3, new Bytes(bigEndian).u32(b.origLen ?? b.data.length).raw(b.data).done());
}

/** The blocks of one section, in order: SHB, IDBs, then the section's blocks. */
export function pcapngSectionBlocks(section: PcapngSection): Buffer[] {
  const be = section.bigEndian ?? false;
  const ifaceOf = (id: number): PcapngInterface => section.interfaces[id] ?? { linkType: 0 };
  return [
    shbBlock(be),
    ...section.interfaces.map((i) => idbBlock(be, i)),
    ...section.blocks.map((b) => {
      switch (b.type) {
        case 'epb':
          return epbBlock(be, ifaceOf(b.interfaceId), b);
        case 'pb':
          return pbBlock(be, ifaceOf(b.interfaceId), b);
        case 'spb':
          return spbBlock(be, b);
        case 'raw':
          return pcapngBlock(be, b.blockType, b.body);
      }
    }),
  ];
}

export function pcapngFile(opts: { sections: PcapngSection[] }): Buffer {
  return Buffer.concat(opts.sections.flatMap(pcapngSectionBlocks));
}

/** Offsets of every block in a file built by pcapngFile from these sections. */
export function pcapngBlockOffsets(opts: { sections: PcapngSection[] }): number[] {
  const offsets: number[] = [];
  let at = 0;
  for (const block of opts.sections.flatMap(pcapngSectionBlocks)) {
    offsets.push(at);
    at += block.length;
  }
  return offsets;
}
