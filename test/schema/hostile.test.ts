/**
 * Hostile bodies: random mutations and truncations of valid frames of every API and version, read by the
 * interpreter as whole frames and as prefixes. The only outcomes allowed are a Decoded (complete or not)
 * or a BodyError; never another exception, and never reading past the bytes given.
 */
import { describe, expect, it } from 'vitest';
import { BodyError, compileDecoder, runDecoder } from '../../src/kafka/schema/interpreter.js';
import { builtinSchemas } from '../../src/kafka/schema/registry.js';
import { randomMessage, rng } from './encoder.js';

describe('hostile bodies', () => {
  it('mutated and cut frames of every API give a Decoded or a BodyError, nothing else', () => {
    const s = builtinSchemas();
    const r = rng(1313);
    let errors = 0;
    let incomplete = 0;
    for (const api of s.apis.values()) {
      for (const m of [api.request, api.response]) {
        for (const v of [api.definedVersions.lo, api.definedVersions.hi]) {
          for (let seed = 0; seed < 6; seed++) {
            const { bytes } = randomMessage(m, v, seed * 31 + v);
            const bad = bytes.slice();
            for (let k = 0; k < 1 + Math.floor(r() * 4); k++) if (bad.length) bad[Math.floor(r() * bad.length)] = Math.floor(r() * 256);
            const end = Math.floor(r() * (bad.length + 1));
            for (const [e, frame] of [
              [bad.length, bad.length],
              [end, end],
              [end, bad.length],
            ] as const) {
              try {
                const d = runDecoder(compileDecoder(m, v)!, bad, 0, e, frame);
                expect(d.end).toBeLessThanOrEqual(e);
                if (!d.complete) incomplete++;
              } catch (x) {
                if (!(x instanceof BodyError)) throw x;
                expect(x.offset).toBeLessThanOrEqual(frame);
                errors++;
              }
            }
          }
        }
      }
    }
    // Both outcomes happen (the mutations are not all harmless).
    expect(errors).toBeGreaterThan(100);
    expect(incomplete).toBeGreaterThan(100);
  });
});
