/**
 * Connections (and the tombstones of closed ones) by 4-tuple, looked up once per packet without allocating. IPv4 tuples live in an
 * open-addressing hash table (linear probing, deletion by backward shift, so no tombstones)
 * keyed by the two endpoints as integers, the smaller endpoint first; the hash is seeded per
 * table so that a capture cannot be crafted to make every tuple collide. IPv6 endpoints become
 * 17-char strings in a Map.
 */

import type { TcpSegment } from '../net/types.js';
import { TupleKey, type Conn, type Tombstone } from './connection.js';
import type { Direction } from './types.js';

/** A live connection, or what is left of one its peers closed. */
export type TableEntry = Conn | Tombstone;

const INITIAL_SLOTS = 1024;
/**
 * Each slot's key is kept beside the table, 5 integers a slot (hash, smaller address, larger
 * address, the two ports, 1 when side A is the smaller endpoint): a probe compares them, and a
 * hit finds the direction, in one place, without visiting the connection's key; a removal's
 * backward shift reads the home slots there too.
 */
const KEY_INTS = 5;

export class ConnTable {
  private slots: (TableEntry | null)[] = new Array<TableEntry | null>(INITIAL_SLOTS).fill(null);
  private keys = new Int32Array(INITIAL_SLOTS * KEY_INTS);
  private mask = INITIAL_SLOTS - 1;
  private count = 0;
  private readonly seed = (Math.random() * 0x100000000) | 0;
  private readonly v6 = new Map<string, TableEntry>();
  /** The IPv4 entry found last: segments come in runs on one connection. */
  private last: TableEntry | null = null;
  /** Direction of the last segment found, relative to its connection (0: from A). */
  dir: Direction = 0;
  // The last segment's endpoints, kept for keyForLast().
  private loIp = 0;
  private hiIp = 0;
  private ports = 0;
  private srcIsLo = false;
  private src6 = '';
  private dst6 = '';

  find(s: TcpSegment): TableEntry | undefined {
    if (s.ipVersion === 4) return this.find4(s);
    const src = endpoint6(s.data, s.srcAddrOff, s.srcPort);
    const dst = endpoint6(s.data, s.dstAddrOff, s.dstPort);
    this.src6 = src;
    this.dst6 = dst;
    const conn = this.v6.get(src < dst ? src + dst : dst + src);
    if (conn !== undefined) this.dir = conn.key.a6 === src ? 0 : 1;
    return conn;
  }

  private find4(s: TcpSegment): TableEntry | undefined {
    const d = s.data;
    const srcIp = int32(d, s.srcAddrOff);
    const dstIp = int32(d, s.dstAddrOff);
    const srcIsLo = srcIp < dstIp || (srcIp === dstIp && s.srcPort <= s.dstPort);
    const loIp = srcIsLo ? srcIp : dstIp;
    const hiIp = srcIsLo ? dstIp : srcIp;
    const ports = srcIsLo ? (s.srcPort << 16) | s.dstPort : (s.dstPort << 16) | s.srcPort;
    this.loIp = loIp;
    this.hiIp = hiIp;
    this.ports = ports;
    this.srcIsLo = srcIsLo;
    this.src6 = '';
    const last = this.last;
    if (last !== null) {
      const k = last.key;
      if (k.loIp === loIp && k.hiIp === hiIp && k.ports === ports) {
        this.dir = k.aIsLo === srcIsLo ? 0 : 1;
        return last;
      }
    }
    const hash = this.hash4(loIp, hiIp, ports);
    const { keys, mask } = this;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const at = i * KEY_INTS;
      if (keys[at] === hash && keys[at + 1] === loIp && keys[at + 2] === hiIp && keys[at + 3] === ports) {
        const conn = this.slots[i]!;
        if (conn === null) return undefined; // an empty slot whose zeros happened to match
        this.dir = (keys[at + 4] === 1) === srcIsLo ? 0 : 1;
        this.last = conn;
        return conn;
      }
      if (this.slots[i] === null) return undefined;
    }
  }

  /** The key of a new connection for the segment last passed to find(). */
  keyForLast(sourceIsA: boolean): TupleKey {
    if (this.src6 === '') {
      const { loIp, hiIp, ports } = this;
      const hash = this.hash4(loIp, hiIp, ports);
      return new TupleKey(loIp, hiIp, ports, sourceIsA === this.srcIsLo, hash, '', '');
    }
    const { src6, dst6 } = this;
    const key6 = src6 < dst6 ? src6 + dst6 : dst6 + src6;
    return new TupleKey(0, 0, 0, false, 0, key6, sourceIsA ? src6 : dst6);
  }

  add(conn: TableEntry): void {
    if (conn.key.key6 !== '') {
      this.v6.set(conn.key.key6, conn);
      return;
    }
    if (2 * (this.count + 1) > this.slots.length) this.grow();
    this.place(this.slots, this.keys, this.mask, conn);
    this.count++;
  }

  /** Put `next` where `entry` is: the same 4-tuple, so the same slot. */
  replace(entry: TableEntry, next: TableEntry): void {
    if (this.last === entry) this.last = next;
    const key = entry.key;
    if (key.key6 !== '') {
      if (this.v6.get(key.key6) === entry) this.v6.set(key.key6, next);
      return;
    }
    const i = this.slotOf(entry);
    if (i >= 0) this.slots[i] = next;
  }

  /** Remove `conn` if it is still the entry registered for its 4-tuple. */
  remove(conn: TableEntry): void {
    if (this.last === conn) this.last = null;
    const key = conn.key;
    if (key.key6 !== '') {
      if (this.v6.get(key.key6) === conn) this.v6.delete(key.key6);
      return;
    }
    let i = this.slotOf(conn);
    if (i < 0) return;
    const { slots, keys, mask } = this;
    // Backward shift: move later members of the probe run into the hole when their home slot
    // is not between the hole and them, so that every lookup still finds them.
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const next = slots[j]!;
      if (next === null) break;
      const home = keys[j * KEY_INTS]! & mask;
      if (((j - home) & mask) >= ((j - i) & mask)) {
        slots[i] = next;
        keys.copyWithin(i * KEY_INTS, j * KEY_INTS, (j + 1) * KEY_INTS);
        i = j;
      }
    }
    slots[i] = null;
    keys.fill(0, i * KEY_INTS, (i + 1) * KEY_INTS);
    this.count--;
  }

  /** The slot of an IPv4 entry, found by following its probe run; -1 when it is not in the table. */
  private slotOf(entry: TableEntry): number {
    const { slots, mask } = this;
    for (let i = entry.key.hash & mask; slots[i] !== null; i = (i + 1) & mask) if (slots[i] === entry) return i;
    return -1;
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Array<TableEntry | null>(old.length * 2).fill(null);
    const keys = new Int32Array(slots.length * KEY_INTS);
    const mask = slots.length - 1;
    for (const conn of old) if (conn !== null) this.place(slots, keys, mask, conn);
    this.slots = slots;
    this.keys = keys;
    this.mask = mask;
  }

  private place(slots: (TableEntry | null)[], keys: Int32Array, mask: number, conn: TableEntry): void {
    const k = conn.key;
    let i = k.hash & mask;
    while (slots[i] !== null) i = (i + 1) & mask;
    slots[i] = conn;
    const at = i * KEY_INTS;
    keys[at] = k.hash;
    keys[at + 1] = k.loIp;
    keys[at + 2] = k.hiIp;
    keys[at + 3] = k.ports;
    keys[at + 4] = k.aIsLo ? 1 : 0;
  }

  /** MurmurHash3's 32-bit mixing of the three integers, seeded. */
  private hash4(loIp: number, hiIp: number, ports: number): number {
    let h = this.seed;
    h = mix(h, loIp);
    h = mix(h, hiIp);
    h = mix(h, ports);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return (h ^ (h >>> 16)) | 0;
  }
}

function mix(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** A big-endian int32 from its bytes (without Buffer#readInt32BE's argument checks: this is per packet). */
function int32(d: Buffer, off: number): number {
  return (d[off]! << 24) | (d[off + 1]! << 16) | (d[off + 2]! << 8) | d[off + 3]!;
}

function endpoint6(d: Buffer, off: number, port: number): string {
  return d.toString('latin1', off, off + 16) + String.fromCharCode(port);
}
