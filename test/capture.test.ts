import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_SHARED, skipUnless } from './helpers.js';
import { HAVE_SHARED, PUBLIC_CAPTURES, sharedCaptureFiles } from './real/captures.js';
import { CaptureError, LinkType, readCapture, readCaptureStream, type CaptureStats } from '../src/capture/index.js';
import {
  PCAP_RECORD_HEADER_LEN,
  chunksOf,
  cutAt,
  gzip,
  hexBytes,
  pcapFile,
  pcapRecordOffsets,
  pcapngBlockOffsets,
  pcapngFile,
  recordingSink,
  removeTmpFiles,
  tmpDir,
  tmpFile,
  toHex,
  type PcapOptions,
  type PcapPacket,
  type PcapngInterface,
  type PcapngSection,
  type RecordedPacket,
} from './builder/capture.js';

const T = 1_700_000_000; // 2023-11-14T22:13:20Z

afterAll(removeTmpFiles);

/** Reads bytes through readCaptureStream, cut into chunks of `chunk` bytes. */
async function readBytes(bytes: Uint8Array, chunk = 1 << 20, name = 'test.cap') {
  const { sink, packets } = recordingSink();
  const stats = await readCaptureStream(name, chunksOf(bytes, chunk), sink);
  return { stats, packets };
}

async function readPath(path: string) {
  const { sink, packets } = recordingSink();
  const stats = await readCapture(path, sink);
  return { stats, packets };
}

async function captureError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(CaptureError);
    const message = (err as CaptureError).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a CaptureError');
}

function stats(overrides: Partial<CaptureStats>): CaptureStats {
  return {
    file: 'test.cap',
    format: 'pcap',
    gzip: false,
    packets: 0,
    bytes: 0,
    truncatedPackets: 0,
    truncatedAtFrame: 0,
    skippedBlocks: 0,
    damagedRecords: 0,
    notes: [],
    ...overrides,
  };
}

const BYTE_ORDERS = [
  { order: 'little-endian', bigEndian: false },
  { order: 'big-endian', bigEndian: true },
];

describe('capture builder', () => {
  it('writes a classic pcap byte for byte', () => {
    const packets = [{ tsSec: 1, tsUsec: 2, data: hexBytes('aa bb') }];
    expect(toHex(pcapFile({ linkType: 1, packets }))).toBe(
      'd4 c3 b2 a1 02 00 04 00 00 00 00 00 00 00 00 00 00 00 04 00 01 00 00 00 ' +
        '01 00 00 00 02 00 00 00 02 00 00 00 02 00 00 00 aa bb',
    );
    expect(toHex(pcapFile({ linkType: 1, packets, bigEndian: true, nanosecond: true }))).toBe(
      'a1 b2 3c 4d 00 02 00 04 00 00 00 00 00 00 00 00 00 04 00 00 00 00 00 01 ' +
        '00 00 00 01 00 00 07 d0 00 00 00 02 00 00 00 02 aa bb',
    );
  });

  it('writes pcapng blocks byte for byte', () => {
    const file = pcapngFile({
      sections: [
        {
          interfaces: [{ linkType: 1, snaplen: 96, tsresol: 9 }],
          blocks: [{ type: 'epb', interfaceId: 0, tsSec: 0, tsNsec: 5, data: hexBytes('aa') }],
        },
      ],
    });
    expect(toHex(file)).toBe(
      // SHB: type, length 28, byte-order magic, version 1.0, section length -1, length
      '0a 0d 0d 0a 1c 00 00 00 4d 3c 2b 1a 01 00 00 00 ff ff ff ff ff ff ff ff 1c 00 00 00 ' +
        // IDB: type 1, length 32, link type 1, reserved, snaplen 96, if_tsresol 9 (padded), end of options, length
        '01 00 00 00 20 00 00 00 01 00 00 00 60 00 00 00 09 00 01 00 09 00 00 00 00 00 00 00 20 00 00 00 ' +
        // EPB: type 6, length 36, interface 0, timestamp 5 ns, lengths 1 and 1, data padded, length
        '06 00 00 00 24 00 00 00 00 00 00 00 00 00 00 00 05 00 00 00 01 00 00 00 01 00 00 00 aa 00 00 00 24 00 00 00',
    );
  });
});

describe('classic pcap', () => {
  const cases: { name: string; options: Omit<PcapOptions, 'bigEndian'>; expected: RecordedPacket[]; truncated: number }[] = [
    {
      name: 'microsecond timestamps',
      options: {
        linkType: LinkType.ETHERNET,
        packets: [
          { tsSec: T, tsUsec: 123_456, data: hexBytes('01 02 03 04') },
          { tsSec: T + 1, tsUsec: 999_999, data: hexBytes('05 06'), origLen: 1514 },
          { tsSec: 0xffff_ffff, tsUsec: 0, data: hexBytes('07') },
        ],
      },
      expected: [
        { frame: 1, tsSec: T, tsNsec: 123_456_000, linkType: 1, interfaceId: 0, capLen: 4, origLen: 4, data: '01 02 03 04' },
        { frame: 2, tsSec: T + 1, tsNsec: 999_999_000, linkType: 1, interfaceId: 0, capLen: 2, origLen: 1514, data: '05 06' },
        { frame: 3, tsSec: 4_294_967_295, tsNsec: 0, linkType: 1, interfaceId: 0, capLen: 1, origLen: 1, data: '07' },
      ],
      truncated: 1,
    },
    {
      name: 'nanosecond timestamps',
      options: {
        linkType: LinkType.LINUX_SLL2,
        nanosecond: true,
        packets: [
          { tsSec: T, tsNsec: 123_456_789, data: hexBytes('0a 0b') },
          { tsSec: T, tsNsec: 999_999_999, data: hexBytes('0c') },
        ],
      },
      expected: [
        { frame: 1, tsSec: T, tsNsec: 123_456_789, linkType: 276, interfaceId: 0, capLen: 2, origLen: 2, data: '0a 0b' },
        { frame: 2, tsSec: T, tsNsec: 999_999_999, linkType: 276, interfaceId: 0, capLen: 1, origLen: 1, data: '0c' },
      ],
      truncated: 0,
    },
  ];

  describe.each(BYTE_ORDERS)('$order', ({ bigEndian }) => {
    it.each(cases)('$name', async ({ options, expected, truncated }) => {
      const file = pcapFile({ ...options, bigEndian });
      const { stats: got, packets } = await readBytes(file);
      expect(packets).toEqual(expected);
      expect(got).toEqual(stats({ packets: expected.length, bytes: file.length, truncatedPackets: truncated }));
    });

    it('takes the link type from the low 16 bits of the LinkType field, noting an FCS length', async () => {
      // bit 26: FCS length present; bits 28-31: 2 (16-bit words), so a 4-byte FCS
      const file = pcapFile({ linkType: 0x2400_0001, bigEndian, packets: [{ tsSec: T, data: hexBytes('aa') }] });
      const { stats: got, packets } = await readBytes(file);
      expect(packets.map((p) => p.linkType)).toEqual([LinkType.ETHERNET]);
      expect(got.notes).toEqual(['every packet ends with a 4-byte frame check sequence']);
    });
  });

  it('carries whole seconds out of a fraction its writer did not normalise', async () => {
    const file = pcapFile({ linkType: 1, packets: [{ tsSec: T, tsUsec: 2_500_000, data: hexBytes('aa') }] });
    const { packets } = await readBytes(file);
    expect(packets.map((p) => [p.tsSec, p.tsNsec])).toEqual([[T + 2, 500_000_000]]);
  });

  it('delivers snaplen-truncated packets with their original length', async () => {
    const data = Buffer.alloc(64, 0x11);
    const file = pcapFile({ linkType: 1, snaplen: 64, packets: [{ tsSec: T, data, origLen: 1514 }, { tsSec: T, data: hexBytes('22') }] });
    const { stats: got, packets } = await readBytes(file);
    expect(packets.map((p) => [p.capLen, p.origLen])).toEqual([
      [64, 1514],
      [1, 1],
    ]);
    expect(got.truncatedPackets).toBe(1);
  });

  it('takes the captured length as the original length when a writer put incl_len = orig_len + 16', async () => {
    // As 40t/go-sniffer's kafka.pcap does on every record (Linux cooked capture).
    const data = Buffer.alloc(60, 0x33);
    const file = pcapFile({ linkType: LinkType.LINUX_SLL, packets: [{ tsSec: T, data, origLen: 44 }, { tsSec: T, data, origLen: 44 }] });
    const { stats: got, packets } = await readBytes(file);
    expect(packets.map((p) => [p.capLen, p.origLen])).toEqual([
      [60, 60],
      [60, 60],
    ]);
    expect(got.truncatedPackets).toBe(0);
    expect(got.notes).toEqual([
      '2 records have a captured length larger than their original length (a writer bug; e.g. some Linux cooked ' +
        'captures write incl_len = orig_len + 16): their original length is taken to be the captured length',
    ]);
  });

  it('notes an unusual version', async () => {
    const file = pcapFile({ linkType: 1, versionMajor: 1, packets: [{ tsSec: T, data: hexBytes('aa') }] });
    expect((await readBytes(file)).stats.notes).toEqual(['unusual pcap version 1.4']);
  });
});

describe('classic pcap that ends early', () => {
  const packets: PcapPacket[] = [
    { tsSec: T, data: Buffer.alloc(100, 1) },
    { tsSec: T + 1, data: Buffer.alloc(100, 2) },
    { tsSec: T + 2, data: Buffer.alloc(100, 3) },
  ];
  const file = pcapFile({ linkType: 1, packets });
  const third = pcapRecordOffsets(packets)[2]!;

  it('stops inside the last packet with a note', async () => {
    const cut = file.subarray(0, file.length - 10);
    const { stats: got, packets: seen } = await readBytes(cut);
    expect(seen.map((p) => p.frame)).toEqual([1, 2]);
    expect(got).toEqual(
      stats({
        packets: 2,
        bytes: cut.length,
        truncatedAtFrame: 3,
        notes: [`the input ends inside the record at byte ${third} (106 of its 116 bytes present)`],
      }),
    );
  });

  it('stops inside the last record header with a note', async () => {
    const cut = file.subarray(0, third + 5);
    const { stats: got } = await readBytes(cut);
    expect(got.packets).toBe(2);
    expect(got.truncatedAtFrame).toBe(3);
    expect(got.notes).toEqual([`the input ends inside the record at byte ${third} (only 5 bytes of its header present)`]);
  });
});

describe('damaged classic pcap', () => {
  const packets: PcapPacket[] = [0, 1, 2, 3].map((i) => ({ tsSec: T + i, tsUsec: i, data: Buffer.alloc(40 + i, 0x40 + i) }));
  const offsets = pcapRecordOffsets(packets);

  /** The file with packet `index`'s incl_len overwritten. */
  function withInclLen(index: number, inclLen: number, bigEndian = false): Buffer {
    const file = pcapFile({ linkType: 1, bigEndian, packets });
    if (bigEndian) file.writeUInt32BE(inclLen, offsets[index]! + 8);
    else file.writeUInt32LE(inclLen, offsets[index]! + 8);
    return file;
  }

  it.each(BYTE_ORDERS)('skips a record with an impossible length and resynchronises ($order)', async ({ bigEndian }) => {
    const file = withInclLen(1, 0x7fff_ffff, bigEndian);
    const { stats: got, packets: seen } = await readBytes(file);
    expect(seen.map((p) => [p.frame, p.tsSec, p.capLen])).toEqual([
      [1, T, 40],
      [2, T + 2, 42],
      [3, T + 3, 43],
    ]);
    expect(got.damagedRecords).toBe(1);
    expect(got.truncatedAtFrame).toBe(0);
    expect(got.notes).toEqual([
      `damaged record at byte ${offsets[1]} (captured length 2147483647 is impossible); ` +
        `skipped ${offsets[2]! - offsets[1]!} bytes to the next plausible record at byte ${offsets[2]}`,
    ]);
  });

  it('never takes a header for a record when the one after it is implausible', async () => {
    // Packet 1's data holds a fake record header (sane, and within a day) whose successor is garbage.
    const fake = Buffer.alloc(41, 0xee);
    fake.writeUInt32LE(T + 1, 0);
    fake.writeUInt32LE(5, 4);
    fake.writeUInt32LE(4, 8);
    fake.writeUInt32LE(4, 12);
    const forged = packets.map((p, i) => (i === 1 ? { ...p, data: fake } : p));
    const file = pcapFile({ linkType: 1, packets: forged });
    file.writeUInt32LE(0xffff_ffff, offsets[1]! + 8);
    const { stats: got, packets: seen } = await readBytes(file);
    expect(seen.map((p) => p.tsSec)).toEqual([T, T + 2, T + 3]);
    expect(got.notes[0]).toContain(`to the next plausible record at byte ${offsets[2]}`);
  });

  it('skips to the end when nothing plausible follows a damaged last record', async () => {
    const file = withInclLen(3, 0x8000_0000);
    const { stats: got, packets: seen } = await readBytes(file);
    expect(seen.map((p) => p.frame)).toEqual([1, 2, 3]);
    expect(got.damagedRecords).toBe(1);
    expect(got.notes).toEqual([
      `damaged record at byte ${offsets[3]} (captured length 2147483648 is impossible); ` +
        `nothing plausible follows: skipped the last ${file.length - offsets[3]!} bytes`,
    ]);
  });

  it('tells a length that overshoots the end of the input from a cut-short capture', async () => {
    const file = withInclLen(1, 200_000); // sane, but past the end of this small file
    const { stats: got, packets: seen } = await readBytes(file);
    expect(seen.map((p) => p.tsSec)).toEqual([T, T + 2, T + 3]);
    expect(got.damagedRecords).toBe(1);
    expect(got.truncatedAtFrame).toBe(0);
    expect(got.notes).toEqual([
      `damaged record at byte ${offsets[1]}: its length points past the end of the input; resumed at byte ${offsets[2]}`,
    ]);
  });

  it('gives up when nothing plausible comes within 8 MiB', async () => {
    const head = withInclLen(1, 0x7fff_ffff).subarray(0, offsets[2]);
    const file = Buffer.concat([head, Buffer.alloc(9 * 1024 * 1024), pcapFile({ linkType: 1, packets }).subarray(24)]);
    const { stats: got, packets: seen } = await readBytes(file);
    expect(seen.map((p) => p.frame)).toEqual([1]);
    expect(got.notes).toEqual([
      `damaged record at byte ${offsets[1]} (captured length 2147483647 is impossible); ` +
        'no plausible record in the next 8 MiB: stopped reading there',
    ]);
  });
});

describe('pcapng', () => {
  const interfaces: PcapngInterface[] = [
    { linkType: LinkType.ETHERNET }, // 0: no if_tsresol, so µs
    { linkType: LinkType.RAW, snaplen: 65535, tsresol: 9 }, // 1: ns
    { linkType: LinkType.LINUX_SLL, tsresol: 0x80 | 30 }, // 2: 2^-30 s
    { linkType: LinkType.IPV4, tsresol: 12, tsoffset: T - 1000 }, // 3: ps (a count since 1970 would not fit 64 bits)
    { linkType: LinkType.LINUX_SLL2, tsresol: 0x80 | 9 }, // 4: 2^-9 s
  ];
  const section: Omit<PcapngSection, 'bigEndian'> = {
    interfaces,
    blocks: [
      { type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 123_456_000, data: hexBytes('01 02 03') },
      // T s + 999999999 ns = 1700000000999999999 ns: past 2^53, so not exact as a double
      { type: 'epb', interfaceId: 1, tsSec: T, tsNsec: 999_999_999, data: hexBytes('04 05 06 07 08') },
      // 3 units of 2^-30 s = 2.79 ns
      { type: 'epb', interfaceId: 2, tsSec: 0, tsNsec: 0, units: (BigInt(T) << 30n) + 3n, data: hexBytes('09') },
      { type: 'epb', interfaceId: 2, tsSec: 0, tsNsec: 0, units: (BigInt(T + 1) << 30n) + (1n << 29n), data: hexBytes('0a') },
      { type: 'epb', interfaceId: 3, tsSec: T, tsNsec: 123_456_789, data: hexBytes('0b 0c') },
      { type: 'epb', interfaceId: 4, tsSec: T, tsNsec: 500_000_000, data: hexBytes('0d') },
      { type: 'epb', interfaceId: 1, tsSec: T + 5, tsNsec: 1, data: hexBytes('0e 0f 10 11'), origLen: 1500 },
      { type: 'pb', interfaceId: 0, tsSec: T + 6, tsNsec: 7_000, data: hexBytes('12') },
    ],
  };
  const expected: RecordedPacket[] = [
    { frame: 1, tsSec: T, tsNsec: 123_456_000, linkType: 1, interfaceId: 0, capLen: 3, origLen: 3, data: '01 02 03' },
    { frame: 2, tsSec: T, tsNsec: 999_999_999, linkType: 101, interfaceId: 1, capLen: 5, origLen: 5, data: '04 05 06 07 08' },
    { frame: 3, tsSec: T, tsNsec: 2, linkType: 113, interfaceId: 2, capLen: 1, origLen: 1, data: '09' },
    { frame: 4, tsSec: T + 1, tsNsec: 500_000_000, linkType: 113, interfaceId: 2, capLen: 1, origLen: 1, data: '0a' },
    { frame: 5, tsSec: T, tsNsec: 123_456_789, linkType: 228, interfaceId: 3, capLen: 2, origLen: 2, data: '0b 0c' },
    { frame: 6, tsSec: T, tsNsec: 500_000_000, linkType: 276, interfaceId: 4, capLen: 1, origLen: 1, data: '0d' },
    { frame: 7, tsSec: T + 5, tsNsec: 1, linkType: 101, interfaceId: 1, capLen: 4, origLen: 1500, data: '0e 0f 10 11' },
    { frame: 8, tsSec: T + 6, tsNsec: 7_000, linkType: 1, interfaceId: 0, capLen: 1, origLen: 1, data: '12' },
  ];

  it.each(BYTE_ORDERS)('reads interfaces with their own link types and resolutions ($order)', async ({ bigEndian }) => {
    const file = pcapngFile({ sections: [{ ...section, bigEndian }] });
    const { stats: got, packets } = await readBytes(file);
    expect(packets).toEqual(expected);
    expect(got).toEqual(stats({ format: 'pcapng', packets: 8, bytes: file.length, truncatedPackets: 1 }));
  });

  it('numbers frames and interfaces on across sections of different byte orders', async () => {
    const file = pcapngFile({
      sections: [
        {
          interfaces: [{ linkType: LinkType.ETHERNET }],
          blocks: [
            { type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 1_000, data: hexBytes('a1') },
            { type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 2_000, data: hexBytes('a2') },
          ],
        },
        {
          bigEndian: true,
          interfaces: [{ linkType: LinkType.RAW, tsresol: 9 }],
          blocks: [
            { type: 'epb', interfaceId: 0, tsSec: T + 1, tsNsec: 3, data: hexBytes('b1 b2') },
            { type: 'spb', data: hexBytes('b3') },
          ],
        },
      ],
    });
    const { stats: got, packets } = await readBytes(file);
    expect(packets).toEqual([
      { frame: 1, tsSec: T, tsNsec: 1_000, linkType: 1, interfaceId: 0, capLen: 1, origLen: 1, data: 'a1' },
      { frame: 2, tsSec: T, tsNsec: 2_000, linkType: 1, interfaceId: 0, capLen: 1, origLen: 1, data: 'a2' },
      { frame: 3, tsSec: T + 1, tsNsec: 3, linkType: 101, interfaceId: 1, capLen: 2, origLen: 2, data: 'b1 b2' },
      { frame: 4, tsSec: T + 1, tsNsec: 3, linkType: 101, interfaceId: 1, capLen: 1, origLen: 1, data: 'b3' },
    ]);
    expect(got.packets).toBe(4);
  });

  describe.each(BYTE_ORDERS)('simple packet blocks ($order)', ({ bigEndian }) => {
    it('take interface 0, the previous timestamp, and a length cut to snaplen and block', async () => {
      const file = pcapngFile({
        sections: [
          {
            bigEndian,
            interfaces: [{ linkType: LinkType.ETHERNET, snaplen: 8, tsresol: 9 }],
            blocks: [
              { type: 'spb', data: hexBytes('01 02') }, // before any timestamp: 0
              { type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 42, data: hexBytes('03') },
              { type: 'spb', data: hexBytes('11 12 13 14 15 16 17 18'), origLen: 1514 }, // snaplen 8
              { type: 'spb', data: hexBytes('21 22 23 24 25'), origLen: 5 }, // padded to 8; 5 captured
              { type: 'spb', data: hexBytes('31 32 33 34'), origLen: 60 }, // block holds 4 of 60
            ],
          },
        ],
      });
      const { stats: got, packets } = await readBytes(file);
      expect(packets.map((p) => [p.frame, p.tsSec, p.tsNsec, p.capLen, p.origLen, p.data])).toEqual([
        [1, 0, 0, 2, 2, '01 02'],
        [2, T, 42, 1, 1, '03'],
        [3, T, 42, 8, 1514, '11 12 13 14 15 16 17 18'],
        [4, T, 42, 5, 5, '21 22 23 24 25'],
        [5, T, 42, 4, 60, '31 32 33 34'],
      ]);
      expect(got.truncatedPackets).toBe(2);
    });
  });

  it('skips and counts blocks that are not packets', async () => {
    const file = pcapngFile({
      sections: [
        {
          interfaces: [{ linkType: LinkType.ETHERNET }],
          blocks: [
            { type: 'raw', blockType: 4, body: hexBytes('00 00 00 00') }, // name resolution: end of records
            { type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 0, data: hexBytes('aa') },
            { type: 'raw', blockType: 5, body: Buffer.alloc(12) }, // interface statistics
            { type: 'raw', blockType: 0x1234_5678, body: hexBytes('01 02 03') }, // unknown
            { type: 'raw', blockType: 0xbad, body: Buffer.alloc(8) }, // custom
            { type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 1000, data: hexBytes('bb') },
          ],
        },
      ],
    });
    const { stats: got, packets } = await readBytes(file);
    expect(packets.map((p) => p.data)).toEqual(['aa', 'bb']);
    expect(got.skippedBlocks).toBe(4);
    expect(got.damagedRecords).toBe(0);
  });
});

describe('damaged pcapng', () => {
  const layout = {
    sections: [
      {
        interfaces: [{ linkType: LinkType.ETHERNET }],
        blocks: [1, 2, 3].map((i) => ({ type: 'epb' as const, interfaceId: 0, tsSec: T + i, tsNsec: 0, data: Buffer.alloc(10 + i, i) })),
      },
    ],
  };
  // SHB (28 bytes), IDB (20), then the three EPBs (44, 44 and 48 bytes)
  const [first, second, third] = [48, 92, 136];

  it('lays the blocks out where the cases below expect them', () => {
    expect(pcapngBlockOffsets(layout)).toEqual([0, 28, first, second, third]);
  });
  const pristine = pcapngFile(layout);

  function damaged(edit: (file: Buffer) => void): Buffer {
    const file = Buffer.from(pristine);
    edit(file);
    return file;
  }

  const cases = [
    {
      name: 'a total length that is no multiple of 4',
      file: damaged((f) => f.writeUInt32LE(45, second + 4)),
      note: `damaged enhanced packet block at byte ${second} (block length 45); skipped ${third - second} bytes to the next plausible block at byte ${third}`,
    },
    {
      name: 'a total length under 12',
      file: damaged((f) => f.writeUInt32LE(8, second + 4)),
      note: `damaged enhanced packet block at byte ${second} (block length 8); skipped ${third - second} bytes to the next plausible block at byte ${third}`,
    },
    {
      name: 'an absurd total length',
      file: damaged((f) => f.writeUInt32LE(0xffff_fff0, second + 4)),
      note: `damaged enhanced packet block at byte ${second} (block length 4294967280); skipped ${third - second} bytes to the next plausible block at byte ${third}`,
    },
    {
      name: 'a trailing length that does not match',
      file: damaged((f) => f.writeUInt32LE(40, third - 4)),
      note: `damaged enhanced packet block at byte ${second} (block length 44 but trailing length 40); skipped ${third - second} bytes to the next plausible block at byte ${third}`,
    },
    {
      name: 'a total length past the end of the input',
      file: damaged((f) => f.writeUInt32LE(0x0010_0000, second + 4)),
      note: `damaged enhanced packet block at byte ${second}: its length points past the end of the input; resumed at byte ${third}`,
    },
  ];

  it.each(cases)('resynchronises after $name', async ({ file, note }) => {
    const { stats: got, packets } = await readBytes(file);
    expect(packets.map((p) => [p.frame, p.tsSec])).toEqual([
      [1, T + 1],
      [2, T + 3],
    ]);
    expect(got.damagedRecords).toBe(1);
    expect(got.truncatedAtFrame).toBe(0);
    expect(got.notes).toEqual([note]);
  });

  it.each([
    { name: 'an unknown interface', offset: 8, value: 7, why: 'unknown interface 7' },
    { name: 'a captured length larger than the block', offset: 20, value: 13, why: 'captured length 13 does not fit in the block' },
  ])('skips a packet block with $name without losing the blocks after it', async ({ offset, value, why }) => {
    const file = damaged((f) => f.writeUInt32LE(value, second + offset));
    const { stats: got, packets } = await readBytes(file);
    expect(packets.map((p) => p.tsSec)).toEqual([T + 1, T + 3]);
    expect(got.damagedRecords).toBe(1);
    expect(got.notes).toEqual([`damaged enhanced packet block at byte ${second} (${why}): skipped`]);
  });

  it('stops inside a truncated last block with a note', async () => {
    const cut = pristine.subarray(0, third + 20);
    const { stats: got, packets } = await readBytes(cut);
    expect(packets.map((p) => p.frame)).toEqual([1, 2]);
    expect(got).toEqual(
      stats({
        format: 'pcapng',
        packets: 2,
        bytes: cut.length,
        truncatedAtFrame: 3,
        notes: [`the input ends inside the enhanced packet block at byte ${third} (20 of its 48 bytes present)`],
      }),
    );
  });

  it('does not let a 2 GiB length claim allocate anything', async () => {
    const file = damaged((f) => f.writeUInt32LE(0x8000_0000, first + 4));
    const { stats: got, packets } = await readBytes(file, 7);
    expect(packets.map((p) => p.tsSec)).toEqual([T + 2, T + 3]);
    expect(got.damagedRecords).toBe(1);
  });
});

describe('gzip', () => {
  const pcapPackets: PcapPacket[] = [1, 2, 3].map((i) => ({ tsSec: T + i, data: Buffer.alloc(300, i) }));
  const pcap = pcapFile({ linkType: 1, packets: pcapPackets });
  const pcapng = pcapngFile({
    sections: [
      {
        interfaces: [{ linkType: LinkType.RAW, tsresol: 9 }],
        blocks: [{ type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 5, data: hexBytes('45 00') }],
      },
    ],
  });

  it('is recognised by its magic whatever the file is called (pcap)', async () => {
    const path = tmpFile('capture.txt', gzip(pcap));
    const { stats: got, packets } = await readPath(path);
    expect(packets).toEqual((await readBytes(pcap)).packets);
    expect(got).toEqual(stats({ file: path, gzip: true, packets: 3, bytes: pcap.length }));
  });

  it('is recognised by its magic whatever the file is called (pcapng)', async () => {
    const path = tmpFile('plain.pcap', gzip(pcapng));
    const { stats: got, packets } = await readPath(path);
    expect(packets.map((p) => [p.tsSec, p.tsNsec, p.linkType, p.data])).toEqual([[T, 5, 101, '45 00']]);
    expect(got).toEqual(stats({ file: path, format: 'pcapng', gzip: true, packets: 1, bytes: pcapng.length }));
  });

  it('reads several gzip members in a row as one stream', async () => {
    const twoMembers = Buffer.concat([gzip(pcap.subarray(0, 100)), gzip(pcap.subarray(100))]);
    const { packets } = await readBytes(twoMembers, 64);
    expect(packets.map((p) => p.tsSec)).toEqual([T + 1, T + 2, T + 3]);
  });

  it('notes gzip data that ends early and reads what it holds', async () => {
    const compressed = gzip(pcap);
    const { stats: got, packets } = await readBytes(compressed.subarray(0, compressed.length - 4));
    expect(packets.length).toBe(3);
    expect(got.notes).toEqual([
      `the gzip data ends early (after ${compressed.length - 4} compressed bytes): the capture is cut short`,
    ]);
  });

  it('notes corrupt gzip data and reads what was decompressed before it', async () => {
    // 40 packets of 1,000 bytes that do not compress (xorshift32): 40 KiB of
    // deflate, fed to zlib 16 KiB at a time. zlib keeps back the output of the piece where it finds
    // the damage, so the damage at the end (the trailer's CRC-32) costs the last piece's packets.
    let x = 1;
    const next = (): number => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) & 0xff;
    };
    const noise = (): Buffer => Buffer.from(Array.from({ length: 1000 }, next));
    const big = pcapFile({ linkType: 1, packets: Array.from({ length: 40 }, (_, i) => ({ tsSec: T + i, data: noise() })) });
    const compressed = gzip(big);
    compressed[compressed.length - 8]! ^= 0xff;
    const { stats: got, packets } = await readBytes(compressed);
    expect(packets.map((p) => p.tsSec)).toEqual(Array.from({ length: 32 }, (_, i) => T + i));
    expect(got.notes).toEqual([
      `corrupt gzip data within compressed bytes 32768-${compressed.length} (incorrect data check): the capture is cut short there`,
      'the input ends inside the record at byte 32536 (557 of its 1016 bytes present)',
    ]);
    expect(got.truncatedAtFrame).toBe(33);
  });

  it('rejects gzip data corrupt before its first decompressed byte', async () => {
    const compressed = gzip(pcap);
    compressed[10]! |= 0x06; // the first deflate block's type: 3, which RFC 1951 reserves
    const message = await captureError(readCaptureStream('x.gz', chunksOf(compressed, 1 << 20), recordingSink().sink));
    expect(message).toBe(`x.gz: corrupt gzip data within compressed bytes 0-${compressed.length} (invalid block type)`);
  });
});

describe('chunk boundaries', () => {
  const damagedPcapPackets: PcapPacket[] = [0, 1, 2].map((i) => ({ tsSec: T + i, tsNsec: i, data: Buffer.alloc(30 + i, i) }));
  const damagedPcap = pcapFile({ linkType: 1, nanosecond: true, bigEndian: true, packets: damagedPcapPackets });
  damagedPcap.writeUInt32BE(0xdead_beef, pcapRecordOffsets(damagedPcapPackets)[1]! + 8);
  const twoSections = pcapngFile({
    sections: [
      {
        interfaces: [{ linkType: 1 }, { linkType: 101, tsresol: 9 }],
        blocks: [
          { type: 'epb', interfaceId: 1, tsSec: T, tsNsec: 1, data: Buffer.alloc(33, 1) },
          { type: 'raw', blockType: 5, body: Buffer.alloc(16) },
          { type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 2000, data: Buffer.alloc(7, 2) },
        ],
      },
      { bigEndian: true, interfaces: [{ linkType: 113 }], blocks: [{ type: 'spb', data: Buffer.alloc(5, 3) }] },
    ],
  });
  const files = [
    { name: 'pcap', file: pcapFile({ linkType: 1, packets: [1, 2, 3].map((i) => ({ tsSec: T, tsUsec: i, data: Buffer.alloc(50 * i, i) })) }) },
    { name: 'damaged pcap', file: damagedPcap },
    { name: 'pcapng in two sections', file: twoSections },
    { name: 'truncated pcapng', file: twoSections.subarray(0, twoSections.length - 3) },
    { name: 'gzip', file: gzip(twoSections) },
  ];

  it.each(files)('do not change what is read from $name', async ({ file }) => {
    const whole = await readBytes(file);
    expect(whole.packets.length).toBeGreaterThan(0);
    for (const size of [1, 7, 4096]) expect(await readBytes(file, size)).toEqual(whole);
  });

  it.each(files.slice(0, 4))('do not change what is read from $name, cut at any one or two points', async ({ file }) => {
    const whole = await readBytes(file);
    for (let i = 1; i < file.length; i++) {
      const { sink, packets } = recordingSink();
      const got = await readCaptureStream('test.cap', cutAt(file, i), sink);
      expect({ stats: got, packets }).toEqual(whole);
    }
    for (let i = 1; i < file.length; i += 5) {
      for (let j = i + 1; j < file.length; j += 3) {
        const { sink, packets } = recordingSink();
        const got = await readCaptureStream('test.cap', cutAt(file, i, j), sink);
        expect({ stats: got, packets }).toEqual(whole);
      }
    }
  });
});

describe('errors', () => {
  const pcap = pcapFile({ linkType: 1, packets: [{ tsSec: T, data: hexBytes('aa') }] });

  it.each([
    { name: 'not a capture', content: Buffer.from('<!DOCTYPE html>'), error: 'not a pcap or pcapng file (starts with 3c 21 44 4f)' },
    { name: 'empty', content: Buffer.alloc(0), error: 'empty file' },
    { name: 'too short', content: hexBytes('d4 c3 b2'), error: 'too short to be a capture (3 bytes: d4 c3 b2)' },
    { name: 'truncated pcap header', content: pcap.subarray(0, 12), error: 'truncated pcap file header (12 of 24 bytes)' },
    {
      name: 'truncated pcapng header',
      content: pcapngFile({ sections: [{ interfaces: [], blocks: [] }] }).subarray(0, 20),
      error: 'truncated pcapng section header (20 of 28 bytes)',
    },
    {
      name: 'cut-short pcapng header',
      content: pcapngFile({ sections: [{ interfaces: [], blocks: [] }] }).subarray(0, 8),
      error: 'truncated pcapng section header (8 of 28 bytes)',
    },
    {
      name: 'bad byte-order magic',
      content: hexBytes('0a 0d 0d 0a 1c 00 00 00 11 22 33 44 01 00 00 00 ff ff ff ff ff ff ff ff 1c 00 00 00'),
      error: 'damaged pcapng section header (byte-order magic 11 22 33 44)',
    },
    {
      name: 'unknown pcapng version',
      content: hexBytes('0a 0d 0d 0a 1c 00 00 00 4d 3c 2b 1a 02 00 00 00 ff ff ff ff ff ff ff ff 1c 00 00 00'),
      error: 'unsupported pcapng version 2.0',
    },
    { name: 'zstd', content: hexBytes('28 b5 2f fd 00 00'), error: 'zstd-compressed input is not supported: decompress it first' },
    { name: 'gzip of nothing', content: gzip(Buffer.alloc(0)), error: 'empty after gzip decompression' },
  ])('$name', async ({ content, error }) => {
    const path = tmpFile('capture.pcap', content);
    expect(await captureError(readCapture(path, recordingSink().sink))).toBe(`${path}: ${error}`);
  });

  it('a directory', async () => {
    const dir = tmpDir();
    expect(await captureError(readCapture(dir, recordingSink().sink))).toBe(`${dir}: is a directory`);
  });

  it('a missing file', async () => {
    const path = join(tmpDir(), 'nope.pcap');
    expect(await captureError(readCapture(path, recordingSink().sink))).toBe(`${path}: no such file`);
  });

  it('an unreadable file', skipUnless(process.getuid?.() !== 0, 'running as root, which reads any file: no file is unreadable'), async () => {
    const path = tmpFile('secret.pcap', pcap);
    chmodSync(path, 0o000);
    expect(await captureError(readCapture(path, recordingSink().sink))).toBe(`${path}: cannot read: permission denied`);
  });

  it('empty standard input', async () => {
    expect(await captureError(readCaptureStream('-', chunksOf(Buffer.alloc(0), 1), recordingSink().sink))).toBe('-: empty input');
  });

  it('a failing source', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield pcap.subarray(0, 30);
      throw new Error('boom\nat somewhere');
    }
    expect(await captureError(readCaptureStream('x.pcap', failing(), recordingSink().sink))).toBe('x.pcap: cannot read: boom');
  });

  it("lets the sink's own exception through unchanged", async () => {
    const boom = new Error('sink failed');
    const sink = {
      onPacket() {
        throw boom;
      },
    };
    await expect(readCaptureStream('x.pcap', chunksOf(pcap, 1 << 20), sink)).rejects.toBe(boom);
  });
});

describe('reading files', () => {
  it('reports progress up to the file size', async () => {
    const file = pcapFile({ linkType: 1, packets: [{ tsSec: T, data: Buffer.alloc(1000) }] });
    const path = tmpFile('p.pcap', file);
    const calls: [number, number | null][] = [];
    await readCapture(path, recordingSink().sink, { onProgress: (read, total) => calls.push([read, total]) });
    expect(calls.at(-1)).toEqual([file.length, file.length]);
  });

  it('reads a file larger than one chunk', async () => {
    const packets = Array.from({ length: 5000 }, (_, i) => ({ tsSec: T + i, data: Buffer.alloc(1448, i & 0xff) }));
    const file = pcapFile({ linkType: 1, packets });
    const path = tmpFile('big.pcap', file);
    let frames = 0;
    let lastTs = 0;
    let bytesOk = true;
    const got = await readCapture(path, {
      onPacket(p) {
        frames++;
        lastTs = p.tsSec;
        bytesOk &&= p.capLen === 1448 && p.data[p.offset] === ((p.frame - 1) & 0xff) && p.data[p.offset + 1447] === ((p.frame - 1) & 0xff);
      },
    });
    expect([frames, lastTs, bytesOk, got.bytes]).toEqual([5000, T + 4999, true, file.length]);
    expect((PCAP_RECORD_HEADER_LEN + 1448) * 5000 + 24).toBe(file.length);
  });
});

// Public captures from ../shared (see its MANIFEST.md); skipped when they are not there.
const SHARED = join(import.meta.dirname, '..', '..', 'shared', 'captures', 'public');

describe('public captures', skipUnless(HAVE_SHARED, NO_SHARED), () => {
  it('are the ones test/real/captures.ts names (so that without ../shared their tests are listed as skipped)', () => {
    expect(sharedCaptureFiles()).toEqual([...PUBLIC_CAPTURES].sort());
  });

  it.each([
    ['40t__go-sniffer/kafka.pcap', 'pcap', 20, [LinkType.LINUX_SLL]],
    ['arkime__arkime/kafka.pcap', 'pcap', 5, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/00-produce-v2.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/00-produce-v7-sw8.pcap', 'pcap', 9, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/00-produce-v9.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/produce-v9.pcap', 'pcap', 1, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/01-fetch-v12-ok.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/01-fetch-v12-perf.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/01-fetch-v12-unknown.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/11-join-group-v7.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/13-leave-group-v4.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/14-sync-group-v5.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/18-api-versions-v3.pcap', 'pcap', 2, [LinkType.ETHERNET]],
    ['deepflowio__deepflow/mixed-with-unsupported.pcap', 'pcap', 9, [LinkType.ETHERNET]],
    ['ntop__nDPI/kafka.pcapng', 'pcapng', 41, [LinkType.ETHERNET]],
  ])('%s: %s, %i packets', async (file, format, count, linkTypes) => {
    const path = join(SHARED, file);
    const { stats: got, packets } = await readPath(path);
    expect([got.format, got.packets, got.bytes, got.damagedRecords, got.truncatedAtFrame]).toEqual([format, count, readFileSync(path).length, 0, 0]);
    expect([...new Set(packets.map((p) => p.linkType))]).toEqual(linkTypes);
  });

  it('go-sniffer: every record has incl_len = orig_len + 16', async () => {
    const { stats: got, packets } = await readPath(join(SHARED, '40t__go-sniffer/kafka.pcap'));
    expect(packets.every((p) => p.capLen === p.origLen)).toBe(true);
    expect(got.notes[0]).toMatch(/^20 records have a captured length larger than their original length/);
  });

  it('nDPI: two interfaces, µs and ns, spanning April to December 2023', async () => {
    const { packets } = await readPath(join(SHARED, 'ntop__nDPI/kafka.pcapng'));
    expect([...new Set(packets.map((p) => p.interfaceId))].sort()).toEqual([0, 1]);
    expect(packets.filter((p) => p.interfaceId === 0).every((p) => p.tsNsec % 1000 === 0)).toBe(true);
    expect(packets.filter((p) => p.interfaceId === 1).some((p) => p.tsNsec % 1000 !== 0)).toBe(true);
    const times = packets.map((p) => new Date(p.tsSec * 1000).toISOString().slice(0, 10)).sort();
    expect([times[0], times.at(-1)]).toEqual(['2023-04-18', '2023-12-21']);
  });
});

describe('hostile input', () => {
  /** A small deterministic PRNG (mulberry32), so failures can be replayed. */
  function random(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  const pcap = pcapFile({
    linkType: 1,
    packets: Array.from({ length: 12 }, (_, i) => ({ tsSec: T + i, tsUsec: i * 7, data: Buffer.alloc(20 + i * 9, i) })),
  });
  const pcapng = pcapngFile({
    sections: [
      {
        interfaces: [{ linkType: 1 }, { linkType: 101, tsresol: 0x80 | 20, snaplen: 64 }],
        blocks: Array.from({ length: 10 }, (_, i) =>
          i % 3 === 2
            ? ({ type: 'spb', data: Buffer.alloc(10 + i, i) } as const)
            : ({ type: 'epb', interfaceId: i % 2, tsSec: T + i, tsNsec: i, data: Buffer.alloc(10 + i * 5, i) } as const),
        ),
      },
      { bigEndian: true, interfaces: [{ linkType: 113, tsresol: 9 }], blocks: [{ type: 'epb', interfaceId: 0, tsSec: T, tsNsec: 1, data: hexBytes('aa') }] },
    ],
  });

  it.each([
    { name: 'pcap', file: pcap },
    { name: 'pcapng', file: pcapng },
  ])('random damage to $name yields packets or a CaptureError, never anything else', async ({ file }) => {
    const next = random(file.length);
    for (let round = 0; round < 400; round++) {
      const damaged = Buffer.from(file);
      const edits = 1 + Math.floor(next() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(next() * damaged.length);
        damaged[at] = next() < 0.5 ? Math.floor(next() * 256) : 0xff;
      }
      const cut = next() < 0.2 ? damaged.subarray(0, Math.floor(next() * damaged.length)) : damaged;
      const chunk = next() < 0.5 ? 1 << 20 : 1 + Math.floor(next() * 40);
      try {
        const { stats: got, packets } = await readBytes(cut, chunk);
        expect(packets.length).toBe(got.packets);
        for (const p of packets) {
          expect(p.capLen).toBeLessThanOrEqual(p.origLen);
          expect(p.tsNsec).toBeGreaterThanOrEqual(0);
          expect(p.tsNsec).toBeLessThan(1e9);
        }
      } catch (err) {
        expect(err).toBeInstanceOf(CaptureError);
      }
    }
  });

  it('resynchronising over a run of tempting record headers stays linear', async () => {
    // After a damaged record, 8 MiB of sane-looking headers whose successors are never sane:
    // every one of them asks for 256 KiB of lookahead before it can be refused.
    const head = pcapFile({ linkType: 1, packets: [{ tsSec: T, data: hexBytes('aa') }] });
    head.writeUInt32LE(0xffff_ffff, 24 + 8);
    const tempting = Buffer.alloc(16);
    tempting.writeUInt32LE(T, 0);
    tempting.writeUInt32LE(0, 4);
    tempting.writeUInt32LE(262143, 8); // the next header lands 15 bytes off the pattern
    tempting.writeUInt32LE(262143, 12);
    const file = Buffer.concat([head, Buffer.alloc(9 * 1024 * 1024).fill(tempting)]);
    const { stats: got } = await readBytes(file, 1 << 20);
    expect(got.packets).toBe(0);
    expect(got.notes).toEqual([
      'damaged record at byte 24 (captured length 4294967295 is impossible); no plausible record in the next 8 MiB: stopped reading there',
    ]);
  });
});
