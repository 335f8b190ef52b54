/**
 * A small deterministic PRNG (mulberry32) so that every generated input is the same byte for byte
 * for a given seed and size: benchmark runs compare like with like.
 */
export class Rng {
  constructor(seed) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next() {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi]. */
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p) {
    return this.next() < p;
  }

  pick(items) {
    return items[Math.floor(this.next() * items.length)];
  }

  /** `n` pseudo-random bytes. */
  bytes(n) {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i += 4) {
      const v = (this.next() * 4294967296) >>> 0;
      out[i] = v & 0xff;
      if (i + 1 < n) out[i + 1] = (v >>> 8) & 0xff;
      if (i + 2 < n) out[i + 2] = (v >>> 16) & 0xff;
      if (i + 3 < n) out[i + 3] = v >>> 24;
    }
    return out;
  }
}
