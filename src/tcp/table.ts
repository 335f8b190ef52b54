/**
 * Connections by 4-tuple, looked up once per packet without building a string for IPv4:
 * each endpoint is address * 65536 + port (48 bits, an exact JS number), the smaller one keys
 * an outer Map and the larger one an inner Map. IPv6 endpoints become 17-char strings.
 */

import type { TcpSegment } from '../net/types.js';
import type { Conn, TupleKey } from './connection.js';
import type { Direction } from './types.js';

export class ConnTable {
  private readonly v4 = new Map<number, Map<number, Conn>>();
  private readonly v6 = new Map<string, Conn>();
  /** Direction of the last segment found, relative to its connection (0: from A). */
  dir: Direction = 0;
  // The last segment's endpoints, kept for keyForLast().
  private src = 0;
  private dst = 0;
  private src6 = '';
  private dst6 = '';

  find(s: TcpSegment): Conn | undefined {
    if (s.ipVersion === 4) {
      const src = endpoint4(s.data, s.srcAddrOff, s.srcPort);
      const dst = endpoint4(s.data, s.dstAddrOff, s.dstPort);
      this.src = src;
      this.dst = dst;
      this.src6 = '';
      const conn = src < dst ? this.v4.get(src)?.get(dst) : this.v4.get(dst)?.get(src);
      if (conn !== undefined) this.dir = conn.key.aNum === src ? 0 : 1;
      return conn;
    }
    const src = endpoint6(s.data, s.srcAddrOff, s.srcPort);
    const dst = endpoint6(s.data, s.dstAddrOff, s.dstPort);
    this.src6 = src;
    this.dst6 = dst;
    const conn = this.v6.get(src < dst ? src + dst : dst + src);
    if (conn !== undefined) this.dir = conn.key.a6 === src ? 0 : 1;
    return conn;
  }

  /** The key of a new connection for the segment last passed to find(). */
  keyForLast(sourceIsA: boolean): TupleKey {
    if (this.src6 === '') {
      const { src, dst } = this;
      return { lo: Math.min(src, dst), hi: Math.max(src, dst), aNum: sourceIsA ? src : dst, key6: '', a6: '' };
    }
    const { src6, dst6 } = this;
    return { lo: 0, hi: 0, aNum: 0, key6: src6 < dst6 ? src6 + dst6 : dst6 + src6, a6: sourceIsA ? src6 : dst6 };
  }

  add(conn: Conn): void {
    const { lo, hi, key6 } = conn.key;
    if (key6 !== '') {
      this.v6.set(key6, conn);
      return;
    }
    let inner = this.v4.get(lo);
    if (inner === undefined) {
      inner = new Map();
      this.v4.set(lo, inner);
    }
    inner.set(hi, conn);
  }

  /** Remove `conn` if it is still the connection registered for its 4-tuple. */
  remove(conn: Conn): void {
    const { lo, hi, key6 } = conn.key;
    if (key6 !== '') {
      if (this.v6.get(key6) === conn) this.v6.delete(key6);
      return;
    }
    const inner = this.v4.get(lo);
    if (inner?.get(hi) !== conn) return;
    inner.delete(hi);
    if (inner.size === 0) this.v4.delete(lo);
  }
}

function endpoint4(d: Buffer, off: number, port: number): number {
  return (d[off]! * 0x1000000 + ((d[off + 1]! << 16) | (d[off + 2]! << 8) | d[off + 3]!)) * 0x10000 + port;
}

function endpoint6(d: Buffer, off: number, port: number): string {
  return d.toString('latin1', off, off + 16) + String.fromCharCode(port);
}
