/**
 * Mutations of a seed capture: blind ones (bit flips, byte runs, insertions, deletions,
 * truncation), record-level ones (duplicate, drop, reorder, splice in another seed's record) and
 * aimed ones that put extreme values into the length fields of every layer: pcap, pcapng, IP, TCP
 * and Kafka (frame sizes, string lengths, varint counts). Each returns new bytes and says what it did.
 */
import { layoutOf, type Field, type Layout, type Unit } from './layout.js';
import type { Rng } from './rng.js';

export interface Seed {
  name: string;
  bytes: Buffer;
  layout: Layout;
}

export function seedOf(name: string, bytes: Buffer): Seed {
  return { name, bytes, layout: layoutOf(bytes) };
}

export interface Mutant {
  bytes: Buffer;
  /** One line per mutation applied, in order. */
  steps: string[];
}

type Mutator = (b: Buffer, layout: Layout, rng: Rng, others: readonly Seed[]) => { bytes: Buffer; step: string } | null;

/** Values a length field is tested with: the boundaries of its width, and the lengths that break assumptions. */
function extremeValue(rng: Rng, width: 1 | 2 | 4, current: number): number {
  const max = width === 4 ? 0xffffffff : width === 2 ? 0xffff : 0xff;
  const half = (max + 1) / 2;
  const candidates = [0, 1, 2, 3, 4, 7, 8, half - 1, half, half + 1, max, max - 1, current + 1, current - 1, current * 2, current + 16, current ^ (1 << rng.int(width * 8))];
  if (width === 4) candidates.push(0x40000000, 0x04000000, 0x04000001, 0x00040000, 0x00080001, 0x0000ffff, 0x00010000, 0x3fffffff);
  if (width === 2) candidates.push(0x7ff0, 0x00ff, 0x0100);
  if (width === 1) candidates.push(0x0f, 0xf0, 0x45, 0x4f, 0x50, 0x60);
  const v = rng.pick(candidates) >>> 0;
  return width === 4 ? v : v & max;
}

function writeField(b: Buffer, f: Field, v: number): void {
  if (f.width === 1) b[f.at] = v;
  else if (f.width === 2) f.le ? b.writeUInt16LE(v, f.at) : b.writeUInt16BE(v, f.at);
  else f.le ? b.writeUInt32LE(v >>> 0, f.at) : b.writeUInt32BE(v >>> 0, f.at);
}

function readField(b: Buffer, f: Field): number {
  if (f.at + f.width > b.length) return 0;
  if (f.width === 1) return b[f.at]!;
  if (f.width === 2) return f.le ? b.readUInt16LE(f.at) : b.readUInt16BE(f.at);
  return f.le ? b.readUInt32LE(f.at) : b.readUInt32BE(f.at);
}

function aimAt(fields: readonly Field[]): Mutator {
  return (b, _layout, rng) => {
    const live = fields.filter((f) => f.at + f.width <= b.length);
    if (live.length === 0) return null;
    const f = rng.pick(live);
    const out = Buffer.from(b);
    const before = readField(out, f);
    const v = extremeValue(rng, f.width, before);
    writeField(out, f, v);
    return { bytes: out, step: `${f.name} at byte ${f.at}: ${before} -> ${v}` };
  };
}

const bitFlips: Mutator = (b, _l, rng) => {
  if (b.length === 0) return null;
  const out = Buffer.from(b);
  const n = rng.range(1, 8);
  const at: number[] = [];
  for (let i = 0; i < n; i++) {
    const p = rng.int(out.length);
    out[p] = out[p]! ^ (1 << rng.int(8));
    at.push(p);
  }
  return { bytes: out, step: `flipped ${n} bits at bytes ${at.join(',')}` };
};

const INTERESTING_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x1b, 0x9b, 0x0a, 0x0d];

const byteRun: Mutator = (b, _l, rng) => {
  if (b.length === 0) return null;
  const out = Buffer.from(b);
  const at = rng.int(out.length);
  const len = Math.min(out.length - at, rng.range(1, 64));
  const random = rng.bool(0.3);
  const v = rng.pick(INTERESTING_BYTES);
  for (let i = 0; i < len; i++) out[at + i] = random ? rng.u32() & 0xff : v;
  return { bytes: out, step: `overwrote ${len} bytes at ${at} with ${random ? 'random bytes' : `0x${v.toString(16)}`}` };
};

const truncate: Mutator = (b, _l, rng) => {
  const at = rng.int(b.length);
  return { bytes: Buffer.from(b.subarray(0, at)), step: `truncated at byte ${at}` };
};

const insertBytes: Mutator = (b, _l, rng) => {
  const at = rng.int(b.length + 1);
  const n = rng.range(1, 32);
  const ins = rng.bool(0.5) ? rng.bytes(n) : Buffer.alloc(n, rng.pick(INTERESTING_BYTES));
  return { bytes: Buffer.concat([b.subarray(0, at), ins, b.subarray(at)]), step: `inserted ${n} bytes at ${at}` };
};

const deleteBytes: Mutator = (b, _l, rng) => {
  if (b.length === 0) return null;
  const at = rng.int(b.length);
  const n = Math.min(b.length - at, rng.range(1, 64));
  return { bytes: Buffer.concat([b.subarray(0, at), b.subarray(at + n)]), step: `deleted ${n} bytes at ${at}` };
};

/** Units still inside `b` (mutations stack, and an earlier one may have cut the file). */
function liveUnits(b: Buffer, layout: Layout): Unit[] {
  return layout.units.filter((u) => u.end <= b.length);
}

const duplicateUnit: Mutator = (b, layout, rng) => {
  const units = liveUnits(b, layout);
  if (units.length === 0) return null;
  const u = rng.pick(units);
  const to = rng.bool(0.5) ? u.end : rng.pick(units).start;
  const copy = b.subarray(u.start, u.end);
  return { bytes: Buffer.concat([b.subarray(0, to), copy, b.subarray(to)]), step: `duplicated the unit at ${u.start} (${u.end - u.start} bytes) to ${to}` };
};

const dropUnit: Mutator = (b, layout, rng) => {
  const units = liveUnits(b, layout);
  if (units.length === 0) return null;
  const u = rng.pick(units);
  return { bytes: Buffer.concat([b.subarray(0, u.start), b.subarray(u.end)]), step: `dropped the unit at ${u.start}` };
};

const swapUnits: Mutator = (b, layout, rng) => {
  const units = liveUnits(b, layout);
  if (units.length < 2) return null;
  let i = rng.int(units.length);
  let j = rng.int(units.length);
  if (i === j) j = (i + 1) % units.length;
  if (i > j) [i, j] = [j, i];
  const a = units[i]!;
  const c = units[j]!;
  const bytes = Buffer.concat([b.subarray(0, a.start), b.subarray(c.start, c.end), b.subarray(a.end, c.start), b.subarray(a.start, a.end), b.subarray(c.end)]);
  return { bytes, step: `swapped the units at ${a.start} and ${c.start}` };
};

const reverseUnits: Mutator = (b, layout, rng) => {
  const units = liveUnits(b, layout).filter((u) => u.data >= 0);
  if (units.length < 2) return null;
  const from = rng.int(units.length - 1);
  const to = Math.min(units.length, from + rng.range(2, 16));
  const run = units.slice(from, to);
  const first = run[0]!.start;
  const last = run[run.length - 1]!.end;
  // Only contiguous runs: the units between must be exactly these.
  if (run.some((u, k) => k > 0 && u.start !== run[k - 1]!.end)) return null;
  const bytes = Buffer.concat([b.subarray(0, first), ...run.reverse().map((u) => b.subarray(u.start, u.end)), b.subarray(last)]);
  return { bytes, step: `reversed ${to - from} units from byte ${first}` };
};

/** A record of another seed of the same format inserted here: packets of foreign connections, or another link type. */
const spliceUnit: Mutator = (b, layout, rng, others) => {
  const same = others.filter((s) => s.layout.format === layout.format && s.layout.units.length > 0);
  if (same.length === 0 || layout.format === 'other') return null;
  const from = rng.pick(same);
  const u = rng.pick(from.layout.units);
  const units = liveUnits(b, layout);
  const to = units.length === 0 ? b.length : rng.pick(units).start;
  return {
    bytes: Buffer.concat([b.subarray(0, to), from.bytes.subarray(u.start, u.end), b.subarray(to)]),
    step: `spliced in the unit at ${u.start} of ${from.name} at ${to}`,
  };
};

/** Kafka-level lies inside a TCP payload: frame sizes, string lengths and varints. */
const kafkaLengths: Mutator = (b, layout, rng) => {
  const payloads = layout.payloads.filter((p) => p.at + Math.min(p.len, 16) <= b.length);
  if (payloads.length === 0) return null;
  const p = rng.pick(payloads);
  const out = Buffer.from(b);
  const kind = rng.int(5);
  if (kind === 0 && p.len >= 4) {
    const v = extremeValue(rng, 4, out.readUInt32BE(p.at));
    out.writeUInt32BE(v, p.at);
    return { bytes: out, step: `kafka frame size at ${p.at} -> ${v | 0}` };
  }
  if (kind === 1 && p.len >= 14) {
    // Request header v1+: ClientId's int16 length at offset 12 of the frame (after size, key, version, correlation id).
    const v = extremeValue(rng, 2, out.readUInt16BE(p.at + 12));
    out.writeUInt16BE(v, p.at + 12);
    return { bytes: out, step: `kafka ClientId length at ${p.at + 12} -> ${(v << 16) >> 16}` };
  }
  if (kind === 2 && p.len >= 8) {
    // API key and version: unknown keys, versions past the table, negative ones.
    const at = p.at + 4 + 2 * rng.int(2);
    const v = rng.pick([0xffff, 0x8000, 0x7fff, 0x00c8, 0x00ff, rng.int(80), 18, 71, 72, 68, 17]);
    out.writeUInt16BE(v, at);
    return { bytes: out, step: `kafka api ${at === p.at + 4 ? 'key' : 'version'} at ${at} -> ${v}` };
  }
  // A varint claiming billions (tag counts, tag sizes, compact lengths) at some offset of the payload.
  const huge = rng.pick([
    [0xff, 0xff, 0xff, 0xff, 0x0f],
    [0xff, 0xff, 0xff, 0xff, 0x7f],
    [0xff, 0xff, 0xff, 0x7f],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    [0xfe, 0xff, 0xff, 0xff, 0x07],
  ]);
  const at = p.at + rng.int(Math.max(1, Math.min(p.len, 128) - huge.length));
  for (let i = 0; i < huge.length && at + i < out.length; i++) out[at + i] = huge[i]!;
  return { bytes: out, step: `kafka varint ${huge.map((x) => x.toString(16)).join(' ')} at ${at}` };
};

const MUTATORS: readonly (readonly [number, string, (l: Layout) => Mutator])[] = [
  [14, 'bit flips', () => bitFlips],
  [8, 'byte run', () => byteRun],
  [6, 'truncate', () => truncate],
  [4, 'insert', () => insertBytes],
  [4, 'delete', () => deleteBytes],
  [5, 'duplicate unit', () => duplicateUnit],
  [3, 'drop unit', () => dropUnit],
  [4, 'swap units', () => swapUnits],
  [2, 'reverse units', () => reverseUnits],
  [3, 'splice unit', () => spliceUnit],
  [10, 'capture lengths', (l) => aimAt(l.captureFields)],
  [7, 'ip lengths', (l) => aimAt(l.ipFields)],
  [6, 'tcp fields', (l) => aimAt(l.tcpFields)],
  [14, 'kafka lengths', () => kafkaLengths],
];

/** One to four mutations of `seed`, stacked. Field positions are the seed's: later steps may aim at moved bytes, which is fine. */
export function mutate(seed: Seed, rng: Rng, others: readonly Seed[]): Mutant {
  let bytes = seed.bytes;
  const steps: string[] = [];
  const count = rng.weighted([
    [6, 1],
    [3, 2],
    [1, 3],
    [1, 4],
  ] as const);
  for (let tries = 0; steps.length < count && tries < 20; tries++) {
    const make = rng.weighted(MUTATORS.map(([w, , m]) => [w, m] as const));
    const r = make(seed.layout)(bytes, seed.layout, rng, others);
    if (r === null) continue;
    bytes = r.bytes;
    steps.push(r.step);
  }
  return { bytes, steps };
}
