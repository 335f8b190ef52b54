/**
 * A small deterministic PRNG (mulberry32) so that a fuzz case is reproducible from its run seed
 * and index alone: case i of seed S always draws the same numbers, whatever ran before it.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The generator for case `index` of run `seed`. */
  static forCase(seed: number, index: number): Rng {
    return new Rng(mix(mix(seed >>> 0) ^ Math.imul(index >>> 0, 0x9e3779b1)));
  }

  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return n <= 1 ? 0 : Math.floor((this.u32() / 4294967296) * n);
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  bool(p = 0.5): boolean {
    return this.u32() / 4294967296 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** Picks by weight: [[weight, value], ...]. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    let total = 0;
    for (const [w] of items) total += w;
    let x = this.int(total);
    for (const [w, v] of items) {
      if (x < w) return v;
      x -= w;
    }
    return items[items.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }
}

/** A 32-bit integer hash (lowbias32), to spread seeds. */
function mix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}
