/**
 * A `records` field's bytes as `kcid show` lists them (https://kafka.apache.org/documentation/#recordbatch):
 * each batch's 61-byte header field by field, its CRC-32C checked, its attributes spelled out, then its
 * records: one node each for an uncompressed batch (length, attributes, deltas, key and value lengths,
 * headers), one node for a compressed batch's bytes (never decompressed here). Keys, values and header
 * values are shown only with --payload; without it their bytes are masked in the hex dump. Old message
 * sets (magic 0 and 1) are one node each. What does not parse ends the list as raw bytes with the reason:
 * a Fetch response may end with a partial batch, which is not an error of the message.
 */
import { crc32c } from './crc32c.js';
import { hexOf, type Cursor, type ShowNode } from './cursor.js';

const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
/** Records of one batch listed at most; the rest are one node. */
export const MAX_RECORDS_LISTED = 1000;

class Stop {
  constructor(readonly reason: string) {}
}

export function walkRecords(c: Cursor, path: string, start: number, end: number, parent: ShowNode): void {
  const kids = parent.children!;
  const dv = c.dv();
  let p = start;
  let batches = 0;
  let records = 0;
  while (p < end) {
    const bpath = `${path}.batches[${batches}]`;
    if (end - p < 17) {
      rest(c, kids, `${path}.rest`, p, end, `${end - p} bytes, too few for a batch header (a partial batch: Fetch responses may end with one)`);
      break;
    }
    const length = dv.getInt32(p + 8);
    const magic = dv.getInt8(p + 16);
    if (length < 0 || 12 + length > end - p) {
      rest(c, kids, `${path}.rest`, p, end, `batch length ${length} ${length < 0 ? 'is negative' : `overruns the records by ${12 + length - (end - p)} bytes`} (a partial batch: Fetch responses may end with one)`);
      break;
    }
    const bend = p + 12 + length;
    if (magic !== 2) {
      if (magic === 0 || magic === 1) {
        c.pos = bend;
        c.leaf(kids, bpath, p, `message set v${magic}`, `${12 + length} bytes`, { hidden: c.opts.payload === true ? undefined : 'payload', note: 'a magic 0/1 message, not listed field by field' });
        records++;
      } else {
        rest(c, kids, `${path}.rest`, p, end, `magic ${magic} is not 0, 1 or 2`);
        break;
      }
      p = bend;
      batches++;
      continue;
    }
    if (12 + length < 61) {
      rest(c, kids, `${path}.rest`, p, end, `batch length ${length} is shorter than the 49 bytes of a v2 batch header after it`);
      break;
    }
    const batch: ShowNode = { path: bpath, offset: c.rel(p), length: bend - p, type: 'record batch', value: null, children: [] };
    kids.push(batch);
    c.nodes++;
    const bk = batch.children!;
    const field = (name: string, at: number, size: number, type: string, value: string | number, note?: string): void => {
      c.pos = at + size;
      c.leaf(bk, `${bpath}.${name}`, at, type, value, note === undefined ? undefined : { note });
    };
    const attributes = dv.getInt16(p + 21);
    const codec = CODECS[attributes & 7] ?? `unknown (${attributes & 7})`;
    const crc = dv.getUint32(p + 17);
    const computed = crc32c(c.buf, p + 21, bend);
    const count = dv.getInt32(p + 57);
    field('baseOffset', p, 8, 'int64', dv.getBigInt64(p).toString());
    field('batchLength', p + 8, 4, 'int32', length);
    field('partitionLeaderEpoch', p + 12, 4, 'int32', dv.getInt32(p + 12));
    field('magic', p + 16, 1, 'int8', magic);
    field('crc', p + 17, 4, 'uint32', `0x${crc.toString(16).padStart(8, '0')}`, crc === computed ? 'CRC-32C correct' : `CRC-32C wrong: the bytes give 0x${computed.toString(16).padStart(8, '0')}`);
    const flags = [`compression ${codec}`, `timestamp ${attributes & 8 ? 'LogAppendTime' : 'CreateTime'}`];
    if (attributes & 16) flags.push('transactional');
    if (attributes & 32) flags.push('control');
    if (attributes & 64) flags.push('delete horizon');
    field('attributes', p + 21, 2, 'int16', attributes, flags.join(', '));
    field('lastOffsetDelta', p + 23, 4, 'int32', dv.getInt32(p + 23));
    field('baseTimestamp', p + 27, 8, 'int64', dv.getBigInt64(p + 27).toString());
    field('maxTimestamp', p + 35, 8, 'int64', dv.getBigInt64(p + 35).toString());
    field('producerId', p + 43, 8, 'int64', dv.getBigInt64(p + 43).toString());
    field('producerEpoch', p + 51, 2, 'int16', dv.getInt16(p + 51));
    field('baseSequence', p + 53, 4, 'int32', dv.getInt32(p + 53));
    field('recordCount', p + 57, 4, 'int32', count);
    const rpath = `${bpath}.records`;
    if ((attributes & 7) !== 0) {
      c.pos = bend;
      c.leaf(bk, rpath, p + 61, 'compressed records', `${count} records, ${bend - p - 61} bytes ${codec}`, c.opts.payload === true ? undefined : { hidden: 'payload' });
      batch.value = `${count} records, ${codec}`;
    } else {
      const node: ShowNode = { path: rpath, offset: c.rel(p + 61), length: bend - p - 61, type: 'records', value: count, children: [] };
      bk.push(node);
      c.nodes++;
      const listed = walkPlainRecords(c, rpath, p + 61, bend, count, node.children!);
      node.value = listed.note;
      batch.value = `${count} records, uncompressed`;
    }
    records += Math.max(0, count);
    p = bend;
    batches++;
  }
  c.pos = end;
  parent.value = `${end - start} bytes, ${batches} batch${batches === 1 ? '' : 'es'}, ${records} record${records === 1 ? '' : 's'}`;
}

function rest(c: Cursor, out: ShowNode[], path: string, from: number, to: number, note: string): void {
  c.pos = to;
  c.leaf(out, path, from, 'raw', hexOf(c.buf, from, to, 32), { note, ...(c.opts.payload === true ? {} : { hidden: 'payload' as const }) });
}

/** The records of an uncompressed v2 batch in buf[from, to). */
function walkPlainRecords(c: Cursor, path: string, from: number, to: number, count: number, out: ShowNode[]): { note: string } {
  // The records' count and smallest and largest sizes (never an array spread: a batch may hold millions).
  let listed = 0;
  let min = Infinity;
  let max = 0;
  let p = from;
  let i = 0;
  let reason: string | null = null;
  for (; i < count && p < to; i++) {
    const rec = `${path}[${i}]`;
    const at = p;
    const scratch: ShowNode[] = [];
    const list = i < MAX_RECORDS_LISTED ? out : scratch;
    try {
      p = walkRecord(c, rec, p, to, list);
      listed++;
      min = Math.min(min, p - at);
      max = Math.max(max, p - at);
    } catch (e) {
      if (!(e instanceof Stop)) throw e;
      // What was listed of the record that failed goes; its bytes are in the raw rest.
      while (list.length > 0 && list[list.length - 1]!.offset >= c.rel(at)) list.pop();
      reason = `record ${i}: ${e.reason}`;
      p = at;
      break;
    }
  }
  if (i > MAX_RECORDS_LISTED && reason === null) {
    const firstUnlisted = out.length > 0 ? out[out.length - 1]!.offset + out[out.length - 1]!.length : c.rel(from);
    if (c.rel(p) > firstUnlisted) {
      c.pos = p;
      c.leaf(out, `${path}[${MAX_RECORDS_LISTED}..${i - 1}]`, c.base + firstUnlisted, 'records', `${i - MAX_RECORDS_LISTED} more records, not listed`, c.opts.payload === true ? undefined : { hidden: 'payload' });
    }
  }
  if (reason === null && i < count) reason = `the batch ends after ${i} of its ${count} records`;
  if (reason === null && p < to) reason = `${to - p} bytes after the batch's ${count} records`;
  if (p < to) rest(c, out, `${path}.rest`, p, to, reason ?? 'not records');
  return { note: `${listed} record${listed === 1 ? '' : 's'}${listed > 0 ? `, ${min === max ? `${min}` : `${min}-${max}`} bytes each` : ''}${reason === null ? '' : `; ${reason}`}` };
}

function varint(c: Cursor, p: number, to: number): [number, number] {
  let v = 0;
  for (let shift = 0, i = 0; shift <= 28; shift += 7, i++) {
    if (p + i >= to) throw new Stop('a varint runs past the batch');
    const b = c.buf[p + i]!;
    v |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [(v >>> 1) ^ -(v & 1), p + i + 1];
  }
  throw new Stop('a varint is longer than 5 bytes');
}

function varlong(c: Cursor, p: number, to: number): [bigint, number] {
  let v = 0n;
  for (let shift = 0n, i = 0; shift <= 63n; shift += 7n, i++) {
    if (p + i >= to) throw new Stop('a varlong runs past the batch');
    const b = c.buf[p + i]!;
    v |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [BigInt.asIntN(64, (v >> 1n) ^ -(v & 1n)), p + i + 1];
  }
  throw new Stop('a varlong is longer than 10 bytes');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function payloadText(c: Cursor, from: number, to: number): string {
  try {
    const s = utf8.decode(c.buf.subarray(from, Math.min(to, from + 256)));
    return to - from > 256 ? `${s}…` : s;
  } catch {
    return `0x${hexOf(c.buf, from, to)}`;
  }
}

/**
 * One record (length varint, attributes int8, timestampDelta varlong, offsetDelta varint, key, value,
 * headers): its nodes appended to `out`; returns where it ends. Throws Stop when it does not parse.
 */
function walkRecord(c: Cursor, path: string, from: number, to: number, out: ShowNode[]): number {
  const [length, bodyAt] = varint(c, from, to);
  if (length < 0 || bodyAt + length > to) throw new Stop(`length ${length} ${length < 0 ? 'is negative' : `overruns the batch by ${bodyAt + length - to} bytes`}`);
  const end = bodyAt + length;
  const node: ShowNode = { path, offset: c.rel(from), length: end - from, type: 'record', value: null, children: [] };
  out.push(node);
  c.nodes++;
  const kids = node.children!;
  const put = (name: string, at: number, next: number, type: string, value: string | number | null, extra?: Partial<ShowNode>): number => {
    c.pos = next;
    c.leaf(kids, `${path}.${name}`, at, type, value, extra);
    return next;
  };
  let p = put('length', from, bodyAt, 'varint', length);
  if (p >= end) throw new Stop('no attributes byte');
  p = put('attributes', p, p + 1, 'int8', c.buf[p]!);
  const [ts, a] = varlong(c, p, end);
  p = put('timestampDelta', p, a, 'varlong', ts.toString());
  const [od, b] = varint(c, p, end);
  p = put('offsetDelta', p, b, 'varint', od);
  const lengths: string[] = [];
  const blob = (name: string): void => {
    const [n, q] = varint(c, p, end);
    if (n < -1 || q + Math.max(n, 0) > end) throw new Stop(`${name} length ${n} ${n < -1 ? 'is negative' : `overruns the record by ${q + n - end} bytes`}`);
    p = put(`${name}Length`, p, q, 'varint', n);
    lengths.push(`${name} ${n < 0 ? 'null' : `${n} bytes`}`);
    if (n > 0) p = put(name, q, q + n, 'bytes', c.opts.payload === true ? payloadText(c, q, q + n) : `${n} bytes`, c.opts.payload === true ? undefined : { hidden: 'payload' });
  };
  blob('key');
  blob('value');
  const [hc, r] = varint(c, p, end);
  if (hc < 0 || hc > end - r) throw new Stop(`header count ${hc} is ${hc < 0 ? 'negative' : 'larger than the bytes left'}`);
  p = put('headerCount', p, r, 'varint', hc);
  for (let h = 0; h < hc; h++) {
    const hpath = `${path}.headers[${h}]`;
    const hat = p;
    const hnode: ShowNode = { path: hpath, offset: c.rel(p), length: 0, type: 'header', value: null, children: [] };
    kids.push(hnode);
    c.nodes++;
    const [kn, k] = varint(c, p, end);
    if (kn < 0 || k + kn > end) throw new Stop(`header ${h}: key length ${kn} does not fit the record`);
    c.pos = k;
    c.leaf(hnode.children!, `${hpath}.keyLength`, p, 'varint', kn);
    c.pos = k + kn;
    const key = new TextDecoder().decode(c.buf.subarray(k, k + kn));
    c.leaf(hnode.children!, `${hpath}.key`, k, 'string', key);
    p = k + kn;
    const [vn, v] = varint(c, p, end);
    if (vn < -1 || v + Math.max(vn, 0) > end) throw new Stop(`header ${h}: value length ${vn} does not fit the record`);
    c.pos = v;
    c.leaf(hnode.children!, `${hpath}.valueLength`, p, 'varint', vn);
    p = v;
    if (vn > 0) {
      c.pos = v + vn;
      c.leaf(hnode.children!, `${hpath}.value`, v, 'bytes', c.opts.payload === true ? payloadText(c, v, v + vn) : `${vn} bytes`, c.opts.payload === true ? undefined : { hidden: 'payload' });
      p = v + vn;
    }
    hnode.length = p - hat;
    hnode.value = key;
  }
  if (p !== end) throw new Stop(`${end - p} bytes after its headers`);
  node.value = `${length + (bodyAt - from)} bytes, ${lengths.join(', ')}`;
  return end;
}
