/**
 * Structure-aware, in-process fuzz targets for the decoders an attacker reaches without a whole
 * capture (issue 26): PushTelemetry's compressed Metrics (zstd, lz4, snappy, gzip), the OTLP
 * protobuf inside, --kafka-specs folders, and key log files. Each case is built from a valid input
 * made by a real encoder and then mutated where the format keeps its sizes, lengths, offsets and
 * counts (not only at random bytes), and the decoder is called directly.
 *
 * A case fails when the decoder throws anything but its own error, returns more than its limit,
 * decodes an unmutated input wrongly, or (checked by the runner, decoders-main.ts) passes its
 * CPU-time or memory budget. Case `index` of `seed` is a pure function of the two numbers.
 */
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import snappy from 'snappyjs';
import lz4js from 'lz4js';
import { readTelemetryPayload } from '../../src/telemetry/index.js';
import { decompress } from '../../src/telemetry/codecs.js';
import { loadSchemas } from '../../src/kafka/schema/registry.js';
import { SchemaError } from '../../src/kafka/schema/model.js';
import { BodyError, compileDecoder, runDecoder } from '../../src/kafka/schema/interpreter.js';
import { KeyLog, KEYLOG_LABELS } from '../../src/tls/keylog.js';
import { CaptureError } from '../../src/capture/types.js';
import { Rng } from './rng.js';

export interface Target {
  name: string;
  /** Runs case `index` of `seed`; returns null, or why it failed. */
  run(seed: number, index: number): string | null;
}

const LIMIT = 1 << 20;
const require = createRequire(import.meta.url);
interface ZstdWasm {
  init(): Promise<void>;
  compress(b: Uint8Array, level?: number): Uint8Array;
}
let zstd: ZstdWasm | null = null;

/** Loads what targets need before the first case (libzstd's WebAssembly encoder). */
export async function prepare(): Promise<void> {
  if (zstd !== null) return;
  const z = require('@bokuweb/zstd-wasm') as ZstdWasm;
  await z.init();
  zstd = z;
}

/** Text that compresses like metrics: names and numbers. */
function sample(rng: Rng): Buffer {
  const n = rng.weighted([
    [3, rng.int(64)],
    [5, rng.int(4096)],
    [2, rng.int(200_000)],
  ]);
  const words = ['org.apache.kafka.', 'producer.', 'consumer.', 'node.', 'request.', 'latency ', 'avg ', 'total '];
  const parts: string[] = [];
  let len = 0;
  while (len < n) {
    const w = rng.bool(0.2) ? `${rng.int(100000)} ` : rng.pick(words);
    parts.push(w);
    len += w.length;
  }
  const b = Buffer.from(parts.join('').slice(0, n), 'latin1');
  if (rng.bool(0.1)) for (let i = 0; i < b.length; i++) b[i] = rng.u32() & 0xff; // incompressible
  return b;
}

/** A value to write over a size, length, offset or count field of `bytes` bytes. */
function fieldValue(rng: Rng, bytes: number, old: number): number {
  const max = bytes >= 4 ? 0xffffffff : 2 ** (8 * bytes) - 1;
  return rng.weighted([
    [2, 0],
    [2, max],
    [2, Math.floor(max / 2) + 1], // the top bit
    [3, Math.max(0, old - 1 - rng.int(4))],
    [3, Math.min(max, old + 1 + rng.int(4))],
    [2, Math.min(max, old * 2 + rng.int(1024))],
    [2, rng.u32() % (max + 1)],
  ]);
}

function writeLE(b: Buffer, at: number, bytes: number, v: number): void {
  for (let i = 0; i < bytes && at + i < b.length; i++) b[at + i] = Math.floor(v / 2 ** (8 * i)) & 0xff;
}
function readLE(b: Buffer, at: number, bytes: number): number {
  let v = 0;
  for (let i = 0; i < bytes && at + i < b.length; i++) v += b[at + i]! * 2 ** (8 * i);
  return v;
}

/** A field of a frame: where it is, how many bytes, little- or big-endian, and what it is (for the case's description). */
interface Field {
  at: number;
  bytes: number;
  be?: boolean;
  what: string;
  /** Bit-field: only these bits are rewritten. */
  mask?: number;
}

/** Byte-level damage after the structural kind: flips, cuts, duplicated spans. */
function damage(rng: Rng, b: Buffer, steps: string[]): Buffer {
  const kind = rng.weighted([
    [4, 'none'],
    [3, 'flip'],
    [2, 'cut'],
    [1, 'repeat'],
  ] as const);
  if (kind === 'flip' && b.length > 0) {
    for (let k = rng.range(1, 4); k > 0; k--) {
      const at = rng.int(b.length);
      b[at] = b[at]! ^ (1 << rng.int(8));
      steps.push(`flip byte ${at}`);
    }
  } else if (kind === 'cut' && b.length > 0) {
    const at = rng.int(b.length);
    steps.push(`cut at ${at}`);
    return b.subarray(0, at);
  } else if (kind === 'repeat' && b.length > 8) {
    const from = rng.int(b.length - 4);
    const len = rng.range(1, Math.min(64, b.length - from));
    const at = rng.int(b.length);
    steps.push(`repeat ${len} bytes of ${from} at ${at}`);
    return Buffer.concat([b.subarray(0, at), b.subarray(from, from + len), b.subarray(at)]);
  }
  return b;
}

function mutateFields(rng: Rng, b: Buffer, fields: Field[], steps: string[]): void {
  if (fields.length === 0) return;
  for (let k = rng.range(1, 3); k > 0; k--) {
    const f = rng.pick(fields);
    if (f.mask !== undefined) {
      const v = b[f.at]!;
      const nv = (v & ~f.mask) | (rng.u32() & f.mask);
      b[f.at] = nv;
      steps.push(`${f.what} bits ${v.toString(16)} -> ${nv.toString(16)}`);
      continue;
    }
    const old = f.be ? b.readUIntBE(f.at, Math.min(f.bytes, 6)) : readLE(b, f.at, f.bytes);
    const v = fieldValue(rng, f.bytes, old);
    if (f.be) for (let i = 0; i < f.bytes; i++) b[f.at + i] = Math.floor(v / 2 ** (8 * (f.bytes - 1 - i))) & 0xff;
    else writeLE(b, f.at, f.bytes, v);
    steps.push(`${f.what} ${old} -> ${v}`);
  }
}

/** The fields of a zstd frame: header, window, content size, block headers, literals and sequence-count headers. */
function zstdFields(b: Buffer): Field[] {
  const out: Field[] = [{ at: 4, bytes: 1, what: 'FHD', mask: 0xe7 }];
  let at = 5;
  const fhd = b[4] ?? 0;
  const single = (fhd >> 5) & 1;
  if (!single) out.push({ at: at++, bytes: 1, what: 'window descriptor' });
  at += [0, 1, 2, 4][fhd & 3]!;
  const fcs = fhd >> 6 === 0 ? single : 1 << (fhd >> 6);
  if (fcs > 0) out.push({ at, bytes: fcs, what: 'content size' });
  at += fcs;
  for (let last = 0; !last && at + 3 <= b.length; ) {
    const bh = readLE(b, at, 3);
    out.push({ at, bytes: 3, what: 'block header' }, { at, bytes: 1, what: 'block type and last bit', mask: 0x07 });
    last = bh & 1;
    const type = (bh >> 1) & 3;
    const size = bh >>> 3;
    const body = at + 3;
    if (type === 2 && body < b.length) {
      const b0 = b[body]!;
      out.push({ at: body, bytes: 1, what: 'literals header' }, { at: body + 1, bytes: 2, what: 'literals sizes' });
      const lbt = b0 & 3;
      const sf = (b0 >> 2) & 3;
      let hdr = 1;
      let lits = 0;
      if (lbt < 2) {
        hdr = sf === 1 ? 2 : sf === 3 ? 3 : 1;
        const lss = sf === 1 ? (b0 >> 4) + ((b[body + 1] ?? 0) << 4) : sf === 3 ? (b0 >> 4) + ((b[body + 1] ?? 0) << 4) + ((b[body + 2] ?? 0) << 12) : b0 >> 3;
        lits = lbt === 0 ? lss : 1;
      } else {
        hdr = sf < 2 ? 3 : sf === 2 ? 4 : 5;
        const v = readLE(b, body, hdr);
        lits = sf < 2 ? (v >>> 14) & 0x3ff : sf === 2 ? (v >>> 18) & 0x3fff : Math.floor(v / 2 ** 22) & 0x3ffff;
      }
      const seq = body + hdr + lits;
      if (seq < body + size) out.push({ at: seq, bytes: 1, what: 'sequence count' }, { at: seq + 1, bytes: 2, what: 'sequence count bytes' }, { at: seq + 1, bytes: 1, what: 'sequence modes' });
      if (size > 2) out.push({ at: body + size - 1, bytes: 1, what: 'sequence stream end' }, { at: body + rng0(size), bytes: 2, what: 'a sequence bit field' });
    }
    at = body + (type === 1 ? 1 : size);
  }
  return out.filter((f) => f.at + f.bytes <= b.length);
}
/** A fixed inner position (the middle) so the field list does not depend on the case's draws. */
const rng0 = (size: number) => size >> 1;

function lz4Fields(b: Buffer): Field[] {
  const out: Field[] = [
    { at: 4, bytes: 1, what: 'FLG', mask: 0xff },
    { at: 5, bytes: 1, what: 'BD', mask: 0xff },
  ];
  const flg = b[4] ?? 0;
  let at = 6;
  if (flg & 0x08) {
    out.push({ at, bytes: 8, what: 'content size' }, { at: at + 7, bytes: 1, what: 'content size top byte' });
    at += 8;
  }
  if (flg & 0x01) at += 4;
  at += 1;
  while (at + 4 <= b.length) {
    const word = readLE(b, at, 4);
    out.push({ at, bytes: 4, what: 'block size' }, { at: at + 3, bytes: 1, what: 'block size top byte' });
    if (word === 0) break;
    const size = word & 0x7fffffff;
    const body = at + 4;
    if (!(word & 0x80000000) && size > 3 && body + size <= b.length) {
      out.push({ at: body, bytes: 1, what: 'first token' });
      const lit = b[body]! >> 4;
      if (lit < 15 && body + 1 + lit + 2 <= body + size) out.push({ at: body + 1 + lit, bytes: 2, what: 'first match offset' });
      if (lit === 15) out.push({ at: body + 1, bytes: 1, what: 'literal length extension' });
    }
    at = body + size + (flg & 0x10 ? 4 : 0);
  }
  return out.filter((f) => f.at + f.bytes <= b.length);
}

function snappyFields(b: Buffer, xerial: boolean): Field[] {
  const out: Field[] = [];
  let at = 0;
  const block = (start: number, end: number) => {
    out.push({ at: start, bytes: 1, what: 'uncompressed length varint' }, { at: start + 1, bytes: 1, what: 'uncompressed length varint byte 2' });
    let p = start;
    while (p < end && b[p]! & 0x80) p++;
    p++;
    for (let k = 0; p < end && k < 32; k++) {
      const tag = b[p]!;
      out.push({ at: p, bytes: 1, what: 'tag' });
      const type = tag & 3;
      if (type === 0) {
        const len = (tag >> 2) + 1;
        const extra = len > 60 ? len - 60 : 0;
        if (extra) out.push({ at: p + 1, bytes: extra, what: 'literal length' });
        p += 1 + extra + (extra ? readLE(b, p + 1, extra) + 1 : len);
      } else {
        const ob = type === 1 ? 1 : type === 2 ? 2 : 4;
        out.push({ at: p + 1, bytes: ob, what: 'copy offset' });
        p += 1 + ob;
      }
    }
  };
  if (xerial) {
    out.push({ at: 8, bytes: 4, be: true, what: 'xerial version' });
    at = 16;
    while (at + 4 <= b.length) {
      const n = b.readInt32BE(at);
      out.push({ at, bytes: 4, be: true, what: 'xerial block length' });
      if (n < 0 || at + 4 + n > b.length) break;
      block(at + 4, at + 4 + n);
      at += 4 + n;
    }
  } else block(0, b.length);
  return out.filter((f) => f.at + f.bytes <= b.length);
}

function gzipFields(b: Buffer): Field[] {
  return [
    { at: 3, bytes: 1, what: 'FLG', mask: 0x1f },
    { at: 8, bytes: 1, what: 'XFL' },
    { at: 10, bytes: 2, what: 'first deflate bytes' },
    { at: b.length - 8, bytes: 4, what: 'CRC32' },
    { at: b.length - 4, bytes: 4, what: 'ISIZE' },
  ].filter((f) => f.at >= 0 && f.at + f.bytes <= b.length);
}

function xerialOf(raw: Uint8Array, blockSize: number): Buffer {
  const parts: Buffer[] = [Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1])];
  for (let at = 0; at < raw.length || at === 0; at += blockSize) {
    const block = snappy.compress(raw.subarray(at, at + blockSize));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length);
    parts.push(len, Buffer.from(block));
    if (raw.length === 0) break;
  }
  return Buffer.concat(parts);
}

/** The zstd frame of test/telemetry/hostile.ts's zstdSequenceBomb, with the counts drawn. */
function zstdSequences(rng: Rng, steps: string[]): Buffer {
  const blocks = rng.range(1, 40);
  const n = rng.range(128, 0x7f00 + 0xffff);
  const ml = rng.pick([31, 52, rng.int(53)]);
  const ll = rng.pick([0, 15, rng.int(36)]);
  const of = rng.pick([0, 1, 2, rng.int(32)]);
  steps.push(`sequences: ${blocks} blocks of ${n}, codes ll ${ll} of ${of} ml ${ml}`);
  const count = n < 0x7f00 ? [(n >> 8) + 128, n & 0xff] : [0xff, (n - 0x7f00) & 0xff, (n - 0x7f00) >> 8];
  const body = [0x00, ...count, 0x54, ll, of, ml, 0x01];
  const out = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38, 8 << 3, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
  for (let b = 0; b < blocks; b++) {
    const h = (body.length << 3) | (2 << 1) | (b === blocks - 1 ? 1 : 0);
    out.push(h & 0xff, (h >> 8) & 0xff, h >> 16, ...body);
  }
  return Buffer.from(out);
}

/** Checks one telemetry blob: never throws, never more than the limit, the original decoded exactly. */
function checkBlob(type: number, blob: Uint8Array, raw: Uint8Array | null): string | null {
  let r;
  try {
    r = readTelemetryPayload(type, blob, LIMIT);
  } catch (e) {
    return `threw ${(e as Error).name}: ${(e as Error).message}`;
  }
  if (r.ok && r.decompressedBytes > LIMIT) return `decompressed ${r.decompressedBytes} bytes past the limit`;
  if (raw !== null) {
    // The encoder's own output decodes to exactly its input (checked through the codec alone: the bytes are not OTLP).
    let out: Uint8Array;
    try {
      out = decompress(type, blob, LIMIT);
    } catch (e) {
      return `the encoder's own output was refused: ${(e as Error).message}`;
    }
    if (!Buffer.from(out.buffer, out.byteOffset, out.length).equals(Buffer.from(raw.buffer, raw.byteOffset, raw.length))) return `the encoder's own output decoded to other bytes (${out.length} for ${raw.length})`;
  }
  return null;
}

function codecTarget(name: string, type: number, make: (rng: Rng, raw: Buffer, steps: string[]) => { blob: Buffer; fields: Field[] }): Target {
  return {
    name,
    run(seed, index) {
      const rng = Rng.forCase(seed, index);
      const steps: string[] = [];
      if (type === 4 && rng.bool(0.1)) return checkBlob(4, damage(rng, zstdSequences(rng, steps), steps), null);
      const raw = sample(rng);
      const { blob, fields } = make(rng, raw, steps);
      if (rng.bool(0.1)) return checkBlob(type, blob, raw);
      const b = Buffer.from(blob);
      if (rng.bool(0.85)) mutateFields(rng, b, fields, steps);
      return checkBlob(type, damage(rng, b, steps), null);
    },
  };
}

/** Minimal protobuf writer for OTLP MetricsData (opentelemetry-proto metrics.proto field numbers). */
const pb = {
  varint(n: number): Buffer {
    const out: number[] = [];
    while (n > 0x7f) {
      out.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
    return Buffer.from(out);
  },
  ld(field: number, body: Buffer): Buffer {
    return Buffer.concat([pb.varint((field << 3) | 2), pb.varint(body.length), body]);
  },
  fixed64(field: number, v: number): Buffer {
    const b = Buffer.alloc(9);
    b[0] = (field << 3) | 1;
    b.writeBigUInt64LE(BigInt(v), 1);
    return b;
  },
};

function otlpMessage(rng: Rng): Buffer {
  const kv = (k: string, v: string) => pb.ld(1, Buffer.concat([pb.ld(1, Buffer.from(k)), pb.ld(2, pb.ld(1, Buffer.from(v)))]));
  const point = () => Buffer.concat([kv(`k${rng.int(5)}`, 'v'), pb.fixed64(2, 1_796_090_400_000_000_000), pb.fixed64(3, 1_796_090_405_000_000_000)]);
  const metrics: Buffer[] = [];
  for (let i = rng.int(30); i > 0; i--) {
    const kind = rng.pick([5, 7, 9, 10, 11]);
    const series = Buffer.concat([...Array.from({ length: rng.int(4) }, () => pb.ld(1, point())), kind === 5 || kind === 11 ? Buffer.alloc(0) : Buffer.from([0x10, rng.int(3)])]);
    metrics.push(pb.ld(2, Buffer.concat([pb.ld(1, Buffer.from(`org.apache.kafka.m${rng.int(1000)}`)), pb.ld(kind, series)])));
  }
  const scope = pb.ld(1, Buffer.concat([pb.ld(1, Buffer.from('org.apache.kafka')), pb.ld(2, Buffer.from('4.3.0'))]));
  const resource = pb.ld(1, Buffer.concat([kv('service.name', 'x'), kv('process.pid', '1')]));
  return pb.ld(1, Buffer.concat([resource, pb.ld(2, Buffer.concat([scope, ...metrics]))]));
}

/** Every length-delimited field's length position in a protobuf message, found by walking it (nested ones too). */
function protobufLengths(b: Buffer, from: number, to: number, out: Field[], depth = 0): void {
  let at = from;
  while (at < to && out.length < 200) {
    let key = 0;
    let shift = 0;
    let p = at;
    while (p < to && b[p]! & 0x80 && shift < 28) key |= (b[p++]! & 0x7f) << shift, (shift += 7);
    if (p >= to) return;
    key |= b[p++]! << shift;
    const wire = key & 7;
    if (wire === 0) {
      while (p < to && b[p]! & 0x80) p++;
      at = p + 1;
    } else if (wire === 1) at = p + 8;
    else if (wire === 5) at = p + 4;
    else if (wire === 2) {
      const lenAt = p;
      let len = 0;
      shift = 0;
      while (p < to && b[p]! & 0x80 && shift < 28) len |= (b[p++]! & 0x7f) << shift, (shift += 7);
      if (p >= to) return;
      len |= b[p++]! << shift;
      out.push({ at: lenAt, bytes: 1, what: `length at depth ${depth}` });
      if (depth < 8) protobufLengths(b, p, Math.min(to, p + len), out, depth + 1);
      at = p + len;
    } else return;
  }
}

const otlpTarget: Target = {
  name: 'otlp',
  run(seed, index) {
    const rng = Rng.forCase(seed, index);
    const steps: string[] = [];
    let b = otlpMessage(rng);
    const kind = rng.weighted([
      [5, 'lengths'],
      [1, 'nest'],
      [1, 'repeat'],
      [1, 'none'],
    ] as const);
    if (kind === 'lengths') {
      const fields: Field[] = [];
      protobufLengths(b, 0, b.length, fields);
      mutateFields(rng, b, fields, steps);
    } else if (kind === 'nest') {
      // ResourceMetrics in field 1 nested thousands deep: protobufjs's recursion limit, or the stack.
      const depth = rng.range(10, 5000);
      steps.push(`nest ${depth}`);
      for (let i = 0; i < depth; i++) b = pb.ld(rng.bool(0.5) ? 1 : 2, b);
    } else if (kind === 'repeat') {
      const n = rng.range(2, 2000);
      steps.push(`repeat the message ${n} times`);
      b = Buffer.concat(Array.from({ length: n }, () => b));
    }
    b = damage(rng, b, steps);
    const type = rng.pick([0, 0, 0, 1, 2, 3, 4]);
    let blob: Uint8Array = b;
    if (type === 1) blob = gzipSync(b);
    else if (type === 2) blob = snappy.compress(b);
    else if (type === 3) blob = lz4js.compress(b);
    else if (type === 4) blob = zstd!.compress(b, 1);
    return checkBlob(type, blob, null);
  },
};

/** A --kafka-specs folder made of ApiVersions-like schemas with drawn tags, versions, struct references and links. */
function schemaTarget(): Target {
  const root = mkdtempSync(join(tmpdir(), 'kcid-fuzz-specs-'));
  process.on('exit', () => rmSync(root, { recursive: true, force: true }));
  return {
    name: 'schemas',
    run(seed, index) {
      const rng = Rng.forCase(seed, index);
      const dir = join(root, `c${index}`);
      mkdirSync(dir);
      try {
        const version = () => rng.weighted([[6, `${rng.int(5)}+`], [2, `${rng.int(3)}-${rng.int(6)}`], [1, `${rng.pick([32767, 32768, 65535, -1, 99999])}+`], [1, 'none']]);
        const tag = (): number | string => rng.weighted<number | string>([[6, rng.int(4)], [1, rng.pick([2147483647, 2147483640 + rng.int(8), 65535, -1])], [1, `${rng.int(3)}`]]);
        const structs = ['A', 'B', 'C'];
        const field = (i: number, depth: number): Record<string, unknown> => {
          const f: Record<string, unknown> = { name: `F${i}`, versions: version() };
          const t = rng.weighted([[5, 'prim'], [2, 'common'], [1, 'inline']] as const);
          if (t === 'prim') f.type = `${rng.bool(0.3) ? '[]' : ''}${rng.pick(['int8', 'int32', 'string', 'uuid', 'bytes', 'varint'])}`;
          else if (t === 'common') f.type = `${rng.bool(0.5) ? '[]' : ''}${rng.pick(structs)}`;
          else {
            f.type = `[]Inline${depth}`;
            f.fields = depth < 3 ? Array.from({ length: rng.int(3) }, (_, j) => field(j, depth + 1)) : [];
          }
          if (rng.bool(0.3)) {
            f.tag = tag();
            f.taggedVersions = rng.bool(0.9) ? '3+' : version();
          }
          if (rng.bool(0.1)) f.nullableVersions = version();
          return f;
        };
        const fields = Array.from({ length: rng.int(6) }, (_, i) => field(i, 0));
        const common = structs.slice(0, rng.int(4)).map((name) => ({ name, versions: '0+', fields: Array.from({ length: rng.int(3) }, (_, i) => field(i, 1)) }));
        const api = { apiKey: 18, type: 'request', name: 'ApiVersionsRequest', validVersions: rng.pick(['0-4', '0-3', '3-5', '0-32767']), flexibleVersions: '3+', fields, commonStructs: common };
        writeFileSync(join(dir, 'ApiVersionsRequest.json'), JSON.stringify(api));
        writeFileSync(join(dir, 'ApiVersionsResponse.json'), JSON.stringify({ apiKey: 18, type: 'response', name: 'ApiVersionsResponse', validVersions: '0-4', flexibleVersions: '3+', fields: [{ name: 'ErrorCode', type: 'int16', versions: '0+' }] }));
        writeFileSync(join(dir, 'RequestHeader.json'), JSON.stringify({ type: 'header', name: 'RequestHeader', validVersions: '1-2', flexibleVersions: '2+', fields: [{ name: 'RequestApiKey', type: 'int16', versions: '0+' }, { name: 'RequestApiVersion', type: 'int16', versions: '0+' }, { name: 'CorrelationId', type: 'int32', versions: '0+' }, { name: 'ClientId', type: 'string', versions: '1+', nullableVersions: '1+', flexibleVersions: 'none' }] }));
        writeFileSync(join(dir, 'ResponseHeader.json'), JSON.stringify({ type: 'header', name: 'ResponseHeader', validVersions: '0-1', flexibleVersions: '1+', fields: [{ name: 'CorrelationId', type: 'int32', versions: '0+' }] }));
        if (rng.bool(0.05)) {
          symlinkSync(join(dir, 'Y.json'), join(dir, 'X.json'));
          symlinkSync(join(dir, 'X.json'), join(dir, 'Y.json'));
        }
        let schemas;
        try {
          schemas = loadSchemas(dir);
        } catch (e) {
          if (e instanceof SchemaError) return null;
          return `loadSchemas threw ${(e as Error).name}: ${(e as Error).message}`;
        }
        // Loaded: every version decodes drawn bodies with a Decoded or a BodyError, nothing else.
        const m = schemas.apis.get(18)?.request;
        if (m === undefined) return null;
        for (let v = 0; v <= 5; v++) {
          let d;
          try {
            d = compileDecoder(m, v);
          } catch (e) {
            return `compileDecoder v${v} threw ${(e as Error).name}: ${(e as Error).message}`;
          }
          if (d == null) continue;
          for (let k = 0; k < 4; k++) {
            const body = rng.bytes(rng.int(64));
            if (rng.bool(0.5) && body.length > 2) body[body.length - 2] = rng.int(3);
            try {
              runDecoder(d, body, 0, body.length);
            } catch (e) {
              if (!(e instanceof BodyError)) return `runDecoder v${v} threw ${(e as Error).name}: ${(e as Error).message}`;
            }
          }
        }
        return null;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Key log files of drawn lines (labels, hex lengths, whitespace, line ends, long lines), read and checked against a Map of the last secrets. */
function keylogTarget(): Target {
  const root = mkdtempSync(join(tmpdir(), 'kcid-fuzz-keys-'));
  process.on('exit', () => rmSync(root, { recursive: true, force: true }));
  const path = join(root, 'keys.log');
  const hex = (rng: Rng, n: number) => rng.bytes(n).toString('hex');
  return {
    name: 'keylog',
    run(seed, index) {
      const rng = Rng.forCase(seed, index);
      const randoms = Array.from({ length: rng.range(1, 8) }, () => hex(rng, 32));
      const want = new Map<string, Map<string, string>>();
      const lines: string[] = [];
      for (let i = rng.int(200); i > 0; i--) {
        const kind = rng.weighted([[8, 'good'], [1, 'bad'], [1, 'other'], [1, 'comment'], [1, 'long']] as const);
        const random = rng.pick(randoms);
        if (kind === 'good') {
          const label = rng.pick(KEYLOG_LABELS);
          const secret = hex(rng, rng.pick([16, 32, 48, 64]));
          lines.push(`${rng.pick(['', ' ', '\t'])}${label}${rng.pick([' ', '  ', '\t'])}${rng.bool(0.3) ? random.toUpperCase() : random} ${secret}${rng.pick(['', '\r', ' '])}`);
          if (!want.has(random)) want.set(random, new Map());
          want.get(random)!.set(label, secret);
        } else if (kind === 'bad') lines.push(`${rng.pick(KEYLOG_LABELS)} ${random.slice(0, rng.int(64))} ${hex(rng, rng.int(70))}`);
        else if (kind === 'other') lines.push(`EXPORTER_SECRET ${random} ${hex(rng, 32)}`);
        else if (kind === 'comment') lines.push(`# ${'x'.repeat(rng.int(100))}`);
        else lines.push('y'.repeat(rng.pick([4095, 4096, 4097, rng.int(10_000)])));
      }
      const crlf = rng.bool(0.2);
      const text = lines.join(crlf ? '\r\n' : '\n');
      writeFileSync(path, text);
      // A line's bytes up to its \n: with CRLF, every line but the last carries its \r.
      const tooLong = lines.some((l, i) => Buffer.byteLength(l) + (crlf && i < lines.length - 1 ? 1 : 0) > 4096);
      let log: KeyLog;
      try {
        log = KeyLog.readFiles([path], rng.bool(0.5));
      } catch (e) {
        if (e instanceof CaptureError && tooLong && /longer than 4096 bytes/.test(e.message)) return null;
        return `readFiles threw ${(e as Error).name}: ${(e as Error).message}`;
      }
      if (tooLong) return 'a line over 4,096 bytes was read without an error';
      for (const random of randoms) {
        const got = log.lookup(Buffer.from(random, 'hex'));
        const expected = want.get(random);
        const a = got === undefined ? null : JSON.stringify([...got].map(([k, v]) => [k, v.toString('hex')]).sort());
        const b = expected === undefined ? null : JSON.stringify([...expected].sort());
        if (a !== b) return `lookup of ${random.slice(0, 8)}: ${a} where the lines say ${b}`;
      }
      return null;
    },
  };
}

export function targets(): Target[] {
  return [
    codecTarget('zstd', 4, (rng, raw) => {
      const blob = Buffer.from(zstd!.compress(raw, rng.pick([1, 3, 9, 19])));
      return { blob, fields: zstdFields(blob) };
    }),
    codecTarget('lz4', 3, (_rng, raw) => {
      const blob = Buffer.from(lz4js.compress(raw));
      return { blob, fields: lz4Fields(blob) };
    }),
    codecTarget('snappy', 2, (rng, raw) => {
      const framed = rng.bool(0.7);
      const blob = framed ? xerialOf(raw, rng.pick([1024, 32 * 1024])) : Buffer.from(snappy.compress(raw));
      return { blob, fields: snappyFields(blob, framed) };
    }),
    codecTarget('gzip', 1, (rng, raw) => {
      const blob = gzipSync(raw, { level: rng.pick([1, 6, 9]) });
      return { blob, fields: gzipFields(blob) };
    }),
    otlpTarget,
    schemaTarget(),
    keylogTarget(),
  ];
}
