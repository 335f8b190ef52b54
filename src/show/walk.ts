/**
 * The offset-reporting walk behind `kcid show`: one Kafka message's bytes read by its schema as
 * schema/interpreter.ts reads them (the same wire rules, bounds and problem words), but slowly and
 * for display: every field becomes a {@link ShowNode} with its byte range. The interpreter is the hot
 * path and stays as it is; this walk runs once per shown message.
 *
 * The nodes of a message tile its bytes: a node's children, in order, cover its range exactly, with
 * no hole and no overlap. What is not a schema field has a lower-case name on the path, so it cannot
 * be taken for one (Kafka's field names start with a capital letter): an array's `count`, a nullable
 * struct's `present` byte, a flexible struct's `tagged` section (its `count`, then per tag its `tag`,
 * `size` and value; an unknown tag's bytes as `raw`), a records field's `length` and `batches`.
 */
import { inRange, type FieldSchema, type MessageSchema } from '../kafka/schema/model.js';
import { layoutFor } from '../kafka/schema/model.js';
import { uuidToBase64, uuidToHex } from '../kafka/uuid.js';
import { walkRecords } from './records.js';

export { Cursor, hexOf, MAX_ELEMENTS_LISTED, MAX_NODES, WalkFail, type ShowNode, type ShowValue, type WalkOptions } from './cursor.js';
import { Cursor, WalkFail, MAX_ELEMENTS_LISTED, MAX_NODES, hexOf, type ShowNode, type ShowValue } from './cursor.js';

const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

interface Ctx {
  readonly version: number;
  readonly flexible: boolean;
}

/** Walks a message's fields at `version` from c.pos: the nodes are appended to `out`. */
export function walkMessage(c: Cursor, m: MessageSchema, version: number, prefix: string, out: ShowNode[]): void {
  const layout = layoutFor(m, version);
  if (layout === null) throw new RangeError(`${m.name} has no version ${version}`);
  walkStruct(c, layout.fields, { version, flexible: inRange(layout.flexibleVersions, version) }, prefix, out, 0);
}

function join(prefix: string, name: string): string {
  return prefix === '' ? name : prefix.endsWith('.') ? prefix + name : `${prefix}.${name}`;
}

function walkStruct(c: Cursor, fields: readonly FieldSchema[], ctx: Ctx, prefix: string, out: ShowNode[], depth: number): void {
  if (depth > 64) c.fail('structs nested more than 64 deep', c.pos, prefix);
  const tagged = new Map<number, FieldSchema>();
  for (const f of fields) {
    if (!inRange(f.versions, ctx.version)) continue;
    if (ctx.flexible && f.tag !== null && inRange(f.taggedVersions, ctx.version)) {
      tagged.set(f.tag, f);
      continue;
    }
    walkField(c, f, ctx, join(prefix, f.name), out, depth);
  }
  if (ctx.flexible) walkTags(c, tagged, ctx, prefix, out, depth);
}

function walkTags(c: Cursor, tagged: Map<number, FieldSchema>, ctx: Ctx, prefix: string, out: ShowNode[], depth: number): void {
  const sectionPath = join(prefix, 'tagged');
  const start = c.pos;
  const section = c.open(out, sectionPath, start, 'tagged fields', 0);
  const kids = section.children!;
  const n = c.uvarint(start, prefix);
  if (n > c.limit - c.pos) c.fail(`tagged field count ${n} is larger than the ${c.limit - c.pos} bytes left in the frame`, start, prefix);
  c.leaf(kids, join(sectionPath, 'count'), start, 'uvarint', n);
  section.value = n;
  let last = -1;
  for (let i = 0; i < n; i++) {
    const at = c.pos;
    const tag = c.uvarint(at, prefix);
    if (tag <= last) c.fail(`tag ${tag} follows tag ${last}: tags must be in increasing order`, at, prefix);
    last = tag;
    const f = tagged.get(tag);
    const tagPath = f === undefined ? `${sectionPath}[${tag}]` : join(prefix, f.name);
    const node = c.open(kids, tagPath, at, f === undefined ? 'unknown tag' : `tag ${f.type}`, tag);
    c.leaf(node.children!, join(tagPath, 'tag'), at, 'uvarint', tag);
    const sizeAt = c.pos;
    const size = c.uvarint(sizeAt, prefix);
    c.leaf(node.children!, join(tagPath, 'size'), sizeAt, 'uvarint', size);
    const valueAt = c.pos;
    c.needLength(size, valueAt, prefix);
    const end = c.pos + size;
    if (f === undefined) {
      c.pos = end;
      c.leaf(node.children!, join(tagPath, 'raw'), valueAt, 'raw', hexOf(c.buf, valueAt, end));
      node.value = `tag ${tag}, ${size} bytes`;
      c.close(node);
      continue;
    }
    const savedAvail = c.avail;
    const savedLimit = c.limit;
    c.avail = Math.min(savedAvail, end);
    c.limit = end;
    const valueNodes: ShowNode[] = [];
    try {
      walkField(c, f, ctx, tagPath, valueNodes, depth);
      if (c.pos !== end) c.fail(`tag ${tag} has ${size} bytes, its value took ${size - (end - c.pos)}`, valueAt, tagPath);
      const v = valueNodes[0];
      if (v !== undefined) {
        (v as { path: string }).path = join(tagPath, 'value');
        node.value = v.value;
        if (v.hex !== undefined) node.hex = v.hex;
        if (v.hidden !== undefined) node.hidden = v.hidden;
      }
      node.children!.push(...valueNodes);
    } catch (e) {
      if (!(e instanceof WalkFail) || e.gap) throw e;
      const tooFew = e.problem.startsWith('needs ') || e.problem.startsWith('length ');
      const problem = tooFew ? `tag ${tag} has ${size} bytes, too few for its value` : e.problem;
      if (c.opts.lenientTags !== true) throw new WalkFail(problem, e.offset, e.at, false, e.path);
      c.pos = end;
      c.leaf(node.children!, join(tagPath, 'raw'), valueAt, 'raw', hexOf(c.buf, valueAt, end), { note: c.opts.tagProblem?.(tag, f.name, size, f) ?? problem });
      node.value = `${size} bytes`;
      node.note = c.opts.tagProblem?.(tag, f.name, size, f) ?? problem;
    } finally {
      c.avail = savedAvail;
      c.limit = savedLimit;
    }
    c.close(node);
  }
  c.close(section);
}

function compactOf(f: FieldSchema, ctx: Ctx): boolean {
  return f.flexibleVersions === undefined ? ctx.flexible : inRange(f.flexibleVersions, ctx.version);
}

/** A length on the wire (KIP-482): compact, an unsigned varint of length + 1; classic, int16 or int32. */
function wireLength(c: Cursor, compact: boolean, classic: 2 | 4, at: number, path: string): number {
  if (compact) return c.uvarint(at, path) - 1;
  c.need(classic, at, path);
  const dv = c.dv();
  const n = classic === 2 ? dv.getInt16(c.pos) : dv.getInt32(c.pos);
  c.pos += classic;
  return n;
}

function walkField(c: Cursor, f: FieldSchema, ctx: Ctx, path: string, out: ShowNode[], depth: number): void {
  const nullable = inRange(f.nullableVersions, ctx.version);
  const at = c.pos;
  if (f.isArray) {
    const compact = compactOf(f, ctx);
    const node = c.open(out, path, at, f.type, 0);
    const n = wireLength(c, compact, 4, at, path);
    if (n < 0) {
      if (n !== -1) c.fail(`array count ${n} is negative`, at, path);
      if (!nullable) c.fail(`null, but ${f.name} is not nullable in v${ctx.version}`, at, path);
      node.value = null;
      delete node.children;
      c.close(node);
      return;
    }
    if (n > c.limit - c.pos) c.fail(`array count ${n} is larger than the ${c.limit - c.pos} bytes left in the frame`, at, path);
    c.leaf(node.children!, join(path, 'count'), at, compact ? 'uvarint' : 'int32', n);
    node.value = n;
    const listed = c.nodes > MAX_NODES ? 0 : Math.min(n, MAX_ELEMENTS_LISTED);
    for (let i = 0; i < listed; i++) walkElement(c, f, ctx, `${path}[${i}]`, node.children!, depth);
    if (listed < n) {
      const restAt = c.pos;
      const scratch: ShowNode[] = [];
      const saved = c.nodes;
      for (let i = listed; i < n; i++) {
        scratch.length = 0;
        walkElement(c, f, ctx, `${path}[${i}]`, scratch, depth);
      }
      c.nodes = saved;
      c.leaf(node.children!, `${path}[${listed}..${n - 1}]`, restAt, 'elements', `${n - listed} more elements, not listed`);
    }
    c.close(node);
    return;
  }
  if (f.struct !== null) {
    if (nullable) {
      c.need(1, at, path);
      const marker = c.u8();
      if (marker >= 0x80) {
        c.leaf(out, path, at, f.type, null);
        return;
      }
      const node = c.open(out, path, at, f.type, f.struct.name);
      c.pos = at + 1;
      c.leaf(node.children!, join(path, 'present'), at, 'int8', marker);
      walkStruct(c, f.struct.fields, ctx, path, node.children!, depth + 1);
      c.close(node);
      return;
    }
    const node = c.open(out, path, at, f.type, f.struct.name);
    walkStruct(c, f.struct.fields, ctx, path, node.children!, depth + 1);
    c.close(node);
    return;
  }
  walkPrimitive(c, f, ctx, path, out);
}

function walkElement(c: Cursor, f: FieldSchema, ctx: Ctx, path: string, out: ShowNode[], depth: number): void {
  if (f.struct !== null) {
    const node = c.open(out, path, c.pos, f.struct.name, null);
    walkStruct(c, f.struct.fields, ctx, path, node.children!, depth + 1);
    c.close(node);
    return;
  }
  walkPrimitive(c, f, ctx, path, out);
}

function walkPrimitive(c: Cursor, f: FieldSchema, ctx: Ctx, path: string, out: ShowNode[]): void {
  const at = c.pos;
  const type = f.primitive!;
  const dv = c.dv();
  const nullable = inRange(f.nullableVersions, ctx.version);
  const compact = compactOf(f, ctx);
  const fixed = (n: number, read: (p: number) => ShowValue, extra?: (p: number) => Partial<ShowNode>): void => {
    c.need(n, at, path);
    c.pos += n;
    c.leaf(out, path, at, type, read(at), extra?.(at));
  };
  switch (type) {
    case 'bool':
      return fixed(1, (p) => c.buf[p] !== 0);
    case 'int8':
      return fixed(1, (p) => dv.getInt8(p));
    case 'int16':
      return fixed(2, (p) => dv.getInt16(p));
    case 'uint16':
      return fixed(2, (p) => dv.getUint16(p));
    case 'int32':
      return fixed(4, (p) => dv.getInt32(p));
    case 'uint32':
      return fixed(4, (p) => dv.getUint32(p));
    case 'int64':
      return fixed(8, (p) => dv.getBigInt64(p).toString());
    case 'float64':
      return fixed(8, (p) => dv.getFloat64(p));
    case 'uuid':
      return fixed(
        16,
        (p) => uuidToBase64(c.buf.subarray(p, p + 16)),
        (p) => ({ hex: uuidToHex(c.buf.subarray(p, p + 16)) }),
      );
    case 'varint': {
      const z = c.uvarint(at, path);
      c.leaf(out, path, at, type, (z >>> 1) ^ -(z & 1));
      return;
    }
    case 'varlong': {
      const z = c.uvarlong(at, path);
      c.leaf(out, path, at, type, BigInt.asIntN(64, (z >> 1n) ^ -(z & 1n)).toString());
      return;
    }
    case 'string': {
      const n = wireLength(c, compact, 2, at, path);
      if (n < 0) {
        if (n === -1 && nullable) {
          c.leaf(out, path, at, type, null);
          return;
        }
        c.fail(n === -1 ? `null, but ${f.name} is not nullable in v${ctx.version}` : `string length ${n} is negative`, at, path);
      }
      if (n > 0x7fff) c.fail(`string length ${n} is longer than 32767`, at, path);
      c.needLength(n, at, path);
      c.pos += n;
      c.leaf(out, path, at, type, utf8.decode(c.buf.subarray(c.pos - n, c.pos)));
      return;
    }
    case 'bytes':
    case 'records': {
      const n = wireLength(c, compact, 4, at, path);
      if (n < 0) {
        if (n === -1 && nullable) {
          c.leaf(out, path, at, type, null);
          return;
        }
        c.fail(n === -1 ? `null, but ${f.name} is not nullable in v${ctx.version}` : `length ${n} is negative`, at, path);
      }
      const lengthEnd = c.pos;
      c.needLength(n, at, path);
      if (type === 'bytes') {
        c.pos += n;
        c.leaf(out, path, at, type, `${n} bytes`, { hidden: 'secret', note: 'content not shown (bytes fields carry SASL tokens, salts, HMACs)' });
        return;
      }
      const node = c.open(out, path, at, type, `${n} bytes`);
      const end = c.pos + n;
      const save = c.pos;
      c.pos = lengthEnd;
      c.leaf(node.children!, join(path, 'length'), at, compact ? 'uvarint' : 'int32', n);
      c.pos = save;
      walkRecords(c, path, c.pos, end, node);
      c.pos = end;
      c.close(node);
      return;
    }
  }
}
